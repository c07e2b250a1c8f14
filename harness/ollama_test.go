package harness

import (
	"encoding/json"
	"testing"

	"github.com/mcpgranite/granite/generator/runtime"
	"github.com/mcpgranite/granite/scenarios"
)

// userTurns counts the user messages of a request: which user turn of a
// multi-turn trial the model is answering.
func userTurns(req chatRequest) int {
	n := 0
	for _, m := range req.Messages {
		var msg struct{ Role string }
		_ = json.Unmarshal(m, &msg)
		if msg.Role == "user" {
			n++
		}
	}
	return n
}

// TestErrorClassIsFirstFailure: a trial's error_class is the failure that
// came first, whether it was a failed call (found while the trial runs)
// or a tool call written as text (found when the reply comes).
func TestErrorClassIsFirstFailure(t *testing.T) {
	spec, lookup := tinySpec(t)
	rt, _ := lookup(spec.Domains[0].Name)
	arts := writeArtifacts(t, []scenarios.Artifact{multiTurn(t, spec, rt)}, nil)
	asText := step{content: `{"name": "set_lamp", "arguments": {"lamp_id":"LP02","on":true,"level":40}}`}
	unknown := step{calls: []fakeCall{{"switch_on_everything", `{}`}}}
	cases := []struct {
		name string
		// multiTurn plays the two-turn artifact instead of tiny-002.
		multiTurn bool
		script    func(req chatRequest) step
		class     string
		stop      string
	}{
		{"an unknown tool, then a tool call as text", false, func(req chatRequest) step {
			if len(req.toolResults()) == 0 {
				return unknown
			}
			return asText
		}, ErrUnknown, stopAnswer},
		{"a tool call as text, then an unknown tool in the next user turn", true, func(req chatRequest) step {
			switch {
			case userTurns(req) == 1:
				return asText
			case len(req.toolResults()) == 0:
				return unknown
			}
			return step{content: "done"}
		}, ErrMalformed, stopAnswer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeOllama(t, []string{"m"}, func(req chatRequest, _ int) step { return c.script(req) })
			cfg := testConfig("errors", f.URL, "m")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []runtime.Level{runtime.L4}
			if c.multiTurn {
				cfg = artifactConfig(arts, f.URL, "m")
			}
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
