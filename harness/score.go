package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Gold is what a trial is scored against: the scenario's gold calls at the
// trial's level, and every final store a right solution may leave (the
// gold's, and those of its alternative values and omitted optional
// arguments, which verify proves equally right).
type Gold struct {
	Scenario *speclang.Scenario
	Calls    []*speclang.Call
	Finals   [][]byte
	// exact names arguments compared exactly (enums, IDs, action); other
	// strings are trimmed and case-folded.
	exact map[string]bool
	// actions names the tools that take an action argument; the action of
	// a call of any other tool is "", whatever the call sent.
	actions map[string]bool
	// changes is what the right final stores change, and facts what the
	// answer facts are about, for TC.
	changes *changeGold
	facts   *factGold
}

// NewGold prepares the scoring of a scenario of domain d at a level on the
// domain's generated code; rights are what right solutions leave and read
// (nil: none).
func NewGold(d *speclang.Domain, s *speclang.Scenario, level mcpdomain.Level, rt *mcpdomain.Domain, rights *Rights) *Gold {
	if rights == nil {
		rights = &Rights{}
	}
	changes := newChangeGold(d, s, rt.NewStore().Snapshot(), rights.Finals)
	return newGold(s, level, rt, rights.Finals, changes, newFactGold(d, s, changes, rights.Reads))
}

// newGold is NewGold with what does not depend on the level prepared.
func newGold(s *speclang.Scenario, level mcpdomain.Level, rt *mcpdomain.Domain, finals [][]byte, changes *changeGold, facts *factGold) *Gold {
	g := &Gold{Scenario: s, Calls: s.Gold[level], Finals: finals, exact: map[string]bool{"action": true}, actions: map[string]bool{}, changes: changes, facts: facts}
	for _, op := range rt.Operations {
		for _, a := range op.Args {
			if len(a.Enum) > 0 || a.Entity != "" {
				g.exact[a.Name] = true
			}
		}
	}
	for _, t := range rt.Tools[level] {
		g.actions[t.Name] = t.HasAction()
	}
	return g
}

// Score computes a finished trial's metrics, by these definitions:
//
//   - tc: 1 when the trial ended with an answer, every state condition of
//     the scenario holds, the answer states every answer fact about its
//     subject (see factGold), and the
//     store changed nothing the task did not ask for: compared with the
//     seed, every change is one some right final store makes, created
//     rows matched by content whatever their IDs, free text as present or
//     absent, optional fields left out as right (see changeGold). Else 0,
//     and why lists each reason.
//   - tc_strict: 1 when the trial ended with an answer, the final store
//     equals one of the right final stores byte for byte (snapshots are
//     canonical; τ-bench's reading) and the answer states every fact.
//   - f1: tool selection, over the multisets of called and gold tool names,
//     order ignored. precision = matched calls / calls, recall = matched
//     gold calls / gold calls, F1 their harmonic mean. No calls and no gold
//     calls: 1; exactly one of them empty: 0.
//   - action_f1: the same over (tool, action) pairs; plain f1 flatters L1,
//     where every call has the same tool name. A tool without an action
//     argument has action "", whatever the call sent.
//   - arg_acc: the paper's argument accuracy. The gold calls of each tool
//     are aligned in order with the calls of that tool (k-th with k-th).
//     It is the fraction of required gold key-value pairs (the action
//     included; optional ones excluded) that the aligned call gives a
//     right value. A gold call without required arguments counts as one
//     pair, right when an aligned call exists. Missing calls, missing
//     arguments and wrong values are wrong; extra arguments are not
//     counted. See ValueMatches for "right".
//   - action_arg_acc: the same pairs, the action excluded (it is part of
//     the grouping), with calls paired within the same (tool, action) by
//     the assignment that gets the most pairs right, so that independent
//     steps done in another order than the gold's score alike at every
//     level.
//   - redundant_rate: repeated identical calls (same tool and arguments) /
//     calls.
func Score(rec *results.Record, g *Gold, final []byte) (*results.Metrics, error) {
	s := g.Scenario
	m := &results.Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.StopReason == results.StopTimeout, ToolCalls: len(rec.Calls)}
	answered := rec.StopReason == results.StopAnswer
	if !answered {
		m.Why = append(m.Why, "the trial stopped without an answer ("+string(rec.StopReason)+")")
	}
	rows, err := mcpdomain.Rows(final)
	if err != nil {
		return nil, err
	}
	failed := checkRows(rows, s.State)
	m.StateOK = len(failed) == 0
	for _, f := range failed {
		m.Why = append(m.Why, "state condition fails: "+f)
	}
	if len(failed) > 0 {
		explain(m).FailedConditions = failed
	}
	facts := g.facts
	if facts == nil {
		facts = newFactGold(nil, s, nil, nil)
	}
	explainFacts(m, facts.judge(rec.FinalAnswer))
	m.SnapshotOK = slices.ContainsFunc(g.Finals, func(want []byte) bool { return bytes.Equal(want, final) })
	// A right final store makes only changes the task asks for.
	var collateral []string
	if g.changes != nil && !m.SnapshotOK {
		collateral = g.changes.unasked(rows)
	}
	m.ChangesOK = len(collateral) == 0
	if !m.ChangesOK {
		explain(m).Collateral = collateral
	}
	if g.changes != nil && !m.SnapshotOK {
		explain(m).StoreDiff = nearestDiff(rows, g.changes.finals)
	}
	for _, c := range collateral {
		m.Why = append(m.Why, "a change the task did not ask for: "+c)
	}
	if answered && m.StateOK && m.FactsOK && m.ChangesOK {
		m.TC = 1
	}
	if answered && m.SnapshotOK && m.FactsOK {
		m.TCStrict = 1
	}
	g.callScores(m, rec.Calls)
	return m, nil
}

