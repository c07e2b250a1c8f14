package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/speclang"
)

// ollamaAgent is a model served by one Ollama host.
type ollamaAgent struct {
	client *ollama.Client
	host   string
	model  string
	entry  results.ModelEntry
	cfg    *results.Config
	// tools caches the converted tools per domain and level: the same
	// server lists the same tools every trial.
	tools map[string]api.Tools
}

// options are the request options, the same for every request of a model
// so that Ollama never reloads it between trials.
func options(cfg *results.Config, e results.ModelEntry) map[string]any {
	temp, maxTokens, seed := cfg.Sampling(e)
	return map[string]any{
		"temperature": temp,
		"num_predict": maxTokens,
		"num_ctx":     cfg.NumCtx,
		"seed":        seed,
	}
}

func keepAlive(cfg *results.Config) *api.Duration {
	d, err := time.ParseDuration(cfg.KeepAlive)
	if err != nil {
		return nil // the schema admits only durations
	}
	return &api.Duration{Duration: d}
}

// classify names the error class of a failed request.
func classify(ctx context.Context, err error) results.ErrorClass {
	switch {
	case models.IsTooLong(err):
		return results.ErrMalformedReply
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return results.ErrTimeout
	case ollama.IsMalformed(err):
		return results.ErrMalformed
	default:
		return results.ErrTransport
	}
}

func (a *ollamaAgent) run(ctx context.Context, tr *trialRun) {
	tools, err := a.toolsFor(tr)
	if err != nil {
		tr.rec.ErrorClass, tr.rec.Error, tr.rec.StopReason = results.ErrTransport, err.Error(), results.StopError
		return
	}
	sys, ok := systemPrompt(tr)
	if !ok {
		return
	}
	tr.rec.Options = options(a.cfg, a.entry)
	conv := &ollamaConversation{a: a, tools: tools, stream: a.cfg.Streaming(), options: tr.rec.Options,
		msgs: []api.Message{{Role: "system", Content: sys}}}
	chatLoop(ctx, tr, conv, sys, a.cfg.MaxAgentTurns)
}

// ollamaConversation is a trial's conversation in Ollama's chat form.
type ollamaConversation struct {
	a       *ollamaAgent
	tools   api.Tools
	stream  bool
	options map[string]any
	msgs    []api.Message
}

func (c *ollamaConversation) user(text string) {
	c.msgs = append(c.msgs, api.Message{Role: "user", Content: text})
}

func (c *ollamaConversation) reply(ctx context.Context, rec *results.Record) (modelReply, error) {
	req := &api.ChatRequest{Model: c.a.model, Messages: c.msgs, Tools: c.tools, Stream: &c.stream, KeepAlive: keepAlive(c.a.cfg), Options: c.options}
	r, err := c.a.client.Chat(ctx, req)
	rec.Durations.TotalNS += int64(r.Metrics.TotalDuration)
	rec.Durations.LoadNS += int64(r.Metrics.LoadDuration)
	rec.Durations.PromptEvalNS += int64(r.Metrics.PromptEvalDuration)
	rec.Durations.EvalNS += int64(r.Metrics.EvalDuration)
	rec.Durations.ModelWaitNS += int64(r.Wait)
	rec.PromptTokens += r.Metrics.PromptEvalCount
	rec.CompletionTokens += r.Metrics.EvalCount
	if err != nil {
		return modelReply{}, err
	}
	out := modelReply{DoneReason: r.DoneReason,
		Message: results.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking}}
	sent, cloned := r.Message.ToolCalls, false
	for i, tc := range r.Message.ToolCalls {
		args, _ := json.Marshal(tc.Function.Arguments)
		out.Message.ToolCalls = append(out.Message.ToolCalls, results.MessageCall{Name: tc.Function.Name, Arguments: args})
		out.Calls = append(out.Calls, replyCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		if len(args) > results.CutBytes {
			// Sent back as the record keeps it: a model that writes
			// megabytes of arguments must not make every later request
			// carry them all.
			if !cloned {
				sent, cloned = slices.Clone(r.Message.ToolCalls), true
			}
			var cut api.ToolCallFunctionArguments
			if json.Unmarshal(results.CutArguments(args), &cut) == nil {
				sent[i].Function.Arguments = cut
			}
		}
	}
	c.msgs = append(c.msgs, api.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking, ToolCalls: sent})
	return out, nil
}

