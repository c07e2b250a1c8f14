package harness

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/generator"
)

// Score computes a finished trial's metrics from its record, the
// scenario's gold at the trial's level and the store it left behind.
//
//   - tc: 1 when the trial ended with an answer, every state condition
//     holds and the answer states every fact; else 0.
//   - f1: tool selection, F1 of the multiset of tools called against the
//     gold's.
//   - action_f1: the same over operations (tool and action), which is f1
//     at L4 and what a coarse tool hides at L3..L1.
//   - arg_acc: the share of gold calls matched, in order, by a call to the
//     same operation with right arguments (every gold argument equal to
//     its value or an alternative, optional ones possibly absent, nothing
//     extra).
func Score(rec *Record, s *generator.Scenario, final []byte) (*Metrics, error) {
	gold := s.Gold[rec.Level]
	m := &Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.ErrorClass == ErrTimeout}
	failed, err := CheckState(final, s.State)
	if err != nil {
		return nil, err
	}
	m.StateOK = len(failed) == 0
	m.FactsOK = true
	for _, f := range s.Answer {
		if !Stated(rec.FinalAnswer, f) {
			m.FactsOK = false
		}
	}
	if rec.StopReason == stopAnswer && m.StateOK && m.FactsOK {
		m.TC = 1
	}
	var got, want, gotOps, wantOps []string
	for _, g := range gold {
		want = append(want, g.Tool)
		wantOps = append(wantOps, g.Tool+"."+callOp(Call{Arguments: g.JSON()}))
	}
	for _, c := range rec.Calls {
		got = append(got, c.Tool)
		gotOps = append(gotOps, c.Tool+"."+callOp(c))
	}
	m.F1, m.ActionF1 = f1(got, want), f1(gotOps, wantOps)
	m.ArgAcc = argAcc(rec.Calls, gold)
	return m, nil
}

// callOp is the action a call asked for, or "" for a tool without one
// (whose tool name then says the operation).
func callOp(c Call) string {
	var a struct {
		Action any `json:"action"`
	}
	if json.Unmarshal(c.Arguments, &a) == nil && a.Action != nil {
		return fmt.Sprint(a.Action)
	}
	return ""
}

// f1 is the F1 score of two multisets.
func f1(got, want []string) float64 {
	if len(got) == 0 || len(want) == 0 {
		return 0
	}
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	hit := 0
	for _, g := range got {
		if left[g] > 0 {
			left[g]--
			hit++
		}
	}
	if hit == 0 {
		return 0
	}
	p, r := float64(hit)/float64(len(got)), float64(hit)/float64(len(want))
	return 2 * p * r / (p + r)
}

// argAcc matches each gold call to the first unused later call of the same
// operation and counts those whose arguments are right.
func argAcc(calls []Call, gold []*generator.Call) float64 {
	if len(gold) == 0 {
		return 0
	}
	right, next := 0, 0
	for _, g := range gold {
		for i := next; i < len(calls); i++ {
			c := calls[i]
			if c.Tool != g.Tool || (g.Args["action"] != nil && callOp(c) != g.Op) {
				continue
			}
			next = i + 1
			if argsMatch(c.Arguments, g) {
				right++
			}
			break
		}
	}
	return float64(right) / float64(len(gold))
}

// argsMatch compares a call's arguments with a gold call's.
func argsMatch(raw json.RawMessage, g *generator.Call) bool {
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		return false
	}
	for k, v := range got {
		w, ok := g.Args[k]
		if !ok {
			return false
		}
		if !sameValue(v, w) && !anySame(v, g.Alternatives[k]) {
			return false
		}
	}
	for k := range g.Args {
		if _, ok := got[k]; !ok && !slices.Contains(g.Optional, k) {
			return false
		}
	}
	return true
}

func sameValue(got, want any) bool {
	return cmp.Equal(normalize(got), normalize(want), valueEqual) || sameText(got, want) || sameInstant(got, want)
}

func anySame(v any, alts []any) bool {
	for _, a := range alts {
		if sameValue(v, a) {
			return true
		}
	}
	return false
}
