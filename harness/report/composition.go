package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/stats"
	"github.com/mcpgranite/granite/internal/surface"
)

// This file is composition, the interface dimension that changes what one
// call does: TC by level and composition with paired tests within each
// level, and the logistic model that tells grouping (the level) and
// composition apart.

// writtenComposition is the composition of a level as written.
const writtenComposition = "as-written"

// compositionOf is the composition of the interface a record played: as
// run.json measured it, else as its name says, else as written.
func compositionOf(rec *results.Record, man *results.Manifest) string {
	if info, ok := man.Interfaces[results.InterfaceKey(rec.Domain, rec.InterfaceName())]; ok {
		return info.Transforms.Get("composition")
	}
	if spec, err := surface.Parse(rec.InterfaceName()); err == nil {
		return spec.Get("composition")
	}
	return writtenComposition
}

// compositions lists the compositions the trials played, as written
// first.
func (r *Report) compositions() []string {
	var out []string
	for _, x := range r.rows {
		if x.comp != "" && !slices.Contains(out, x.comp) {
			out = append(out, x.comp)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return b2i(b == writtenComposition) - b2i(a == writtenComposition) })
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// byComposition is TC (with its interval), the gold's calls per task and
// the subject's, per level and composition, each composition tested
// against the level as written over paired trials (model, domain,
// scenario, repetition), Benjamini-Hochberg adjusted over the family.
func (r *Report) byComposition() *Table {
	t := &Table{Name: "by_composition", Title: "By level and composition: TC, gold and subject calls per task, paired bootstrap tests against the level as written (BH-adjusted p)",
		Header: []string{"level", "composition", "trials", "tc", "tc_lo", "tc_hi", "gold_calls", "calls", "d_tc", "p_tc", "sig"}}
	comps := r.compositions()
	type cell struct{ level, comp string }
	var groups []string
	byGroup := map[string]cell{}
	for _, l := range r.Levels {
		for _, c := range comps {
			g := string(l) + "/" + c
			groups = append(groups, g)
			byGroup[g] = cell{string(l), c}
		}
	}
	rowsOf := func(g string) []row {
		c := byGroup[g]
		return r.where(func(x row) bool { return string(x.level) == c.level && x.comp == c.comp })
	}
	// A trial is paired with the same task at its own level as written.
	ref := map[string]row{}
	for _, x := range r.where(func(x row) bool { return x.comp == writtenComposition }) {
		ref[withinLevel(x)] = x
	}
	tested := slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return byGroup[g].comp == writtenComposition })
	fam := r.pairedFamily("paired-composition/", tested, ref, withinLevel, rowsOf, []metricTest{{"tc", getTC}})
	for _, g := range groups {
		rows := rowsOf(g)
		if len(rows) == 0 {
			continue
		}
		c := byGroup[g]
		ci := r.tcCI("composition/"+g, rows)
		cells, sig := fam.cells(g)
		if c.comp == writtenComposition {
			sig = "ref"
		}
		t.Rows = append(t.Rows, append([]any{c.level, c.comp, len(rows), ci.Mean, ci.Lo, ci.Hi, stats.Mean(col(rows, getGold)), stats.Mean(col(rows, getCalls))}, append(cells, sig)...))
	}
	if len(ref) == 0 {
		t.Note = "no trial played a level as written: the compositions cannot be tested against it"
		t.loud = true
	}
	return t
}

// compositionModel regresses TC on level (against the first played),
// composition (against as written) and their interaction, so that the
// effect of grouping (fewer tools) and that of composition (fewer calls)
// are told apart.
func (r *Report) compositionModel() *Table {
	t := &Table{Name: "composition_model", Title: "Logistic regression of TC on level, composition and their interaction: odds ratios with 95% CIs",
		Header: []string{"term", "beta", "se", "odds_ratio", "or_lo", "or_hi", "p"}}
	comps := slices.DeleteFunc(r.compositions(), func(c string) bool { return c == writtenComposition })
	var levels []string
	for i, l := range r.Levels {
		if i > 0 {
			levels = append(levels, string(l))
		}
	}
	names := []string{"intercept"}
	for _, l := range levels {
		names = append(names, "level="+l)
	}
	for _, c := range comps {
		names = append(names, "composition="+c)
	}
	for _, l := range levels {
		for _, c := range comps {
			names = append(names, "level="+l+":composition="+c)
		}
	}
	rows := r.where(func(x row) bool { return x.comp != "" && !math.IsNaN(x.tc) })
	var X [][]float64
	var y []float64
	for _, x := range rows {
		v := []float64{1}
		for _, l := range levels {
			v = append(v, b2f(string(x.level) == l))
		}
		for _, c := range comps {
			v = append(v, b2f(x.comp == c))
		}
		for _, l := range levels {
			for _, c := range comps {
				v = append(v, b2f(string(x.level) == l && x.comp == c))
			}
		}
		X = append(X, v)
		y = append(y, x.tc)
	}
	// A term no trial has (a composition not played at some level)
	// would only make the model singular: it is left out.
	keep := []int{0}
	for j := 1; j < len(names); j++ {
		if slices.ContainsFunc(X, func(v []float64) bool { return v[j] != 0 }) {
			keep = append(keep, j)
		}
	}
	for i := range X {
		v := make([]float64, len(keep))
		for k, j := range keep {
			v[k] = X[i][j]
		}
		X[i] = v
	}
	kept := make([]string, len(keep))
	for k, j := range keep {
		kept[k] = names[j]
	}
	names = kept
	cs, err := Logistic(X, y, names)
	if err != nil {
		t.Note = fmt.Sprintf("%v (%d trials, %d terms)", err, len(rows), len(names))
		return t
	}
	for _, c := range cs {
		t.Rows = append(t.Rows, []any{c.Name, c.Beta, c.SE, c.OR, c.ORLo, c.ORHi, c.P})
	}
	return t
}
