package harness

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/generator/runtime"
	tiny "github.com/mcpgranite/granite/generator/testdata/golden/tiny/want/tiny"
)

func gcall(tool string, args map[string]any, optional ...string) *generator.Call {
	return &generator.Call{Tool: tool, Args: args, Alternatives: map[string][]any{}, Optional: optional}
}

func calls(pairs ...string) []Call {
	var out []Call
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Call{Tool: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
	}
	return out
}

// TestMetricsByHand scores hand-written trajectories against hand-computed
// F1, action F1, ArgAcc and redundancy, asserted exactly.
func TestMetricsByHand(t *testing.T) {
	// Gold at L4: 4 calls, 6 required pairs (get_lamp 1, set_lamp 3,
	// list_lamps none: counts 1, get_lamp 1).
	l4 := []*generator.Call{
		gcall("get_lamp", map[string]any{"lamp_id": "LP01"}),
		gcall("set_lamp", map[string]any{"lamp_id": "LP01", "level": int64(30), "on": true}),
		gcall("list_lamps", map[string]any{"room": "hall"}, "room"),
		gcall("get_lamp", map[string]any{"lamp_id": "LP02"}),
	}
	l4[1].Alternatives["level"] = []any{int64(31)}
	// Gold at L1: one tool, the operation in action.
	l1 := []*generator.Call{
		gcall("tiny", map[string]any{"action": "get_lamp", "lamp_id": "LP01"}),
		gcall("tiny", map[string]any{"action": "set_lamp", "lamp_id": "LP01", "level": int64(30)}),
	}
	strict := []*generator.Call{
		gcall("list_lamps", map[string]any{"room": "hall"}),
		gcall("set_lamp", map[string]any{"lamp_id": "LP01", "config": map[string]any{"color": "warm", "tags": []any{"a", "b"}}}),
	}
	cases := []struct {
		name                 string
		gold                 []*generator.Call
		calls                []Call
		f1, actionF1, argAcc float64
		redundant            int
	}{
		{"right calls, independent ones swapped", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "list_lamps", `{}`,
			"set_lamp", `{"on":true,"lamp_id":"LP01","level":30.0}`, "get_lamp", `{"lamp_id":"LP02"}`),
			1, 1, 1, 0},
		{"zero calls", l4, nil, 0, 0, 0, 0},
		{"an extra repeated call", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "get_lamp", `{"lamp_id":"LP01"}`,
			"set_lamp", `{"lamp_id":"LP01","level":30,"on":true}`, "list_lamps", `{"room":"hall"}`, "get_lamp", `{"lamp_id":"LP02"}`),
			// P = 4/5, R = 1: F1 = 8/9. The 2nd get_lamp aligns with the
			// gold's 2nd (LP02): 5 of 6 pairs.
			8.0 / 9, 8.0 / 9, 5.0 / 6, 1},
		{"same-tool calls swapped", l4, calls(
			"get_lamp", `{"lamp_id":"LP02"}`, "set_lamp", `{"lamp_id":"LP01","level":31,"on":true}`,
			"list_lamps", `{"room":"den"}`, "get_lamp", `{"lamp_id":"LP01"}`),
			// level 31 is an alternative; room is optional, so den is not
			// counted; both get_lamp pairs are wrong: 4 of 6.
			1, 1, 4.0 / 6, 0},
		{"wrong value types", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "set_lamp", `{"lamp_id":"LP01","level":"30","on":"true"}`,
			"list_lamps", `{}`, "get_lamp", `{"lamp_id":"LP02"}`),
			1, 1, 4.0 / 6, 0},
		{"a missing call and a missing argument", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "set_lamp", `{"lamp_id":"LP01","level":30}`),
			// P = 1, R = 1/2: F1 = 2/3. Pairs: 1 + 2 + 0 + 0 of 6.
			2.0 / 3, 2.0 / 3, 3.0 / 6, 0},
		{"one tool at L1, actions swapped", l1, calls(
			"tiny", `{"action":"set_lamp","lamp_id":"LP01","level":30}`, "tiny", `{"action":"get_lamp","lamp_id":"LP01"}`),
			// Plain F1 sees two calls of the one tool: 1. Action F1 also
			// 1 (order ignored). Aligned in order: gold get (action,
			// lamp_id) vs set: 1/2; gold set (action, lamp_id, level) vs
			// get: 1/3. Total 2 of 5.
			1, 1, 2.0 / 5, 0},
		{"one tool at L1, a wrong action", l1, calls(
			"tiny", `{"action":"get_lamp","lamp_id":"LP01"}`, "tiny", `{"action":"list_lamps"}`),
			1, 0.5, 2.0 / 5, 0},
		{"enums exact, free text folded, objects by key, arrays in order", strict, calls(
			"list_lamps", `{"room":"Hall"}`,
			"set_lamp", `{"lamp_id":"LP01","config":{"color":" WARM","tags":["a","b"]}}`),
			1, 1, 2.0 / 3, 0},
		{"arrays out of order", strict, calls(
			"list_lamps", `{"room":"hall"}`,
			"set_lamp", `{"lamp_id":"LP01","config":{"color":"warm","tags":["b","a"]}}`),
			1, 1, 2.0 / 3, 0},
		{"unreadable arguments", strict, calls("list_lamps", `"room=hall"`, "set_lamp", `{}`), 1, 1, 0, 0},
		{"no gold, no calls", nil, nil, 1, 1, 1, 0},
		{"no gold, a call", nil, calls("get_lamp", `{"lamp_id":"LP01"}`), 0, 0, 1, 0},
	}
	for _, c := range cases {
		g := NewGold(&generator.Scenario{}, runtime.L4, tiny.Domain, nil)
		g.Calls = c.gold
		rec := &Record{Calls: c.calls, StopReason: stopAnswer}
		m, err := Score(rec, g, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
		if !near(m.F1, c.f1) || !near(m.ActionF1, c.actionF1) || !near(m.ArgAcc, c.argAcc) || m.Redundant != c.redundant || m.ToolCalls != len(c.calls) || m.ZeroToolCall != (len(c.calls) == 0) {
			t.Errorf("%s: f1 %v action_f1 %v arg_acc %v redundant %d; want %v %v %v %d", c.name, m.F1, m.ActionF1, m.ArgAcc, m.Redundant, c.f1, c.actionF1, c.argAcc, c.redundant)
		}
	}
}

