package score

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestAlignmentPairsLikeBothArgAccs: at L1 with two steps swapped, arg_acc
// pairs the k-th call with the k-th gold call, action_arg_acc by action;
// the alignment records both pairings and an unmatched gold call.
func TestAlignmentPairsLikeBothArgAccs(t *testing.T) {
	spec := spectest.Tiny(t)
	g := NewGold(spec.Domains[0], &speclang.Scenario{}, level.L4, tiny.Domain, nil)
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
