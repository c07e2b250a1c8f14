package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/generator/runtime"
)

// Gold is what a trial is scored against: the scenario's gold calls at the
// trial's level, and every final store a right solution may leave (the
// gold's, and those of its alternative values and omitted optional
// arguments, which verify proves equally right).
type Gold struct {
	Scenario *generator.Scenario
	Calls    []*generator.Call
	Finals   [][]byte
	// exact names arguments compared exactly (enums, IDs, action); other
	// strings are trimmed and case-folded.
	exact map[string]bool
}

// NewGold prepares the scoring of a scenario at a level on a domain's
// generated code; finals are the right final snapshots.
func NewGold(s *generator.Scenario, level runtime.Level, rt *runtime.Domain, finals [][]byte) *Gold {
	g := &Gold{Scenario: s, Calls: s.Gold[level], Finals: finals, exact: map[string]bool{"action": true}}
	for _, op := range rt.Operations {
		for _, a := range op.Args {
			if len(a.Enum) > 0 || a.Entity != "" {
				g.exact[a.Name] = true
			}
		}
	}
	return g
}

// Score computes a finished trial's metrics, by these definitions:
//
//   - tc: 1 when the trial ended with an answer, its final store equals
//     one of the gold's final stores byte for byte (snapshots are
//     canonical), and the answer states every answer fact; else 0.
//   - f1: tool selection, over the multisets of called and gold tool names,
//     order ignored. precision = matched calls / calls, recall = matched
//     gold calls / gold calls, F1 their harmonic mean. No calls and no gold
//     calls: 1; exactly one of them empty: 0.
//   - action_f1: the same over (tool, action) pairs; plain f1 flatters L1,
//     where every call has the same tool name.
//   - arg_acc: the gold calls of each tool are aligned in order with the
//     calls of that tool (k-th with k-th). It is the fraction of required
//     gold key-value pairs (the action included; optional ones excluded)
//     that the aligned call gives a right value. A gold call without
//     required arguments counts as one pair, right when an aligned call
//     exists. Missing calls, missing arguments and wrong values are wrong;
//     extra arguments are not counted. See ValueMatches for "right".
//   - redundant_rate: repeated identical calls (same tool and arguments) /
//     calls.
func Score(rec *Record, g *Gold, final []byte) (*Metrics, error) {
	s := g.Scenario
	m := &Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.ErrorClass == ErrTimeout, ToolCalls: len(rec.Calls)}
	failed, err := CheckState(final, s.State)
	if err != nil {
		return nil, err
	}
	m.StateOK = len(failed) == 0
	m.SnapshotOK = slices.ContainsFunc(g.Finals, func(want []byte) bool { return bytes.Equal(want, final) })
	m.FactsOK = true
	for _, f := range s.Answer {
		if !Stated(rec.FinalAnswer, f) {
			m.FactsOK = false
		}
	}
	if rec.StopReason == stopAnswer && m.SnapshotOK && m.FactsOK {
		m.TC = 1
	}
	g.callScores(m, rec.Calls)
	return m, nil
}

// callScores fills the scores of the calls themselves: f1, action_f1,
// arg_acc and redundant calls (see Score).
func (g *Gold) callScores(m *Metrics, calls []Call) {
	var got, want, gotOps, wantOps []string
	for _, c := range g.Calls {
		want = append(want, c.Tool)
		wantOps = append(wantOps, c.Tool+"."+actionOf(c.JSON()))
	}
	seen := map[string]bool{}
	for _, c := range calls {
		got = append(got, c.Tool)
		gotOps = append(gotOps, c.Tool+"."+actionOf(c.Arguments))
		key := c.Tool + string(canonical(c.Arguments))
		if seen[key] {
			m.Redundant++
		}
		seen[key] = true
	}
	if len(calls) > 0 {
		m.RedundantRate = float64(m.Redundant) / float64(len(calls))
	}
	m.F1, m.ActionF1 = F1(got, want), F1(gotOps, wantOps)
	m.ArgAcc = g.ArgAcc(calls)
}

// actionOf is a call's action, or "" for a tool without one.
func actionOf(args json.RawMessage) string {
	var a struct {
		Action any `json:"action"`
	}
	if json.Unmarshal(args, &a) == nil && a.Action != nil {
		return fmt.Sprint(a.Action)
	}
	return ""
}

// canonical re-encodes JSON with sorted keys, so equal arguments compare
// equal whatever order the model wrote them in.
func canonical(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// F1 is the F1 score of two multisets, with F1(∅, ∅) = 1.
func F1(got, want []string) float64 {
	switch {
	case len(got) == 0 && len(want) == 0:
		return 1
	case len(got) == 0 || len(want) == 0:
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

// ArgAcc scores the calls' arguments against the gold (see Score).
func (g *Gold) ArgAcc(calls []Call) float64 {
	byTool := map[string][]map[string]any{}
	for _, c := range calls {
		var args map[string]any
		if json.Unmarshal(c.Arguments, &args) != nil {
			args = nil // unreadable arguments: the call exists, no value is right
		}
		byTool[c.Tool] = append(byTool[c.Tool], args)
	}
	used := map[string]int{}
	right, total := 0, 0
	for _, gc := range g.Calls {
		k := used[gc.Tool]
		used[gc.Tool]++
		var got map[string]any
		aligned := k < len(byTool[gc.Tool])
		if aligned {
			got = byTool[gc.Tool][k]
		}
		pairs := 0
		for name, want := range gc.Args {
			if slices.Contains(gc.Optional, name) {
				continue
			}
			pairs++
			total++
			v, ok := got[name]
			if ok && g.ValueMatches(name, v, append([]any{want}, gc.Alternatives[name]...)) {
				right++
			}
		}
		if pairs == 0 {
			total++
			if aligned {
				right++
			}
		}
	}
	if total == 0 {
		return 1
	}
	return float64(right) / float64(total)
}

// ValueMatches reports whether a model's value of an argument equals one
// of the acceptable values. Numbers compare by value (21 = 21.0); strings
// are trimmed and case-folded, except enums, IDs and the action, which
// must be exact; objects compare key by key and arrays in order, by the
// same rules; a value of another JSON type is wrong.
func (g *Gold) ValueMatches(arg string, got any, accept []any) bool {
	for _, want := range accept {
		if sameValue(got, want, g.exact[arg]) {
			return true
		}
	}
	return false
}