// TestTaskCompletionByHand: TC needs an answer, a right final store and
// every fact.
func TestTaskCompletionByHand(t *testing.T) {
	right, other := []byte(`{"lamps":[{"id":"LP01","level":30}],"next_ids":{"lamp":2}}`), []byte(`{"lamps":[{"id":"LP01","level":31}],"next_ids":{"lamp":2}}`)
	variant := []byte(`{"lamps":[{"id":"LP01","level":32}],"next_ids":{"lamp":2}}`)
	s := &generator.Scenario{Answer: []*generator.Fact{{Value: 21.5}, {Value: "living_room"}}}
	g := NewGold(s, runtime.L4, tiny.Domain, [][]byte{right, variant})
	cases := []struct {
		name, answer, stop string
		final              []byte
		tc                 float64
	}{
		{"right", "It is 21.5 °C in the living room.", stopAnswer, right, 1},
		{"a right variant's store", "living room: 21.5", stopAnswer, variant, 1},
		{"another store", "It is 21.5 °C in the living room.", stopAnswer, other, 0},
		{"a fact missing", "It is 21.5 °C.", stopAnswer, right, 0},
		{"a fact rounded away", "It is 21 °C in the living room.", stopAnswer, right, 0},
		{"stopped at max turns", "It is 21.5 °C in the living room.", stopMaxTurns, right, 0},
	}
	for _, c := range cases {
		m, err := Score(&Record{FinalAnswer: c.answer, StopReason: c.stop}, g, c.final)
		if err != nil {
			t.Fatal(err)
		}
		if m.TC != c.tc {
			t.Errorf("%s: TC %v, want %v (%+v)", c.name, m.TC, c.tc, m)
		}
	}
}
