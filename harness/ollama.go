package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/models/openai"
	"github.com/mcpgranite/granite/templates"
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
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return results.ErrTimeout
	case ollama.IsMalformed(err):
		return results.ErrMalformed
	default:
		return results.ErrTransport
	}
}

// toolCallText spots a tool call the model wrote as text instead of using
// the tool-call channel: a JSON object with a name and arguments, or a
// <tool_call> tag.
var toolCallText = regexp.MustCompile(`(?s)<tool_call>|^\s*(\[\s*)?\{\s*"(name|function)"\s*:`)

func (a *ollamaAgent) run(ctx context.Context, tr *trialRun) {
	rec := tr.rec
	tools, err := a.toolsFor(tr)
	if err != nil {
		rec.ErrorClass, rec.Error, rec.StopReason = results.ErrTransport, err.Error(), results.StopError
		return
	}
	var sys strings.Builder
	if err := templates.Agent.Execute(&sys, tr.t.system()); err != nil {
		rec.ErrorClass, rec.Error, rec.StopReason = results.ErrTransport, err.Error(), results.StopError
		return
	}
	msgs := []api.Message{{Role: "system", Content: sys.String()}}
	stream := a.cfg.Streaming()
	rec.Options = options(a.cfg, a.entry)
	rec.Messages = []results.Message{{Role: "system", Content: msgs[0].Content}}
	turn := 0
	for i := range tr.prompts {
		tr.ask(i)
		msgs = append(msgs, api.Message{Role: "user", Content: tr.prompts[i]})
		var answered bool
		if msgs, answered = a.converse(ctx, tr, msgs, tools, stream, &turn); !answered {
			return
		}
	}
	tr.end(rec.Messages[len(rec.Messages)-1].Content, turn)
}

// converse runs the model on one user turn until it answers without
// calling a tool (answered) or the trial stops (the record says why).
// Within a user turn, max_agent_turns replies may call tools and one more
// may answer, so that a model calling one tool per reply can finish a
// 10-call scenario under the default of 10; turn counts replies over the
// whole trial.
func (a *ollamaAgent) converse(ctx context.Context, tr *trialRun, msgs []api.Message, tools api.Tools, stream bool, turn *int) ([]api.Message, bool) {
	rec := tr.rec
	for replies := 1; ; replies++ {
		*turn++
		rec.Turns = *turn
		req := &api.ChatRequest{Model: a.model, Messages: msgs, Tools: tools, Stream: &stream, KeepAlive: keepAlive(a.cfg), Options: rec.Options}
		r, err := a.client.Chat(ctx, req)
		rec.Durations.TotalNS += int64(r.Metrics.TotalDuration)
		rec.Durations.LoadNS += int64(r.Metrics.LoadDuration)
		rec.Durations.PromptEvalNS += int64(r.Metrics.PromptEvalDuration)
		rec.Durations.EvalNS += int64(r.Metrics.EvalDuration)
		rec.Durations.ModelWaitNS += int64(r.Wait)
		rec.PromptTokens += r.Metrics.PromptEvalCount
		rec.CompletionTokens += r.Metrics.EvalCount
		if err != nil {
			// The failure that stops the trial says why it stopped; the
			// trial's class stays its first failure in time.
			class := classify(ctx, err)
			rec.Error, rec.StopReason = err.Error(), results.StopError
			if class == results.ErrTimeout {
				rec.StopReason = results.StopTimeout
			}
			rec.Classify(class)
			return msgs, false
		}
		rec.DoneReason = r.DoneReason
		m := results.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking}
		for _, tc := range r.Message.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			m.ToolCalls = append(m.ToolCalls, results.MessageCall{Name: tc.Function.Name, Arguments: args})
		}
		rec.Messages = append(rec.Messages, m)
		msgs = append(msgs, api.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking, ToolCalls: r.Message.ToolCalls})
		if len(r.Message.ToolCalls) == 0 {
			if toolCallText.MatchString(r.Message.Content) && rec.ErrorClass == "" {
				rec.ErrorClass, rec.Error = results.ErrMalformed, "the model wrote a tool call as text instead of calling the tool"
			}
			return msgs, true
		}
		if replies > a.cfg.MaxAgentTurns {
			rec.StopReason = results.StopMaxTurns
			return msgs, false
		}
		for _, tc := range r.Message.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			c := tr.call(ctx, *turn, tc.Function.Name, args)
			rec.Messages = append(rec.Messages, results.Message{Role: "tool", ToolName: c.Tool, Content: c.Result})
			msgs = append(msgs, api.Message{Role: "tool", ToolName: c.Tool, Content: c.Result, ToolCallID: tc.ID})
		}
		if ctx.Err() != nil {
			rec.StopReason = results.StopTimeout
			rec.Classify(results.ErrTimeout)
			return msgs, false
		}
	}
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
