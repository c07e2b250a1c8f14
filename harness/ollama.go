package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/templates"
)

// ollamaAgent is a model served by one Ollama host.
type ollamaAgent struct {
	client *api.Client
	host   string
	model  string
	cfg    *results.Config
	// tools caches the converted tools per domain and level: the same
	// server lists the same tools every trial.
	tools map[string]api.Tools
}

func newOllamaClient(host string, hc *http.Client) (*api.Client, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("ollama host %q: %w", host, err)
	}
	return api.NewClient(u, sniffingClient(hc)), nil
}

// options are the request options, the same for every request of a model
// so that Ollama never reloads it between trials.
func options(cfg *results.Config) map[string]any {
	return map[string]any{
		"temperature": cfg.Temperature,
		"num_predict": cfg.MaxTokens,
		"num_ctx":     cfg.NumCtx,
		"seed":        cfg.Seed,
	}
}

func keepAlive(cfg *results.Config) *api.Duration {
	d, err := time.ParseDuration(cfg.KeepAlive)
	if err != nil {
		return nil // the schema admits only durations
	}
	return &api.Duration{Duration: d}
}

// reply is one model reply, the chunks of a stream put together.
type reply struct {
	msg     api.Message
	metrics api.Metrics
	done    string
	wait    time.Duration
}

// chat sends one /api/chat request, retrying transport errors and 5xx with
// backoff until ctx ends. A tool call the model garbled comes back at
// once as a *malformedError: asking again would only replay the model's
// failure until the trial's deadline.
func chat(ctx context.Context, c *api.Client, req *api.ChatRequest) (*reply, error) {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		r := &reply{}
		sctx, sn := withSniff(ctx)
		err := c.Chat(sctx, req, func(resp api.ChatResponse) error {
			r.msg.Role = resp.Message.Role
			r.msg.Content += resp.Message.Content
			r.msg.Thinking += resp.Message.Thinking
			r.msg.ToolCalls = append(r.msg.ToolCalls, resp.Message.ToolCalls...)
			if resp.Done {
				r.metrics, r.done = resp.Metrics, resp.DoneReason
			}
			return nil
		})
		r.wait = time.Since(start)
		if err != nil && sn.err() != nil {
			return r, &malformedError{msg: "the model's reply is not valid Ollama JSON (tool-call arguments must be an object): " + sn.err().Error()}
		}
		if msg, ok := unparsedToolCall(err); ok {
			return r, &malformedError{msg: msg}
		}
		if err == nil || !retryable(ctx, err) {
			return r, err
		}
		backoff := time.Duration(float64(250*time.Millisecond) * float64(int(1)<<min(attempt, 4)) * (0.75 + rand.Float64()/2))
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(backoff):
		}
	}
}

// malformedError is a tool call the model garbled: Ollama could not parse
// it, or the client could not decode the reply Ollama made of it. It is
// the model's failure, not the transport's.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

// unparsedToolCall returns Ollama's message when err is Ollama's report
// that it could not parse the tool call the model wrote, "error parsing
// tool call: raw='…', err=…" (ollama/ollama issues 12884, 12064, 11704:
// https://github.com/ollama/ollama/issues/12884). Ollama sends it as an
// HTTP 500 with that error body when nothing was streamed yet or the
// request is not streamed, and as an error line of a 200 stream once
// chunks went out; the client turns the first into an api.StatusError
// and the second into a plain error. Nothing but the text tells it from
// a crashed runner, which is worth a retry, so the text is matched
// anywhere in the message and in any case.
func unparsedToolCall(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	msg := err.Error()
	var se api.StatusError
	if errors.As(err, &se) {
		msg = se.ErrorMessage // without the status Error() puts first
	}
	if strings.Contains(strings.ToLower(msg), "error parsing tool call") {
		return msg, true
	}
	return "", false
}

// retryable reports transient failures: 5xx, connections refused or cut,
// and error lines in a stream. Malformed replies and 4xx are not.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || malformed(err) {
		return false
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500
	}
	return true
}

// malformed reports a tool call the model garbled (see malformedError).
func malformed(err error) bool {
	var me *malformedError
	return errors.As(err, &me)
}

// classify names the error class of a failed request.
func classify(ctx context.Context, err error) results.ErrorClass {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return results.ErrTimeout
	case malformed(err):
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
	rec.Options = options(a.cfg)
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
		r, err := chat(ctx, a.client, req)
		rec.Durations.TotalNS += int64(r.metrics.TotalDuration)
		rec.Durations.LoadNS += int64(r.metrics.LoadDuration)
		rec.Durations.PromptEvalNS += int64(r.metrics.PromptEvalDuration)
		rec.Durations.EvalNS += int64(r.metrics.EvalDuration)
		rec.Durations.ModelWaitNS += int64(r.wait)
		rec.PromptTokens += r.metrics.PromptEvalCount
		rec.CompletionTokens += r.metrics.EvalCount
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
		rec.DoneReason = r.done
		m := results.Message{Role: "assistant", Content: r.msg.Content, Thinking: r.msg.Thinking}
		for _, tc := range r.msg.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			m.ToolCalls = append(m.ToolCalls, results.MessageCall{Name: tc.Function.Name, Arguments: args})
		}
		rec.Messages = append(rec.Messages, m)
		msgs = append(msgs, api.Message{Role: "assistant", Content: r.msg.Content, Thinking: r.msg.Thinking, ToolCalls: r.msg.ToolCalls})
		if len(r.msg.ToolCalls) == 0 {
			if toolCallText.MatchString(r.msg.Content) && rec.ErrorClass == "" {
				rec.ErrorClass, rec.Error = results.ErrMalformed, "the model wrote a tool call as text instead of calling the tool"
			}
			return msgs, true
		}
		if replies > a.cfg.MaxAgentTurns {
			rec.StopReason = results.StopMaxTurns
			return msgs, false
		}
		for _, tc := range r.msg.ToolCalls {
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

// warmUp loads the model with the trial options, so that load time never
// lands in a trial, and returns what Ollama reported.
func warmUp(ctx context.Context, c *api.Client, model string, cfg *results.Config) (time.Duration, error) {
	stream := false
	req := &api.ChatRequest{Model: model, Messages: []api.Message{}, Stream: &stream, KeepAlive: keepAlive(cfg), Options: options(cfg)}
	r, err := chat(ctx, c, req)
	if err != nil {
		return 0, err
	}
	return r.metrics.LoadDuration, nil
}

// checkHosts fails fast, naming the host and the fix, when a host is down
// or lacks a model.
func checkHosts(ctx context.Context, hosts []string, models []string, hc *http.Client) error {
	var errs []error
	for _, h := range hosts {
		c, err := newOllamaClient(h, hc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		list, err := c.List(hctx)
		cancel()
		if err != nil {
			hint := "start it with `ollama serve` (or `systemctl start ollama`), or point ollama.host / OLLAMA_HOST at a running one"
			if isRefused(err) {
				errs = append(errs, fmt.Errorf("ollama at %s refused the connection: %s", h, hint))
			} else {
				errs = append(errs, fmt.Errorf("ollama at %s is not answering (%v): %s", h, err, hint))
			}
			continue
		}
		var have []string
		for _, m := range list.Models {
			have = append(have, m.Name, m.Model)
		}
		for _, m := range models {
			if IsBuiltin(m) {
				continue
			}
			if !slices.Contains(have, m) && !slices.Contains(have, m+":latest") {
				errs = append(errs, fmt.Errorf("ollama at %s has no model %q: run `ollama pull %s` there", h, m, m))
			}
		}
	}
	return errors.Join(errs...)
}

func isRefused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial"
}
