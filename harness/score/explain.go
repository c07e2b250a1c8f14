package score

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

// nearestDiff compares a final store (indexed) with each right final
// store and returns the difference from the nearest: the one with the
// fewest missing or extra rows and changed fields (the first on a tie).
// The right stores come indexed, decoded once per scenario (changeGold).
func nearestDiff(got map[string]map[string]map[string]any, finals []map[string]map[string]map[string]any) *results.StoreDiff {
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