func (c *ollamaConversation) toolResult(call replyCall, res results.Call) {
	c.msgs = append(c.msgs, api.Message{Role: "tool", ToolName: res.Tool, Content: res.Result, ToolCallID: call.ID})
}

func (c *ollamaConversation) classify(ctx context.Context, err error) results.ErrorClass {
	return classify(ctx, err)
}

// toolsFor converts the trial's listed tools, once per tool set (a
// domain and level, or an artifact source).
func (a *ollamaAgent) toolsFor(tr *trialRun) (api.Tools, error) {
	key := tr.t.toolsKey()
	if t, ok := a.tools[key]; ok {
		return t, nil
	}
	t, _, err := OllamaTools(tr.tools)
	if err != nil {
		return nil, err
	}
	a.tools[key] = t
	return t, nil
}

// ollamaBackend is the Ollama kind: models a host (or hosts) serves,
// one worker per host and parallel slot, each host warmed up first.
type ollamaBackend struct{}

func (ollamaBackend) label() string { return agentOllama }

func (ollamaBackend) check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	list := notCommand(doc, m, at)
	for _, f := range []struct{ key, val string }{{"base_url", m.BaseURL}, {"api_key_env", m.APIKeyEnv}} {
		if f.val != "" {
			list = append(list, doc.Errorf(at(f.key), "found %s on an Ollama model; expected it only with backend: openai (Ollama models run on ollama.host or ollama.hosts)", f.key))
		}
	}
	return list
}

// agentOllama is Record.Agent of an Ollama model's trials.
const agentOllama = results.BackendOllama

// preflight fails fast, naming the host and the fix, when a host is down
// or lacks one of the models' tags; and warns that Ollama's tool types
// drop schema keywords the trials' tools use.
func (ollamaBackend) preflight(ctx context.Context, pf preflight, entries []results.ModelEntry) error {
	if lost := lostKeywords(pf.trials); len(lost) > 0 {
		all := map[string][]string{}
		for lv, tools := range lost {
			for t, l := range tools {
				all[lv+"/"+t] = l
			}
		}
		fmt.Fprintf(pf.opts.Progress, "warning: Ollama's tool types drop schema keywords before a model sees them (their constraints are also in the descriptions; run.json lists them per tool): %s\n", LostSummary(all))
	}
	var tags []string
	for _, m := range entries {
		if !slices.Contains(tags, m.ServedAs()) {
			tags = append(tags, m.ServedAs())
		}
	}
	return ollama.CheckHosts(ctx, pf.cfg.HostList(), tags, pf.opts.HTTP)
}

// workers warms the model up on every host, records what /api/show says
// of it, and gives each host the entry's parallel workers.
func (ollamaBackend) workers(ctx context.Context, r *runner, entry results.ModelEntry, _ []Trial) ([]worker, error) {
	var workers []worker
	model := entry.Name
	for _, h := range r.cfg.HostList() {
		c, err := ollama.New(h, r.opts.HTTP)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout()) // a load may take minutes, never forever
		load, err := c.WarmUp(wctx, entry.ServedAs(), keepAlive(r.cfg), options(r.cfg, entry))
		cancel()
		w := results.WarmUp{Model: model, Host: h, LoadS: load.Seconds(), WallS: time.Since(start).Seconds(), Config: fmt.Sprint(options(r.cfg, entry))}
		if err != nil {
			w.Error = err.Error()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("warm-up of %s on %s: %w", model, h, err)
		}
		info, err := showModel(ctx, c, entry.ServedAs())
		if err != nil {
			return nil, fmt.Errorf("/api/show of %s on %s: %w", model, h, err)
		}
		if err := r.checked(model, info, w); err != nil {
			return nil, err
		}
		for range entry.Workers() {
			workers = append(workers, worker{host: h, agent: &ollamaAgent{client: c, host: h, model: entry.ServedAs(), entry: entry, cfg: r.cfg, tools: map[string]api.Tools{}}})
		}
	}
	return workers, nil
}

// apiKey reads an entry's key from its environment variable; the key
// lives only in memory, never in a file the run writes.
func apiKey(e results.ModelEntry) string {
	if e.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(e.APIKeyEnv)
}
