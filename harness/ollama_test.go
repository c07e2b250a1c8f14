package harness

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/scenarios"
)

// userTurns counts the user messages of a request: which user turn of a
// multi-turn trial the model is answering.
func userTurns(req ollamatest.Request) int { return len(req.Contents("user")) }

// TestErrorClassIsFirstFailure: a trial's error_class is the failure that
// came first, whether it was a failed call (found while the trial runs),
// a tool call written as text (found when the reply comes) or a failure
// that stopped the trial; stop_reason and error say how it stopped.
func TestErrorClassIsFirstFailure(t *testing.T) {
	spec, lookup := tinySpec(t)
	dom, _ := lookup(spec.Domains[0].Name)
	arts := writeArtifacts(t, []scenarios.Artifact{multiTurn(t, spec, dom)}, nil)
	asText := ollamatest.Step{Content: `{"name": "set_lamp", "arguments": {"lamp_id":"LP02","on":true,"level":40}}`}
	unknown := ollamatest.Step{Calls: []ollamatest.Call{{Name: "switch_on_everything", Args: `{}`}}}
	cases := []struct {
		name string
		// multiTurn plays the two-turn artifact instead of tiny-002.
		multiTurn bool
		script    func(req ollamatest.Request) ollamatest.Step
		class     results.ErrorClass
		stop      results.StopReason
	}{
		{"an unknown tool, then a tool call as text", false, func(req ollamatest.Request) ollamatest.Step {
			if len(req.ToolResults()) == 0 {
				return unknown
			}
			return asText
		}, results.ErrUnknown, results.StopAnswer},
		{"a tool call as text, then an unknown tool in the next user turn", true, func(req ollamatest.Request) ollamatest.Step {
			switch {
			case userTurns(req) == 1:
				return asText
			case len(req.ToolResults()) == 0:
				return unknown
			}
			return ollamatest.Step{Content: "done"}
		}, results.ErrMalformed, results.StopAnswer},
		{"an unknown tool, then a call Ollama cannot parse", false, func(req ollamatest.Request) ollamatest.Step {
			if len(req.ToolResults()) == 0 {
				return unknown
			}
			return ollamatest.Step{Status: 500, ErrBody: "error parsing tool call: raw='{', err=unexpected end of JSON input"}
		}, results.ErrUnknown, results.StopError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ollamatest.NewServer(t, []string{"m"}, func(req ollamatest.Request, _ int) ollamatest.Step { return c.script(req) })
			cfg := testConfig("errors", f.URL, "m")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []level.Level{level.L4}
			if c.multiTurn {
				cfg = artifactConfig(arts, f.URL, "m")
			}
			cfg.AgentTimeoutSeconds = 5 // what a retried parse error would cost
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if r := recs[0]; r.ErrorClass != c.class || r.StopReason != c.stop {
				t.Errorf("error_class %q, stop_reason %q (%s); want %q, %q; calls %+v", r.ErrorClass, r.StopReason, r.Error, c.class, c.stop, r.Calls)
			}
		})
	}
}

// TestOllamaToolCallParseError: Ollama's report that it could not parse
// the model's tool call, in each form it takes on the wire, ends the trial
// at once as the model's failure, with one request for the reply; a
// crashed runner is still retried.
func TestOllamaToolCallParseError(t *testing.T) {
	spec, lookup := tinySpec(t)
	const garbled = `error parsing tool call: raw='{"lamp_id":"LP02","on":true,"level":40', err=unexpected end of JSON input`
	cases := []struct {
		name   string
		stream bool
		fail   ollamatest.Step // the first reply
		// retried: the failure is transient, the trial goes on and passes.
		retried bool
	}{
		{"an error line in the stream", true, ollamatest.Step{Content: "Switching it on.", ErrLine: garbled}, false},
		{"a 500 before the stream", true, ollamatest.Step{Status: 500, ErrBody: garbled}, false},
		{"a 500 without streaming", false, ollamatest.Step{Status: 500, ErrBody: garbled}, false},
		{"a 500 worded otherwise", true, ollamatest.Step{Status: 500, ErrBody: "llm: Error Parsing Tool Call: raw='x', err=bad"}, false},
		{"qwen3's built-in parser, before the stream", true, ollamatest.Step{Status: 500, ErrBody: "failed to parse JSON: unexpected end of JSON input"}, false},
		{"qwen3's built-in parser, not streaming", false, ollamatest.Step{Status: 500, ErrBody: "failed to parse JSON: invalid character 'l' looking for beginning of object key string"}, false},
		{"a crashed runner, streaming", true, ollamatest.Step{Status: 500, ErrBody: "llama runner process has terminated: exit status 2"}, true},
		{"a crashed runner, not streaming", false, ollamatest.Step{Status: 500, ErrBody: "llama runner process has terminated: exit status 2"}, true},
		{"a crashed runner mid-stream", true, ollamatest.Step{Content: "Switching", ErrLine: "llama runner process has terminated: exit status 2"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var replies atomic.Int32
			f := ollamatest.NewServer(t, []string{"m"}, func(req ollamatest.Request, _ int) ollamatest.Step {
				switch {
				case replies.Add(1) == 1:
					return c.fail
				case len(req.ToolResults()) == 0:
					return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: `{"lamp_id":"LP02","on":true,"level":40}`}}}
				}
				return ollamatest.Step{Content: "Done: LP02 is on at 40 percent."}
			})
			cfg := testConfig("parse", f.URL, "m")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []level.Level{level.L4}
			cfg.Stream = &c.stream
			// A retried parse error would run until this deadline, and
			// end as a timeout.
			cfg.AgentTimeoutSeconds = 5
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			r := recs[0]
			if c.retried {
				if r.ErrorClass != "" || r.StopReason != results.StopAnswer || r.Metrics.TC != 1 || f.Chats() != 3 {
					t.Errorf("error_class %q (%s), stop_reason %q, tc %v, %d chat requests; want a retry that passes in 3",
						r.ErrorClass, r.Error, r.StopReason, r.Metrics.TC, f.Chats())
				}
				return
			}
			want := c.fail.ErrBody + c.fail.ErrLine
			if r.ErrorClass != results.ErrMalformed || r.StopReason != results.StopError || r.Error != want || f.Chats() != 1 || len(r.Calls) != 0 {
				t.Errorf("error_class %q, stop_reason %q, error %q, %d chat requests, %d calls; want %q, %q, %q, one request, no call",
					r.ErrorClass, r.StopReason, r.Error, f.Chats(), len(r.Calls), results.ErrMalformed, results.StopError, want)
			}
		})
	}
}

