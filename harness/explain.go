package harness

import (
	"maps"
	"reflect"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// The explanation a record carries (results.Explanation) is computed here,
// beside Score and from the same inputs, so that what granite view shows
// is what scoring decided.

// explain returns the m.Explain of a trial, creating it.
func explain(m *results.Metrics) *results.Explanation {
	if m.Explain == nil {
		m.Explain = &results.Explanation{}
	}
	return m.Explain
}

// missingFact is an answer fact the answer does not state, as data.
func missingFact(f *speclang.Fact) results.Fact {
	return results.Fact{Value: f.Value, What: f.What}
}

// nearestDiff compares a final store (decoded) with each right final
// store and returns the difference from the nearest: the one with the
// fewest missing or extra rows and changed fields (the first on a tie).
// The right stores come indexed, decoded once per scenario (changeGold).
func nearestDiff(final map[string][]map[string]any, finals []map[string]map[string]map[string]any) *results.StoreDiff {
	got := indexRows(final)
	var best *results.StoreDiff
	bestN := 0
	for i, right := range finals {
		d, n := storeDiff(got, right)
		if best == nil || n < bestN {
			d.Right, best, bestN = i, d, n
		}
	}
	if best != nil {
		best.Rights = len(finals)
	}
	return best
}

// storeDiff lists how got differs from want, rows sorted by collection
// and ID, and counts the differences (a row missing or extra counts one,
// a changed row one per field).
func storeDiff(got, want map[string]map[string]map[string]any) (*results.StoreDiff, int) {
	d := &results.StoreDiff{Rows: []results.RowDiff{}}
	n := 0
	colls := slices.Collect(maps.Keys(got))
	for c := range want {
		if _, ok := got[c]; !ok {
			colls = append(colls, c)
		}
	}
	slices.Sort(colls)
	for _, c := range colls {
		ids := slices.Collect(maps.Keys(got[c]))
		for id := range want[c] {
			if _, ok := got[c][id]; !ok {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			g, inGot := got[c][id]
			w, inWant := want[c][id]
			switch {
			case !inGot:
				d.Rows = append(d.Rows, results.RowDiff{Collection: c, ID: id, Change: results.RowMissing})
				n++
			case !inWant:
				d.Rows = append(d.Rows, results.RowDiff{Collection: c, ID: id, Change: results.RowExtra})
				n++
			default:
				var fields []results.FieldDiff
				for _, f := range unionKeys(g, w) {
					// Both stores come from the same canonical encoder.
					if !reflect.DeepEqual(g[f], w[f]) {
						fields = append(fields, results.FieldDiff{Field: f, Got: g[f], Want: w[f]})
					}
				}
				if len(fields) > 0 {
					d.Rows = append(d.Rows, results.RowDiff{Collection: c, ID: id, Change: results.RowChanged, Fields: fields})
					n += len(fields)
				}
			}
		}
	}
	return d, n
}

// argScores are the argument scores of a trial and the pairing behind
// them.
type argScores struct {
	argAcc, actionArgAcc float64
	matches              []results.GoldMatch
}

// scoreArgs pairs each gold call with the calls made, in one pass for
// both argument scores and the record's explanation: arg_acc pairs the
// k-th gold call of a tool with the k-th call of it and counts every
// required pair; action_arg_acc pairs calls within the same tool and
// action by the best assignment and leaves the action out (see Score for
// the rules). The arguments of the arg_acc pairing are compared one by
// one for the explanation.
func (g *Gold) scoreArgs(calls []readCall) argScores {
	args := make([]map[string]any, len(calls))
	byTool := map[string][]int{}
	type op struct{ tool, action string }
	byOp := map[op][]int{}
	for i, c := range calls {
		args[i] = c.args
		byTool[c.tool] = append(byTool[c.tool], i)
		k := op{c.tool, c.action}
		byOp[k] = append(byOp[k], i)
	}
	out := make([]results.GoldMatch, len(g.Calls))
	used := map[string]int{}
	goldByOp := map[op][]int{}
	var order []op
	right, total := 0, 0
	for i, gc := range g.Calls {
		m := results.GoldMatch{Gold: i, Tool: gc.Tool, Action: g.goldAction(gc), Call: -1, ActionCall: -1, Args: []results.ArgMatch{}}
		if k := used[gc.Tool]; k < len(byTool[gc.Tool]) {
			m.Call = byTool[gc.Tool][k]
		}
		used[gc.Tool]++
		var got map[string]any
		if m.Call >= 0 {
			got = args[m.Call]
		}
		r, n := g.pairs(gc, got, m.Call >= 0, false)
		right += r
		total += n
		for _, name := range slices.Sorted(maps.Keys(gc.Args)) {
			v, given := got[name]
			a := results.ArgMatch{Name: name, Want: gc.Args[name], Accept: gc.Alternatives[name], Given: given,
				Optional: slices.Contains(gc.Optional, name)}
			if given {
				a.Got = v
				a.Right = g.ValueMatches(name, v, append([]any{gc.Args[name]}, gc.Alternatives[name]...))
			}
			m.Args = append(m.Args, a)
		}
		out[i] = m
		k := op{gc.Tool, m.Action}
		if goldByOp[k] == nil {
			order = append(order, k)
		}
		goldByOp[k] = append(goldByOp[k], i)
	}
	s := argScores{argAcc: ratio(right, total), matches: out}
	right, total = 0, 0
	for _, k := range order {
		golds, made := goldByOp[k], byOp[k]
		weights := make([][]int, len(golds))
		for i, gi := range golds {
			weights[i] = make([]int, len(made))
			for j, ci := range made {
				weights[i][j], _ = g.pairs(g.Calls[gi], args[ci], true, true)
			}
			_, n := g.pairs(g.Calls[gi], nil, false, true)
			total += n
		}
		r, to := assignment(weights)
		right += r
		for i, j := range to {
			if j >= 0 {
				out[golds[i]].ActionCall = made[j]
			}
		}
	}
	s.actionArgAcc = ratio(right, total)
	return s
}

// ratio is right/total, 1 when nothing counts.
func ratio(right, total int) float64 {
	if total == 0 {
		return 1
	}
	return float64(right) / float64(total)
}
