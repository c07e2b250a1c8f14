package report

import (
	"fmt"
	"math"

	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the paired bootstrap tests of groups (levels,
// interfaces) against a reference, BH-adjusted as one family.

// metricTest is a metric a table's paired tests compare, by its column
// name.
type metricTest struct {
	name string
	get  func(row) float64
}

// pairKey pairs trials of two groups: the same model, domain, scenario
// and repetition.
func pairKey(x row) string { return fmt.Sprintf("%s|%s|%s|%d", x.model, x.domain, x.scenario, x.rep) }

// withinLevel pairs a trial only with the same task at its own level (a
// composition against the level as written); withinInterface only with
// the same task on its own interface (a fault setting against none).
func withinLevel(x row) string     { return string(x.level) + "|" + pairKey(x) }
func withinInterface(x row) string { return x.iface + "|" + pairKey(x) }

// family is a table's paired tests of groups (levels, interfaces) against
// a reference, on each metric, Benjamini-Hochberg adjusted together.
type family struct {
	metrics int
	// byGroup holds each tested group's mean differences and adjusted p
	// per metric.
	byGroup map[string][]stats.Paired
	adj     map[string][]float64
}

// pairedFamily tests each group's rows (rowsOf) against the reference
// rows, keyed by pair (pairKey, or a narrower key), on every metric by
// paired bootstrap, each test seeded from label, group and metric; a test
// without pairs has no p and is left out of the adjustment.
func (r *Report) pairedFamily(label string, groups []string, ref map[string]row, pair func(row) string, rowsOf func(string) []row, metrics []metricTest) *family {
	f := &family{metrics: len(metrics), byGroup: map[string][]stats.Paired{}, adj: map[string][]float64{}}
	var ps []float64
	type at struct {
		group string
		m     int
	}
	var tested []at
	for _, g := range groups {
		rows := rowsOf(g)
		for mi, m := range metrics {
			var diffs []float64
			for _, x := range rows {
				if b, ok := ref[pair(x)]; ok {
					if d := m.get(x) - m.get(b); !math.IsNaN(d) {
						diffs = append(diffs, d)
					}
				}
			}
			p := stats.PairedBootstrap(diffs, stats.RNG(r.seed, fmt.Sprintf("%s%s/%s", label, g, m.name)))
			f.byGroup[g] = append(f.byGroup[g], p)
			f.adj[g] = append(f.adj[g], math.NaN())
			if !math.IsNaN(p.P) {
				ps = append(ps, p.P)
				tested = append(tested, at{g, mi})
			}
		}
	}
	for j, q := range stats.BH(ps) {
		f.adj[tested[j].group][tested[j].m] = q
	}
	return f
}

// cells are a group's d_ and p_ cells, metric by metric (NaN for the
// reference and untested ones), and the stars of its first metric.
func (f *family) cells(group string) ([]any, string) {
	out := make([]any, 2*f.metrics)
	for i := range out {
		out[i] = math.NaN()
	}
	ps, ok := f.byGroup[group]
	if !ok {
		return out, ""
	}
	for m, p := range ps {
		out[2*m], out[2*m+1] = p.Mean, f.adj[group][m]
	}
	return out, stars(f.adj[group][0])
}
