// Package score is the scorer: the metrics of a finished trial, computed
// from its record and final store alone, with pure functions and no I/O.
// It links nothing of agents, models or the runner, so that a re-scorer
// needs this package and harness/results only (inspect_ai's scorer/,
// which imports no solver).
//
// Each file holds what it scores: tc by the state conditions (state.go),
// the answer facts (facts.go, over subjects.go), read from the answer as a
// document (document.go: its units and their scopes; scan.go and
// labels.go: the names and values a unit states; clauses.go: what its
// clauses negate, hedge or mark as past; numbers.go and words.go), the
// answer's other claims (claims.go) and the changes to the store
// (changes.go); f1 and action_f1 (f1.go);
// arg_acc and action_arg_acc (args.go, over assign.go); a synthesized
// artifact's assertions (assertions.go, comparing calls by their tools'
// argument rules, toolargs.go); and the record's explanation of the
// verdict (explain.go). Values compare by one rule (values.go). What a
// trial is scored against is a Gold (gold.go). The verdict is proven by
// mutation: mutants.go holds the catalogue of operators (over
// operators.go) and oracle.go the oracle's answer in its document forms.
package score

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

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
//   - under faults that took rows offline (Gold.UnderFaults), tc asks the
//     answer to say what was not done on them instead of the conditions,
//     facts and changes on them (offline.go);
//   - false_claims: what the answer says is done, or holds, that the
//     final store does not hold (offline.go), on every trial.
//   - paper: the reference implementation's metrics by its definitions
//     (package paper), against the same gold calls as written and the
//     scenario's contains, or strings derived from its facts (paperGold).
func Score(rec *results.Record, g *Gold, final []byte) (*results.Metrics, error) {
	s := g.Scenario
	m := &results.Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.StopReason == results.StopTimeout, ToolCalls: len(rec.Calls), GoldCalls: len(g.Calls)}
	answered := rec.StopReason == results.StopAnswer
	if !answered {
		m.Why = append(m.Why, "the trial stopped without an answer ("+string(rec.StopReason)+")")
	}
	rows, err := mcpdomain.Rows(final)
	if err != nil {
		return nil, err
	}
	// The final store is indexed once, for the claims, the changes and
	// the explanation.
	store := indexRows(rows)
	state, checkedRows, changed, replaced := s.State, rows, store, map[string][]string{}
	if len(g.offline) > 0 {
		var changedRows map[string][]map[string]any
		state, checkedRows, changedRows, replaced = g.offlineSplit(rows)
		changed = indexRows(changedRows)
	}
	failed := checkRows(checkedRows, state)
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
	scans := facts.labels.read(rec.FinalAnswer)
	var verdicts []factVerdict
	offFacts := map[string][]string{}
	for _, fc := range facts.facts {
		if key := g.offlineFact(fc); key != "" {
			offFacts[key] = append(offFacts[key], fmt.Sprintf("the answer states %s (%s)", jsonString(fc.fact.Value), fc.fact.What))
			continue
		}
		verdicts = append(verdicts, facts.verdict(fc, scans))
	}
	claims := facts
	if len(g.offline) > 0 {
		c := *facts
		c.claims = facts.claims.over(store, g.offline)
		claims = &c
	}
	explainFacts(m, verdicts, claims.falseClaims(scans))
	unmet := slices.Clone(failed)
	unmet = append(unmet, judgeOffline(m, facts, scans, replaced, offFacts)...)
	if answered && strings.TrimSpace(rec.FinalAnswer) != "" {
		if unheld := g.unheld(facts, scans, store, unmet); len(unheld) > 0 {
			m.FalseClaims = len(unheld)
			explain(m).Unheld = unheld
		}
	}
	m.SnapshotOK = slices.ContainsFunc(g.Finals, func(want []byte) bool { return bytes.Equal(want, final) })
	// A right final store makes only changes the task asks for.
	var collateral []string
	if g.changes != nil && !m.SnapshotOK {
		collateral = g.changes.unasked(changed)
	}
	m.ChangesOK = len(collateral) == 0
	if !m.ChangesOK {
		explain(m).Collateral = collateral
	}
	if g.changes != nil && !m.SnapshotOK {
		explain(m).StoreDiff = nearestDiff(store, g.changes.finals)
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
	g.ScoreCalls(m, rec.Calls)
	m.Paper = paper.Score(paper.FromRecord(rec), g.paperGold(facts))
	return m, nil
}

// ScoreCalls fills the scores of the calls themselves: f1, action_f1,
// arg_acc, action_arg_acc and redundant calls (see Score). Score calls it;
// a task without a store (an artifact) calls it alone, beside its own
// assertions.
func (g *Gold) ScoreCalls(m *results.Metrics, calls []results.Call) {
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
