package harness

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
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
	spec, _ := tinySpec(t)
	seed := tiny.Domain.NewStore().Snapshot()
	for _, c := range cases {
		g := NewGold(spec.Domains[0], &speclang.Scenario{}, mcpdomain.L4, tiny.Domain, nil)
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
	spec, _ := tinySpec(t)
	l1 := tiny.Domain.Tools[mcpdomain.L1][0].Name
	steps := []struct {
		op   string
		args map[string]any
	}{
		{"get_lamp", map[string]any{"lamp_id": "LP01"}},
		{"set_lamp", map[string]any{"lamp_id": "LP02", "level": int64(40), "on": true}},
		{"add_timer", map[string]any{"lamp": "LP02", "at": "2026-01-01T23:00:00Z"}},
	}
	gold := map[mcpdomain.Level][]*speclang.Call{}
	for _, st := range steps {
		gold[mcpdomain.L4] = append(gold[mcpdomain.L4], gcall(st.op, st.args))
		withAction := map[string]any{"action": st.op}
		maps.Copy(withAction, st.args)
		gold[mcpdomain.L1] = append(gold[mcpdomain.L1], gcall(l1, withAction))
	}
	orders := map[string][]int{"gold order": {0, 1, 2}, "timer first": {2, 0, 1}}
	for _, level := range []mcpdomain.Level{mcpdomain.L4, mcpdomain.L1} {
		g := NewGold(spec.Domains[0], &speclang.Scenario{Gold: gold}, level, tiny.Domain, nil)
		for name, order := range orders {
			var cs []results.Call
			for _, i := range order {
				c := gold[level][i]
				cs = append(cs, results.Call{Tool: c.Tool, Arguments: c.JSON()})
			}
			m, err := Score(&results.Record{Calls: cs, StopReason: results.StopAnswer}, g, tiny.Domain.NewStore().Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			wantArgAcc := 1.0
			if level == mcpdomain.L1 && name != "gold order" {
				// k-th with k-th: add_timer vs get_lamp (action 0 of 1,
				// lamp_id missing), get_lamp vs set_lamp (lamp_id wrong,
				// action wrong: 0 of 4), set_lamp vs add_timer (0 of 3).
				wantArgAcc = 0
			}
			if m.ActionArgAcc != 1 || m.ArgAcc != wantArgAcc || m.ActionF1 != 1 {
				t.Errorf("%s, %s: action_arg_acc %v arg_acc %v action_f1 %v; want 1, %v, 1", level, name, m.ActionArgAcc, m.ArgAcc, m.ActionF1, wantArgAcc)
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

// TestTaskCompletionByHand plays hand-made trajectories of one scenario of
// the tiny domain through the MCP path and pins TC, TC strict and why.
// The task: switch the den lamp LP02 on at 40, drop the timer TM001, and
// add two timers, one for each lamp, at times the operator leaves open
// (at is optional); then say the hall lamp's brightness.
func TestTaskCompletionByHand(t *testing.T) {
	spec, _ := tinySpec(t)
	d := spec.Domains[0]
	timer := func(lamp string) *speclang.Call {
		return gcall("add_timer", map[string]any{"lamp": lamp, "at": "2026-01-01T23:00:00Z"}, "at")
	}
	s := &speclang.Scenario{
		Gold: map[mcpdomain.Level][]*speclang.Call{mcpdomain.L4: {
			gcall("get_lamp", map[string]any{"lamp_id": "LP01"}),
			gcall("set_lamp", map[string]any{"lamp_id": "LP02", "on": true, "level": int64(40)}),
			gcall("drop_timer", map[string]any{"timer_id": "TM001"}),
			timer("LP01"),
			timer("LP02"),
		}},
		State: []*speclang.StateCheck{
			{Entity: "lamp", Collection: "lamps", ID: "LP02", Fields: map[string]any{"on": true}},
			{Entity: "timer", Collection: "timers", ID: "TM001", Absent: true},
			{Entity: "timer", Collection: "timers", Where: map[string]any{"lamp": "LP01"}, Count: ptr(1)},
			{Entity: "timer", Collection: "timers", Where: map[string]any{"lamp": "LP02"}}, // at least one
		},
		Answer: []*speclang.Fact{{Value: int64(80), What: "hall lamp brightness"}},
	}
	ctx := context.Background()
	rights, err := RightsOf(ctx, tiny.Domain, s)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGold(d, s, mcpdomain.L4, tiny.Domain, rights)
	const ok = "The hall lamp is at 80 percent."
	gold := []string{
		"get_lamp", `{"lamp_id":"LP01"}`,
		"set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`,
		"drop_timer", `{"timer_id":"TM001"}`,
		"add_timer", `{"lamp":"LP01","at":"2026-01-01T23:00:00Z"}`,
		"add_timer", `{"lamp":"LP02","at":"2026-01-01T23:00:00Z"}`,
	}
	with := func(extra ...string) []string { return append(slices.Clone(gold), extra...) }
	cases := []struct {
		name, answer string
		stop         results.StopReason
		calls        []string
		tc, strict   float64
		why          string // a reason TC is 0 must contain this
	}{
		{"the gold", ok, results.StopAnswer, gold, 1, 1, ""},
		{"one optional time left out", ok, results.StopAnswer, []string{
			"set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`, "drop_timer", `{"timer_id":"TM001"}`,
			"add_timer", `{"lamp":"LP01"}`, "add_timer", `{"lamp":"LP02","at":"2026-01-01T23:00:00Z"}`}, 1, 1, ""},
		{"both optional times left out", ok, results.StopAnswer, []string{
			"set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`, "drop_timer", `{"timer_id":"TM001"}`,
			"add_timer", `{"lamp":"LP01"}`, "add_timer", `{"lamp":"LP02"}`}, 1, 0, ""},
		{"independent creates in the other order", ok, results.StopAnswer, []string{
			"add_timer", `{"lamp":"LP02","at":"2026-01-01T23:00:00Z"}`, "add_timer", `{"lamp":"LP01","at":"2026-01-01T23:00:00Z"}`,
			"drop_timer", `{"timer_id":"TM001"}`, "set_lamp", `{"level":40,"lamp_id":"LP02","on":true}`}, 1, 0, ""},
		{"a row created twice and the copy deleted", ok, results.StopAnswer, with(
			"add_timer", `{"lamp":"LP02","at":"2026-01-01T23:00:00Z"}`, "drop_timer", `{"timer_id":"TM004"}`), 1, 0, ""},
		{"a timestamp written in another zone", ok, results.StopAnswer, []string{
			"set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`, "drop_timer", `{"timer_id":"TM001"}`,
			"add_timer", `{"lamp":"LP01","at":"2026-01-02T00:00:00+01:00"}`, "add_timer", `{"lamp":"LP02"}`}, 1, 0, ""},
		// Collateral damage.
		{"a row created twice", ok, results.StopAnswer, with("add_timer", `{"lamp":"LP02","at":"2026-01-01T23:00:00Z"}`), 0, 0,
			"created timers TM004, one more than a right solution creates"},
		{"a row created twice where a count is asked", ok, results.StopAnswer, with("add_timer", `{"lamp":"LP01","at":"2026-01-01T23:00:00Z"}`), 0, 0,
			`state condition fails: timer rows where {"lamp":"LP01"} (exactly 1)`},
		{"a created row replaced by an equally right one", ok, results.StopAnswer, with("add_timer", `{"lamp":"LP02"}`, "drop_timer", `{"timer_id":"TM003"}`), 1, 0, ""},
		{"an extra write to a row the task does not touch", ok, results.StopAnswer, with("set_lamp", `{"lamp_id":"LP01","level":50}`), 0, 0,
			"set lamps LP01 level to 50, which no right solution changes"},
		{"a wrong value in a field the gold sets", ok, results.StopAnswer, []string{
			"set_lamp", `{"lamp_id":"LP02","on":true,"level":45}`, "drop_timer", `{"timer_id":"TM001"}`,
			"add_timer", `{"lamp":"LP01"}`, "add_timer", `{"lamp":"LP02"}`}, 0, 0,
			"set lamps LP02 level to 45; a right solution sets 40"},
		{"a wrong time on a created row", ok, results.StopAnswer, []string{
			"set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`, "drop_timer", `{"timer_id":"TM001"}`,
			"add_timer", `{"lamp":"LP01","at":"2026-01-01T21:00:00Z"}`, "add_timer", `{"lamp":"LP02"}`}, 0, 0,
			`created timers TM002 with at = "2026-01-01T21:00:00Z"`},
		{"a state change everything else rests on, undone", ok, results.StopAnswer, with("set_lamp", `{"lamp_id":"LP02","on":false,"level":0}`), 0, 0,
			"state condition fails: lamp LP02"},
		{"a facts missing", "Done.", results.StopAnswer, gold, 0, 0, "the answer does not state 80 (hall lamp brightness)"},
		{"stopped at max turns", ok, results.StopMaxTurns, gold, 0, 0, "without an answer (max_turns)"},
	}
	for _, c := range cases {
		sess, err := Open(ctx, tiny.Domain, mcpdomain.L4)
		if err != nil {
			t.Fatal(err)
		}
		rec := &results.Record{FinalAnswer: c.answer, StopReason: c.stop}
		for i := 0; i < len(c.calls); i += 2 {
			res, err := sess.Call(ctx, c.calls[i], json.RawMessage(c.calls[i+1]))
			if err != nil || res.IsError {
				t.Fatalf("%s: call %s %s: %v %+v", c.name, c.calls[i], c.calls[i+1], err, res)
			}
			rec.Calls = append(rec.Calls, results.Call{Tool: c.calls[i], Arguments: json.RawMessage(c.calls[i+1])})
		}
		m, err := Score(rec, g, sess.Store.Snapshot())
		sess.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m.TC != c.tc || m.TCStrict != c.strict {
			t.Errorf("%s: tc %v tc_strict %v, want %v %v; why %q", c.name, m.TC, m.TCStrict, c.tc, c.strict, m.Why)
		}
		if (m.TC == 1) != (len(m.Why) == 0) {
			t.Errorf("%s: tc %v with why %q", c.name, m.TC, m.Why)
		}
		if c.why != "" && !slices.ContainsFunc(m.Why, func(w string) bool { return strings.Contains(w, c.why) }) {
			t.Errorf("%s: why %q; want a reason containing %q", c.name, m.Why, c.why)
		}
	}
}

func ptr[T any](v T) *T { return &v }
