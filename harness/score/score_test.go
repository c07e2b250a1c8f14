package score

import (
	"encoding/json"
	"maps"
	"math"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

func gcall(tool string, args map[string]any, optional ...string) *speclang.Call {
	return &speclang.Call{Tool: tool, Args: args, Alternatives: map[string][]any{}, Optional: optional}
}

func calls(pairs ...string) []results.Call {
	var out []results.Call
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, results.Call{Tool: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
	}
	return out
}

// TestMetricsByHand scores hand-written trajectories against hand-computed
// F1, action F1, ArgAcc and redundancy, asserted exactly.
func TestMetricsByHand(t *testing.T) {
	// Gold at L4: 4 calls, 6 required pairs (get_lamp 1, set_lamp 3,
	// list_lamps none: counts 1, get_lamp 1).
	l4 := []*speclang.Call{
		gcall("get_lamp", map[string]any{"lamp_id": "LP01"}),
		gcall("set_lamp", map[string]any{"lamp_id": "LP01", "level": int64(30), "on": true}),
		gcall("list_lamps", map[string]any{"room": "hall"}, "room"),
		gcall("get_lamp", map[string]any{"lamp_id": "LP02"}),
	}
	l4[1].Alternatives["level"] = []any{int64(31)}
	// Gold at L1: one tool, the operation in action.
	l1 := []*speclang.Call{
		gcall("tiny", map[string]any{"action": "get_lamp", "lamp_id": "LP01"}),
		gcall("tiny", map[string]any{"action": "set_lamp", "lamp_id": "LP01", "level": int64(30)}),
	}
	strict := []*speclang.Call{
		gcall("list_lamps", map[string]any{"room": "hall"}),
		gcall("set_lamp", map[string]any{"lamp_id": "LP01", "config": map[string]any{"color": "warm", "tags": []any{"a", "b"}}}),
	}
	cases := []struct {
		name                 string
		gold                 []*speclang.Call
		calls                []results.Call
		f1, actionF1, argAcc float64
		redundant            int
		// actionArgAcc leaves the action out of the pairs and pairs calls
		// by the best assignment within each (tool, action).
		actionArgAcc float64
	}{
		{"right calls, independent ones swapped", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "list_lamps", `{}`,
			"set_lamp", `{"on":true,"lamp_id":"LP01","level":30.0}`, "get_lamp", `{"lamp_id":"LP02"}`),
			1, 1, 1, 0, 1},
		{"zero calls", l4, nil, 0, 0, 0, 0, 0},
		{"an extra repeated call", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "get_lamp", `{"lamp_id":"LP01"}`,
			"set_lamp", `{"lamp_id":"LP01","level":30,"on":true}`, "list_lamps", `{"room":"hall"}`, "get_lamp", `{"lamp_id":"LP02"}`),
			// P = 4/5, R = 1: F1 = 8/9. The 2nd get_lamp aligns with the
			// gold's 2nd (LP02): 5 of 6 pairs.
			// Paired by assignment, both get_lamp golds find their call.
			8.0 / 9, 8.0 / 9, 5.0 / 6, 1, 1},
		{"same-tool calls swapped", l4, calls(
			"get_lamp", `{"lamp_id":"LP02"}`, "set_lamp", `{"lamp_id":"LP01","level":31,"on":true}`,
			"list_lamps", `{"room":"den"}`, "get_lamp", `{"lamp_id":"LP01"}`),
			// level 31 is an alternative; room is optional, so den is not
			// counted; both get_lamp pairs are wrong in order, right by
			// assignment.
			1, 1, 4.0 / 6, 0, 1},
		{"wrong value types", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "set_lamp", `{"lamp_id":"LP01","level":"30","on":"true"}`,
			"list_lamps", `{}`, "get_lamp", `{"lamp_id":"LP02"}`),
			1, 1, 4.0 / 6, 0, 4.0 / 6},
		{"a missing call and a missing argument", l4, calls(
			"get_lamp", `{"lamp_id":"LP01"}`, "set_lamp", `{"lamp_id":"LP01","level":30}`),
			// P = 1, R = 1/2: F1 = 2/3. Pairs: 1 + 2 + 0 + 0 of 6.
			2.0 / 3, 2.0 / 3, 3.0 / 6, 0, 3.0 / 6},
		{"one tool at L1, actions swapped", l1, calls(
			"tiny", `{"action":"set_lamp","lamp_id":"LP01","level":30}`, "tiny", `{"action":"get_lamp","lamp_id":"LP01"}`),
			// Plain F1 sees two calls of the one tool: 1. Action F1 also
			// 1 (order ignored). Aligned in order: gold get (action,
			// lamp_id) vs set: 1/2; gold set (action, lamp_id, level) vs
			// get: 1/3. Total 2 of 5. Paired within each action, the
			// action left out: 3 of 3.
			1, 1, 2.0 / 5, 0, 1},
		{"one tool at L1, a wrong action", l1, calls(
			"tiny", `{"action":"get_lamp","lamp_id":"LP01"}`, "tiny", `{"action":"list_lamps"}`),
			// By action: get 1 of 1, set 0 of 2.
			1, 0.5, 2.0 / 5, 0, 1.0 / 3},
		{"enums exact, free text folded, objects by key, arrays in order", strict, calls(
			"list_lamps", `{"room":"Hall"}`,
			"set_lamp", `{"lamp_id":"LP01","config":{"color":" WARM","tags":["a","b"]}}`),
			1, 1, 2.0 / 3, 0, 2.0 / 3},
		{"arrays out of order", strict, calls(
			"list_lamps", `{"room":"hall"}`,
			"set_lamp", `{"lamp_id":"LP01","config":{"color":"warm","tags":["b","a"]}}`),
			1, 1, 2.0 / 3, 0, 2.0 / 3},
		{"unreadable arguments", strict, calls("list_lamps", `"room=hall"`, "set_lamp", `{}`), 1, 1, 0, 0, 0},
		{"no gold, no calls", nil, nil, 1, 1, 1, 0, 1},
		{"no gold, a call", nil, calls("get_lamp", `{"lamp_id":"LP01"}`), 0, 0, 1, 0, 1},
		{"a stray action at L4", l4, calls(
			"get_lamp", `{"lamp_id":"LP01","action":"get_lamp"}`, "set_lamp", `{"lamp_id":"LP01","level":30,"on":true,"action":"x"}`,
			"list_lamps", `{"action":"list_lamps"}`, "get_lamp", `{"lamp_id":"LP02"}`),
			// An L4 tool takes no action: what the call sends names no
			// operation, so the operations are the gold's.
			1, 1, 1, 0, 1},
	}
	spec := spectest.Tiny(t)
	seed := tiny.Domain.NewStore().Snapshot()
	for _, c := range cases {
		g := NewGold(spec.Domains[0], &speclang.Scenario{}, level.L4, tiny.Domain, nil)
		g.Calls = c.gold
		rec := &results.Record{Calls: c.calls, StopReason: results.StopAnswer}
		m, err := Score(rec, g, seed)
		if err != nil {
			t.Fatal(err)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
		if !near(m.F1, c.f1) || !near(m.ActionF1, c.actionF1) || !near(m.ArgAcc, c.argAcc) || !near(m.ActionArgAcc, c.actionArgAcc) || m.Redundant != c.redundant || m.ToolCalls != len(c.calls) || m.ZeroToolCall != (len(c.calls) == 0) {
			t.Errorf("%s: f1 %v action_f1 %v arg_acc %v action_arg_acc %v redundant %d; want %v %v %v %v %d", c.name, m.F1, m.ActionF1, m.ArgAcc, m.ActionArgAcc, m.Redundant, c.f1, c.actionF1, c.argAcc, c.actionArgAcc, c.redundant)
		}
	}
}

