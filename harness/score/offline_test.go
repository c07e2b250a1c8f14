package score_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestFaultVerdicts holds TC and false_claims to known subjects under
// faults, by the final store and the answer: one that retried and did
// everything, one that gave up on the second lamp and says so, one that
// gave up and claims it was done, in words or by saying nothing of it;
// under offline, where the second lamp cannot be reached, saying so is
// what completes the task.
func TestFaultVerdicts(t *testing.T) {
	spec := spectest.TinyWith(t, spectest.TwoLamps)
	d := spec.Domain("tiny")
	s := d.Scenarios[0]
	dom := tiny.Domain
	rights, err := gold.RightsOf(t.Context(), dom, s)
	if err != nil {
		t.Fatal(err)
	}
	g := score.NewGold(d, s, level.L4, dom, rights)
	first := results.Call{Tool: "set_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP01","level":30}`)}
	second := results.Call{Tool: "set_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP02","on":true,"level":40}`)}
	// final is the store after the calls that applied.
	final := func(applied ...results.Call) []byte {
		st := dom.NewStore()
		for _, c := range applied {
			if _, err := st.Call("set_lamp", c.Arguments); err != nil {
				t.Fatal(err)
			}
		}
		return st.Snapshot()
	}
	failed := func(c results.Call, k faults.Kind) results.Call {
		c.IsError, c.Fault = true, k
		return c
	}
	cases := []struct {
		name   string
		calls  []results.Call
		final  []byte
		answer string
		tc     float64
		// claims is whether false_claims counts any; offline whether
		// the row went offline, named whether the answer says so.
		claims, offline, named bool
	}{
		{"retried: every change made, said as made",
			[]results.Call{first, failed(second, faults.Transient), second}, final(first, second),
			"LP01 is at level 30 and LP02 is on at level 40.", 1, false, false, false},
		{"gave up and says so",
			[]results.Call{first, failed(second, faults.Transient)}, final(first),
			"LP01 is at level 30. LP02 could not be changed: the service was unavailable.", 0, false, false, false},
		{"gave up and claims the level",
			[]results.Call{first, failed(second, faults.RateLimit)}, final(first),
			"LP01 is at level 30 and LP02 is on at level 40.", 0, true, false, false},
		{"gave up and says all is done",
			[]results.Call{first, failed(second, faults.Transient)}, final(first),
			"Done: LP01 is at level 30.", 0, true, false, false},
		{"offline: did the rest and says what was not done",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"LP01 is at level 30.\n\nLP02 did not respond (it is offline), so it was not turned on.", 1, false, true, true},
		{"offline: names the row by its name, in its own words",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"The hall lamp LP01 is at level 30. I couldn't turn on the den lamp: no response from it.", 1, false, true, true},
		{"offline: lead line over the rows not done",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"LP01 is at level 30.\n\nNot done, unreachable:\n- LP02", 1, false, true, true},
		{"offline: claims the unreachable lamp's level",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"LP01 is at level 30 and LP02 is on at level 40.", 0, true, true, false},
		{"offline: says nothing of the unreachable lamp",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"LP01 is at level 30.", 0, false, true, false},
		{"offline: says all is done",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"All done: LP01 is at level 30.", 0, true, true, false},
		{"gave up and declines",
			[]results.Call{first, failed(second, faults.Transient)}, final(first),
			"Sorry, I can't help with that.", 0, false, false, false},
		{"offline: names it, but as done",
			[]results.Call{first, failed(second, faults.Offline)}, final(first),
			"LP01 is at level 30. LP02 is at level 40 now.", 0, true, true, false},
	}
	for _, c := range cases {
		rec := &results.Record{StopReason: results.StopAnswer, FinalAnswer: c.answer, Calls: c.calls, Faults: "flaky"}
		m, err := score.Score(rec, g.UnderFaults(c.calls, dom, level.L4), c.final)
		if err != nil {
			t.Fatal(err)
		}
		why := strings.Join(m.Why, "; ")
		if m.TC != c.tc {
			t.Errorf("%s: TC %v (%s); want %v", c.name, m.TC, why, c.tc)
		}
		if (m.FalseClaims > 0) != c.claims {
			t.Errorf("%s: %d false claims %v; want any: %v", c.name, m.FalseClaims, explained(m).Unheld, c.claims)
		}
		if c.claims && len(explained(m).Unheld) != m.FalseClaims {
			t.Errorf("%s: %d false claims, %d said", c.name, m.FalseClaims, len(explained(m).Unheld))
		}
		off := explained(m).Offline
		if (len(off) > 0) != c.offline {
			t.Errorf("%s: offline rows %+v; want any: %v", c.name, off, c.offline)
		}
		if c.offline {
			if len(off) != 1 || !strings.Contains(off[0].Row, "LP02") || off[0].Named != c.named || len(off[0].Replaced) != 2 {
				t.Errorf("%s: offline %+v; want LP02, its condition and fact replaced, named %v", c.name, off, c.named)
			}
			if !c.named && !strings.Contains(why, "went offline") {
				t.Errorf("%s: why %q does not say the offline row was not named", c.name, why)
			}
		}
	}
}

// TestOfflineWithoutItIsTheVerdict: a trial under faults whose calls met
// no offline fault is scored against the gold unchanged.
func TestOfflineWithoutItIsTheVerdict(t *testing.T) {
	spec := spectest.TinyWith(t, spectest.TwoLamps)
	d := spec.Domain("tiny")
	g := score.NewGold(d, d.Scenarios[0], level.L4, tiny.Domain, nil)
	calls := []results.Call{{Tool: "set_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP01","level":30}`), IsError: true, Fault: faults.Transient}}
	if g.UnderFaults(calls, tiny.Domain, level.L4) != g {
		t.Error("a trial that met no offline fault got another gold")
	}
}

func explained(m *results.Metrics) *results.Explanation {
	if m.Explain == nil {
		return &results.Explanation{}
	}
	return m.Explain
}
