package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/models/openai"
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
	key := tr.t.toolSet()
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

// checkHosts fails fast, naming the host and the fix, when a host is down
// or lacks one of the tags.
func checkHosts(ctx context.Context, hosts []string, tags []string, hc *http.Client) error {
	return ollama.CheckHosts(ctx, hosts, tags, hc)
}

// checkEndpoints is the preflight of the OpenAI-compatible models with
// trials to run: the key's environment variable is set, and GET
// {base_url}/models lists the model. Every problem is reported at once.
func checkEndpoints(ctx context.Context, cfg *results.Config, ts []Trial, hc *http.Client) error {
	var errs []error
	for _, m := range cfg.Models {
		if !m.IsOpenAI() || !slices.ContainsFunc(ts, func(t Trial) bool { return t.Model == m.Name }) {
			continue
		}
		if m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
			errs = append(errs, fmt.Errorf("model %s: api_key_env names %s, which is not set: export %s=<key> before granite run", m.Name, m.APIKeyEnv, m.APIKeyEnv))
			continue
		}
		if err := openai.New(m.BaseURL, apiKey(m), hc).Check(ctx, m.ServedAs()); err != nil {
			errs = append(errs, fmt.Errorf("model %s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// apiKey reads an entry's key from its environment variable; the key
// lives only in memory, never in a file the run writes.
func apiKey(e results.ModelEntry) string {
	if e.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(e.APIKeyEnv)
}