// TestActionArgAccIgnoresOrder plays one trajectory in the gold's order and
// with two independent steps swapped, at L4 and at L1. The paper's ArgAcc
// aligns calls of the same tool in order, so at L1, where every call is of
// the one tool, the swap misaligns every action after it; action ArgAcc
// scores all four the same.
func TestActionArgAccIgnoresOrder(t *testing.T) {
	spec := spectest.Tiny(t)
	l1 := tiny.Domain.Tools[level.L1][0].Name
	steps := []struct {
		op   string
		args map[string]any
	}{
		{"get_lamp", map[string]any{"lamp_id": "LP01"}},
		{"set_lamp", map[string]any{"lamp_id": "LP02", "level": int64(40), "on": true}},
		{"add_timer", map[string]any{"lamp": "LP02", "at": "2026-01-01T23:00:00Z"}},
	}
	gold := map[level.Level][]*speclang.Call{}
	for _, st := range steps {
		gold[level.L4] = append(gold[level.L4], gcall(st.op, st.args))
		withAction := map[string]any{"action": st.op}
		maps.Copy(withAction, st.args)
		gold[level.L1] = append(gold[level.L1], gcall(l1, withAction))
	}
	orders := map[string][]int{"gold order": {0, 1, 2}, "timer first": {2, 0, 1}}
	for _, lv := range []level.Level{level.L4, level.L1} {
		g := NewGold(spec.Domains[0], &speclang.Scenario{Gold: gold}, lv, tiny.Domain, nil)
		for name, order := range orders {
			var cs []results.Call
			for _, i := range order {
				c := gold[lv][i]
				cs = append(cs, results.Call{Tool: c.Tool, Arguments: c.JSON()})
			}
			m, err := Score(&results.Record{Calls: cs, StopReason: results.StopAnswer}, g, tiny.Domain.NewStore().Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			wantArgAcc := 1.0
			if lv == level.L1 && name != "gold order" {
				// k-th with k-th: add_timer vs get_lamp (action 0 of 1,
				// lamp_id missing), get_lamp vs set_lamp (lamp_id wrong,
				// action wrong: 0 of 4), set_lamp vs add_timer (0 of 3).
				wantArgAcc = 0
			}
			if m.ActionArgAcc != 1 || m.ArgAcc != wantArgAcc || m.ActionF1 != 1 {
				t.Errorf("%s, %s: action_arg_acc %v arg_acc %v action_f1 %v; want 1, %v, 1", lv, name, m.ActionArgAcc, m.ArgAcc, m.ActionF1, wantArgAcc)
			}
		}
	}
}

func TestMaxAssignment(t *testing.T) {
	cases := []struct {
		w    [][]int
		want int
	}{
		{nil, 0},
		{[][]int{{}}, 0},
		{[][]int{{3}}, 3},
		{[][]int{{1, 2}, {2, 0}}, 4},
		{[][]int{{2, 2}, {2, 0}}, 4},
		{[][]int{{5, 1, 1}}, 5},                       // more calls than gold
		{[][]int{{1}, {4}, {2}}, 4},                   // more gold than calls
		{[][]int{{3, 3, 0}, {3, 0, 0}, {0, 3, 1}}, 7}, // the first row must give way
		{[][]int{{0, 0}, {0, 0}}, 0},
	}
	for _, c := range cases {
		if got, _ := assignment(c.w); got != c.want {
			t.Errorf("assignment(%v) = %d, want %d", c.w, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