// callScores fills the scores of the calls themselves: f1, action_f1,
// arg_acc and redundant calls (see Score).
func (g *Gold) callScores(m *results.Metrics, calls []results.Call) {
	var got, want, gotOps, wantOps []string
	for _, c := range g.Calls {
		want = append(want, c.Tool)
		wantOps = append(wantOps, c.Tool+"."+g.goldAction(c))
	}
	seen := map[string]bool{}
	read := g.read(calls)
	for _, c := range read {
		got = append(got, c.tool)
		gotOps = append(gotOps, c.tool+"."+c.action)
		key := c.tool + c.canonical
		if seen[key] {
			m.Redundant++
		}
		seen[key] = true
	}
	if len(calls) > 0 {
		m.RedundantRate = float64(m.Redundant) / float64(len(calls))
	}
	m.F1, m.ActionF1 = F1(got, want), F1(gotOps, wantOps)
	args := g.scoreArgs(read)
	m.ArgAcc, m.ActionArgAcc = args.argAcc, args.actionArgAcc
	explain(m).Alignment = args.matches
}

// goldAction is a gold call's action by the rules of actionOf, read from
// its arguments as they are, without encoding them again for every trial.
func (g *Gold) goldAction(c *speclang.Call) string {
	if has, known := g.actions[c.Tool]; known && !has {
		return ""
	}
	if a, ok := c.Args["action"]; ok && a != nil {
		return fmt.Sprint(a)
	}
	return ""
}

// actionOf is a call's action, or "" for a tool without one: a stray
// action sent to a tool that takes none names no operation.
func (g *Gold) actionOf(tool string, args json.RawMessage) string {
	if has, known := g.actions[tool]; known && !has {
		return ""
	}
	var a struct {
		Action any `json:"action"`
	}
	if json.Unmarshal(results.CutArguments(args), &a) == nil && a.Action != nil {
		return fmt.Sprint(a.Action)
	}
	return ""
}

// readCall is a call as scoring reads it, its arguments decoded once for
// every score (a subject that makes a thousand calls is scored in
// milliseconds). The arguments are read as a record keeps them
// (results.CutArguments), so that a verdict is the same on arguments as
// sent and as journaled: a value too long to keep is never a right one.
type readCall struct {
	tool, action string
	// args are the arguments, nil when they are no JSON object: the call
	// exists, no value of it is right.
	args map[string]any
	// canonical is the arguments re-encoded with sorted keys, so equal
	// arguments compare equal whatever order the model wrote them in (as
	// sent when they are not JSON).
	canonical string
}

// read reads the calls for scoring.
func (g *Gold) read(calls []results.Call) []readCall {
	out := make([]readCall, len(calls))
	for i, c := range calls {
		raw := results.CutArguments(c.Arguments)
		r := readCall{tool: c.Tool, action: g.actionOf(c.Tool, raw), canonical: string(raw)}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			r.args, _ = v.(map[string]any)
			b, _ := json.Marshal(v)
			r.canonical = string(b)
		}
		out[i] = r
	}
	return out
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

// pairs counts the required key-value pairs of a gold call and how many
// of them the arguments got give a right value; withoutAction leaves the
// action out. A gold call without required pairs counts as one, right
// when a call is aligned with it.
func (g *Gold) pairs(gc *speclang.Call, got map[string]any, aligned, withoutAction bool) (right, total int) {
	for name, want := range gc.Args {
		if slices.Contains(gc.Optional, name) || withoutAction && name == "action" {
			continue
		}
		total++
		v, ok := got[name]
		if ok && g.ValueMatches(name, v, append([]any{want}, gc.Alternatives[name]...)) {
			right++
		}
	}
	if total == 0 {
		total = 1
		if aligned {
			right = 1
		}
	}
	return right, total
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
