package score_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/spectest"
)

// TestClaims pins the claim rules on a scenario whose facts are a row's
// value (VH008's fuel, 12%) and a member (VH014, the van that took over
// TR0009), and whose task changes rows (VH006 from available to standby,
// VH014's speed limiter from 100 to 80 km/h): each answer is
// scored on the gold's own final store, so only the answer decides.
func TestClaims(t *testing.T) {
	spec, ctx := spectest.All(t), context.Background()
	d := spec.Domain("fleet")
	var s = d.Scenarios[4]
	if s.ID != "fleet-005" {
		t.Fatalf("the fleet domain's fifth scenario is %s; the cases below are written for fleet-005", s.ID)
	}
	dom, _ := gen.Lookup(d.Name)
	rights, err := gold.RightsOf(ctx, dom, s)
	if err != nil {
		t.Fatal(err)
	}
	g := score.NewGold(d, s, level.L4, dom, rights)
	const facts = "VH008 has 12% fuel left. VH014 took over TR0009."
	cases := []struct {
		name, answer string
		right        bool
		why          string // a part of the reason, for wrong ones
	}{
		{"the facts", facts, true, ""},
		{"a change told with its old value marked", facts + " Truck VH006 went from available to standby.", true, ""},
		{"an arrow", facts + "\n- VH006: available → standby", true, ""},
		{"a change told as was and now", facts + " The speed limit on VH014 was 100 km/h and is now 80 km/h.", true, ""},
		{"doubt after a value is about something else", "VH008 has 12% fuel and probably needs a tanker. VH014 took over TR0009.", true, ""},
		{"a level negated", "VH008 has 12% fuel, far from full. VH014 took over TR0009.", true, ""},
		{"a row's old value stated as now", facts + "\n\nVH006: status available", false, "before the task changed it"},
		{"an old number stated as now", facts + "\n\nVH014: speed limit 100 km/h", false, "before the task changed it"},
		{"two values for one quantity", "VH008 has 12% or 18% fuel left. VH014 took over TR0009.", false, "offers"},
		{"doubt before a value", "VH008 may have 12% fuel left. VH014 took over TR0009.", false, "uncertain"},
		{"a member hedged", "VH008 has 12% fuel left. VH014 may be the van that took over TR0009.", false, "uncertain"},
		{"words that contradict the level", "VH008 has 12% fuel, almost full. VH014 took over TR0009.", false, "no such level"},
		{"a false value for a row the task is about", facts + " VH006 has a speed limit of 120 km/h.", false, "which is 80"},
	}
	for _, c := range cases {
		rec := &results.Record{StopReason: results.StopAnswer, FinalAnswer: c.answer, Calls: []results.Call{}}
		m, err := score.Score(rec, g, rights.Finals[0])
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.right && m.TC != 1:
			t.Errorf("%s: TC %v, want 1: %q", c.name, m.TC, m.Why)
		case !c.right && m.TC != 0:
			t.Errorf("%s: TC 1, want 0", c.name)
		case !c.right && !strings.Contains(strings.Join(m.Why, "; "), c.why):
			t.Errorf("%s: why %q, want it to say %q", c.name, m.Why, c.why)
		}
	}
}
