package harness

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestRecordExplainsItsVerdict plays trajectories on the tiny domain and
// checks the explanation Score writes into the record: the failed
// condition, the missing fact, the collateral change and the diff against
// the nearest right store, each as data.
func TestRecordExplainsItsVerdict(t *testing.T) {
	spec, _ := tinySpec(t)
	s := &speclang.Scenario{
		Gold: map[mcpdomain.Level][]*speclang.Call{mcpdomain.L4: {
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
	g := NewGold(spec.Domains[0], s, mcpdomain.L4, tiny.Domain, rights)
	play := func(answer string, calls ...string) *results.Metrics {
		t.Helper()
		sess, err := Open(ctx, tiny.Domain, mcpdomain.L4)
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
		m, err := Score(rec, g, sess.Store.Snapshot())
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

// TestAlignmentPairsLikeBothArgAccs: at L1 with two steps swapped, arg_acc
// pairs the k-th call with the k-th gold call, action_arg_acc by action;
// the alignment records both pairings and an unmatched gold call.
func TestAlignmentPairsLikeBothArgAccs(t *testing.T) {
	spec, _ := tinySpec(t)
	g := NewGold(spec.Domains[0], &speclang.Scenario{}, mcpdomain.L4, tiny.Domain, nil)
	g.Calls = []*speclang.Call{
		gcall("tiny", map[string]any{"action": "get_lamp", "lamp_id": "LP01"}),
		gcall("tiny", map[string]any{"action": "set_lamp", "lamp_id": "LP01", "level": int64(30)}),
		gcall("tiny", map[string]any{"action": "drop_timer", "timer_id": "TM001"}),
	}
	got := g.scoreArgs(g.read(calls(
		"tiny", `{"action":"set_lamp","lamp_id":"LP01","level":30}`, "tiny", `{"action":"get_lamp","lamp_id":"LP01"}`)))
	var pairs [][3]int
	for _, m := range got.matches {
		pairs = append(pairs, [3]int{m.Gold, m.Call, m.ActionCall})
	}
	if diff := cmp.Diff([][3]int{{0, 0, 1}, {1, 1, 0}, {2, -1, -1}}, pairs); diff != "" {
		t.Errorf("(gold, arg_acc call, action_arg_acc call) (-want +got):\n%s", diff)
	}
	// arg_acc: 1 of 2 pairs, 1 of 3, 0 of 2; action_arg_acc, the action
	// left out: 1 of 1, 2 of 2, 0 of 1.
	if math.Abs(got.argAcc-2.0/7) > 1e-12 || got.actionArgAcc != 0.75 {
		t.Errorf("arg_acc %v, action_arg_acc %v; want 2/7 and 0.75", got.argAcc, got.actionArgAcc)
	}
	if a := got.matches[0].Args[0]; a.Name != "action" || a.Right || a.Got != "set_lamp" {
		t.Errorf("gold 0's action against call 0: %+v", a)
	}
	if a := got.matches[2].Args[0]; a.Given || a.Right {
		t.Errorf("an unmatched gold call's argument: %+v", a)
	}
}