// TestOllamaRepliesThatAreNoAnswer: a reply Ollama ended at its token
// repeat limit, a reply its tool parser emptied and a prompt past the
// context each end the trial at once with their own error class, and the
// tokens the failed reply cost counted; none is scored as an answer.
func TestOllamaRepliesThatAreNoAnswer(t *testing.T) {
	spec, lookup := tinySpec(t)
	cases := []struct {
		name   string
		stream bool
		step   ollamatest.Step
		numCtx int
		class  results.ErrorClass
		tokens int
	}{
		{"the repeat limit, streamed", true, ollamatest.Step{Repeat: "on "}, 0, results.ErrRepeatLimit, ollamatest.RepeatLimit + 1},
		{"the repeat limit, not streamed", false, ollamatest.Step{Repeat: "on "}, 0, results.ErrRepeatLimit, 0},
		{"a call the server dropped", true, ollamatest.Step{Dropped: true}, 0, results.ErrDroppedCall, 15},
		{"a prompt past the context", true, ollamatest.Step{Content: "never sent"}, 64, results.ErrContext, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return c.step })
			f.NumCtx = c.numCtx
			cfg := testConfig("noanswer", f.URL, "m")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []level.Level{level.L4}
			cfg.Stream = &c.stream
			cfg.AgentTimeoutSeconds = 5 // what a retried failure would cost
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			r := recs[0]
			if r.ErrorClass != c.class || r.StopReason != results.StopError || f.Chats() != 1 || r.Metrics.TC != 0 || r.Error == "" {
				t.Errorf("error_class %q (%s), stop_reason %q, %d chat requests, tc %v; want %q at once", r.ErrorClass, r.Error, r.StopReason, f.Chats(), r.Metrics.TC, c.class)
			}
			if c.tokens > 0 && r.CompletionTokens != c.tokens {
				t.Errorf("%d completion tokens recorded, want %d", r.CompletionTokens, c.tokens)
			}
		})
	}
}

// TestOllamaKeepAliveZeroWarns: keep_alive 0s turns the warm-up into
// Ollama's unload and reloads the model inside every request, and a
// num_ctx shorter than the tool list refuses every prompt; the run says
// both before the first trial. The warm-up's load time is its wall
// time, since Ollama's load reply carries none.
func TestOllamaKeepAliveZeroWarns(t *testing.T) {
	spec, lookup := tinySpec(t)
	f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Content: "ok"} })
	cfg := testConfig("keepalive", f.URL, "m")
	cfg.Scenarios = []string{"tiny-001"}
	cfg.Granularities = []level.Level{level.L4}
	cfg.KeepAlive = "0s"
	cfg.NumCtx = 64 // shorter than the tool list
	out := t.TempDir()
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"keep_alive 0s makes Ollama unload the model after every request", "longer than num_ctx 64"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress %q; want %q", log.String(), want)
		}
	}
	man, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.WarmUps) != 1 || man.WarmUps[0].LoadS <= 0 || man.WarmUps[0].LoadS > man.WarmUps[0].WallS {
		t.Errorf("warm-ups %+v; want the load's wall time, never 0", man.WarmUps)
	}
	if info := man.Models["m"]; info.ContextTokens != cfg.NumCtx || info.ContextTokens == 0 {
		t.Errorf("run.json model info %+v; want num_ctx %d", info, cfg.NumCtx)
	}
}
