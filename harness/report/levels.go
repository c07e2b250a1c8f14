package report

import (
	"math"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the tables by level: the summary columns most tables
// share, the overall and by_level tables and model_level.

// tcCI is the TC of some rows with its bootstrap interval.
func (r *Report) tcCI(label string, rows []row) stats.CI {
	return Interval(r.seed, label, col(rows, getTC))
}

// CellLabel and ModelLabel label the intervals of a model's TC in one
// cell of the model_level table (a model at a level) and over all its
// trials (the overall table); granite view labels its cells the same, so
// that it shows the report's intervals.
func CellLabel(model string, l level.Level) string { return "ml/" + model + "/" + string(l) }

// ModelLabel: see CellLabel.
func ModelLabel(model string) string { return "model/" + model }

// summary is the columns most tables share.
func (r *Report) summary(label string, rows []row) []any {
	ci := r.tcCI(label, rows)
	return []any{len(rows), ci.Mean, ci.Lo, ci.Hi, stats.Mean(col(rows, getTCS)), stats.Mean(col(rows, getF1)), stats.Mean(col(rows, getAF1)),
		stats.Mean(col(rows, getArg)), stats.Mean(col(rows, getAArg)), stats.Mean(col(rows, getWall)),
		rate(rows, func(x row) bool { return x.err }), rate(rows, func(x row) bool { return x.zero })}
}

// summaryHeader puts each task completion before its strict reading and
// each argument accuracy before its order-free one, so that the pairs read
// side by side.
var summaryHeader = []string{"trials", "tc", "tc_lo", "tc_hi", "tc_strict", "f1", "action_f1", "arg_acc", "action_arg_acc", "wall_s", "error_rate", "zero_call_rate"}

// levelTests are the metrics each level is tested on against L4, in the
// order of their columns; the stars of sig are TC's.
var levelTests = []metricTest{{"tc", getTC}, {"tc_strict", getTCS}, {"f1", getF1}, {"arg_acc", getArg}, {"action_arg_acc", getAArg}}

func (r *Report) overall() *Table {
	t := &Table{Name: "overall", Title: "Overall by model",
		Header: append([]string{"model", "params_b", "quantization"}, append(summaryHeader, "calls", "redundant_rate", "prompt_tokens", "completion_tokens")...)}
	for _, m := range r.Models {
		rows := r.where(func(x row) bool { return x.model == m })
		p := math.NaN()
		if rows[0].params > 0 {
			p = rows[0].params / 1e9
		}
		line := append([]any{m, p, rows[0].quant}, r.summary(ModelLabel(m), rows)...)
		line = append(line, stats.Mean(col(rows, func(x row) float64 { return x.calls })), stats.Mean(col(rows, func(x row) float64 { return x.redundant })),
			stats.Mean(col(rows, func(x row) float64 { return x.ptok })), stats.Mean(col(rows, func(x row) float64 { return x.ctok })))
		t.Rows = append(t.Rows, line)
	}
	return t
}

// byLevel compares every level with L4 by paired bootstrap over trials
// that share model, scenario and repetition, Benjamini-Hochberg adjusted
// over the family of (level, metric) tests.
func (r *Report) byLevel() *Table {
	header := append([]string{"level"}, summaryHeader...)
	for _, m := range levelTests {
		header = append(header, "d_"+m.name, "p_"+m.name)
	}
	t := &Table{Name: "by_level", Title: "By level, with paired bootstrap tests against L4 (BH-adjusted p)", Header: append(header, "sig")}
	base := map[string]row{}
	for _, x := range r.where(func(x row) bool { return x.level == level.L4 }) {
		// Transformed interfaces of L4 share the key; L4 as written is
		// the reference when it was played.
		if b, ok := base[pairKey(x)]; !ok || b.iface != string(level.L4) {
			base[pairKey(x)] = x
		}
	}
	var others []string
	for _, l := range r.Levels {
		if l != level.L4 {
			others = append(others, string(l))
		}
	}
	fam := r.pairedFamily("paired/", others, base, pairKey, func(g string) []row { return r.where(func(x row) bool { return string(x.level) == g }) }, levelTests)
	for _, l := range r.Levels {
		line := append([]any{string(l)}, r.summary("level/"+string(l), r.where(func(x row) bool { return x.level == l }))...)
		cells, sig := fam.cells(string(l))
		if l == level.L4 {
			sig = "ref"
		}
		t.Rows = append(t.Rows, append(append(line, cells...), sig))
	}
	if len(base) == 0 {
		t.Note = "no L4 trials: the levels cannot be compared with L4"
	}
	return t
}

func (r *Report) modelLevel() *Table {
	t := &Table{Name: "model_level", Title: "By model and level",
		Header: append([]string{"model", "level"}, append(summaryHeader, "tc_per_s", "j_per_success", "mean_power_w")...)}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			rows := r.where(func(x row) bool { return x.model == m && x.level == l })
			if len(rows) == 0 {
				continue
			}
			line := append([]any{m, string(l)}, r.summary(CellLabel(m, l), rows)...)
			t.Rows = append(t.Rows, append(line, efficiency(rows)...))
		}
	}
	if len(r.Levels) == 0 {
		t.Note = noLevelNote
	}
	return t
}
