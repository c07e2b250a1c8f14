package gold

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// These tests score trajectories played through the MCP path against the
// gold's right stores, which RightsOf runs: they need gold execution, so
// they stay beside it rather than in package score.

// tinySpec is the golden tiny domain with its scenarios, and a lookup that
// finds its generated package: a fixture no benchmark change can move.
func tinySpec(t testing.TB) (*speclang.Spec, Lookup) {
	t.Helper()
	spec := spectest.Tiny(t)
	return spec, func(name string) (*mcpdomain.Domain, bool) {
		if name == tiny.Domain.Name {
			return tiny.Domain, true
		}
		return nil, false
	}
}

func gcall(tool string, args map[string]any, optional ...string) *speclang.Call {
	return &speclang.Call{Tool: tool, Args: args, Alternatives: map[string][]any{}, Optional: optional}
}

// TestRecordExplainsItsVerdict plays trajectories on the tiny domain and
// checks the explanation Score writes into the record: the failed
// condition, the missing fact, the collateral change and the diff against
// the nearest right store, each as data.
func TestRecordExplainsItsVerdict(t *testing.T) {
	spec, _ := tinySpec(t)
	s := &speclang.Scenario{
		Gold: map[level.Level][]*speclang.Call{level.L4: {
			gcall("set_lamp", map[string]any{"lamp_id": "LP02", "on": true, "level": int64(40)}),
		}},
		State:  []*speclang.StateCheck{{Entity: "lamp", Collection: "lamps", ID: "LP02", Fields: map[string]any{"on": true}}},
		Answer: []*speclang.Fact{{Value: int64(40), What: "new brightness"}},
	}
	ctx := context.Background()
	rights, err := RightsOf(ctx, tiny.Domain, s)
	if err != nil {
		t.Fatal(err)
	}
	g := score.NewGold(spec.Domains[0], s, level.L4, tiny.Domain, rights)
	play := func(answer string, calls ...string) *results.Metrics {
		t.Helper()
		sess, err := serve.Open(ctx, tiny.Domain, servetest.Level(t, tiny.Domain, level.L4))
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		rec := &results.Record{FinalAnswer: answer, StopReason: results.StopAnswer}
		for i := 0; i < len(calls); i += 2 {
			if _, err := sess.Call(ctx, calls[i], json.RawMessage(calls[i+1])); err != nil {
				t.Fatal(err)
			}
			rec.Calls = append(rec.Calls, results.Call{Tool: calls[i], Arguments: json.RawMessage(calls[i+1])})
		}
		m, err := score.Score(rec, g, sess.Store.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	right := play("LP02 is at 40.", "set_lamp", `{"lamp_id":"LP02","on":true,"level":40}`)
	if right.TC != 1 || right.Explain == nil || right.Explain.StoreDiff != nil || len(right.Explain.FailedConditions)+len(right.Explain.MissingFacts)+len(right.Explain.Collateral) != 0 {
		t.Fatalf("the gold: %+v explain %+v", right, right.Explain)
	}

	wrong := play("Done.", "set_lamp", `{"lamp_id":"LP02","on":false,"level":45}`)
	e := wrong.Explain
	if wrong.TC != 0 || e == nil {
		t.Fatalf("a wrong call: tc %v explain %+v", wrong.TC, e)
	}
	if len(e.FailedConditions) != 1 {
		t.Errorf("failed conditions %q, want the one on LP02", e.FailedConditions)
	}
	if diff := cmp.Diff([]results.Fact{{Value: int64(40), What: "new brightness", About: "lamp LP02 level", Said: "it is not in the answer"}}, e.MissingFacts); diff != "" {
		t.Errorf("missing facts (-want +got):\n%s", diff)
	}
	if len(e.Collateral) == 0 {
		t.Errorf("no collateral change for level 45")
	}
	wantDiff := &results.StoreDiff{Right: 0, Rights: len(rights.Finals), Rows: []results.RowDiff{{Collection: "lamps", ID: "LP02", Change: results.RowChanged,
		Fields: []results.FieldDiff{{Field: "level", Got: float64(45), Want: float64(40)}, {Field: "on", Got: false, Want: true}}}}}
	if diff := cmp.Diff(wantDiff, e.StoreDiff); diff != "" {
		t.Errorf("store diff (-want +got):\n%s", diff)
	}
	wantAlign := []results.GoldMatch{{Gold: 0, Tool: "set_lamp", Call: 0, ActionCall: 0, Args: []results.ArgMatch{
		{Name: "lamp_id", Want: "LP02", Got: "LP02", Given: true, Right: true},
		{Name: "level", Want: int64(40), Got: float64(45), Given: true},
		{Name: "on", Want: true, Got: false, Given: true},
	}}}
	if diff := cmp.Diff(wantAlign, e.Alignment); diff != "" {
		t.Errorf("alignment (-want +got):\n%s", diff)
	}
	if len(wrong.Why) != len(e.FailedConditions)+len(e.MissingFacts)+len(e.Collateral) {
		t.Errorf("why %q says other reasons than explain %+v", wrong.Why, e)
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
		Gold: map[level.Level][]*speclang.Call{level.L4: {
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
	g := score.NewGold(d, s, level.L4, tiny.Domain, rights)
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
		sess, err := serve.Open(ctx, tiny.Domain, servetest.Level(t, tiny.Domain, level.L4))
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
		m, err := score.Score(rec, g, sess.Store.Snapshot())
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
