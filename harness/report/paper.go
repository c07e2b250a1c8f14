package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the reference implementation's metrics (a record's
// metrics.paper) in the paper's two tables: its columns by model (Table I)
// and by level (Table II), by the reference's definitions and with
// granite's statistics. Records without metrics.paper are left out; when
// none has it the tables are not made.
//
// Two of the reference's definitions carry no information on some trials,
// and the tables say so instead of printing a number that looks like one:
//
//   - F1 over sets of tool names is 1 for any call of an interface's one
//     tool (less only for a trial that made no call of it, or also named
//     a tool the interface lacks), so on an interface of one tool it
//     repeats the zero-call rate, near enough. A trial's
//     interface offers one tool when run.json measured it so; unmeasured,
//     when every gold and every call the server accepted (not an unknown
//     tool) of its domain at that interface names one and the same tool.
//   - Kendall τ is 0 by definition with fewer than two matched tools, so a
//     trial whose gold names fewer than two distinct tools (its alignment's
//     tools, or a gold of one call) has τ 0 whatever it did.
//
// A cell is marked when every trial in it is such a trial, whatever the
// level is called; the f1_no_info and tau_no_info columns give the share.

// Marks the paper tables put after a number in report.md.
const (
	markF1  = "ᵃ"
	markTau = "ᵇ"
	// Paired tests against the reference row, BH-adjusted, as the paper
	// marks them.
	markP05 = "†"
	markP01 = "‡"
)

// marked is a number with a footnote mark that report.md prints after it;
// its CSV cell is the number alone.
type marked struct {
	v    float64
	mark string
}

// mark is v with the mark, or v alone when there is none.
func mark(v float64, m string) any {
	if m == "" {
		return v
	}
	return marked{v, m}
}

// daggers marks an adjusted p as the paper does: † below 0.05, ‡ below
// 0.01.
func daggers(p float64) string {
	switch {
	case p < 0.01:
		return markP01
	case p < 0.05:
		return markP05
	}
	return ""
}

func hasPaper(x row) bool { return x.paper != nil }

// The reference's metrics of a row; NaN where the record has none.
var (
	paperTC   = paperGet(func(p *results.PaperMetrics) float64 { return p.TaskCompletion })
	paperF1   = paperGet(func(p *results.PaperMetrics) float64 { return p.ToolF1 })
	paperArg  = paperGet(func(p *results.PaperMetrics) float64 { return p.ArgAcc })
	paperEdit = paperGet(func(p *results.PaperMetrics) float64 { return p.EditDistance })
	paperTau  = paperGet(func(p *results.PaperMetrics) float64 { return p.KendallTau })
	paperRed  = paperGet(func(p *results.PaperMetrics) float64 { return p.RedundantRate })
	// paperRecovery is NaN where no call failed (the reference's null).
	paperRecovery = paperGet(func(p *results.PaperMetrics) float64 {
		if p.ErrorRecovery == nil {
			return math.NaN()
		}
		return *p.ErrorRecovery
	})
)

func paperGet(f func(*results.PaperMetrics) float64) func(row) float64 {
	return func(x row) float64 {
		if x.paper == nil {
			return math.NaN()
		}
		return f(x.paper)
	}
}

// f1NoInfo and tauNoInfo tell the trials where the reference's F1 or τ
// carries no information (see the top of this file).
func f1NoInfo(x row) bool { return x.oneTool }

func tauNoInfo(x row) bool { return x.oneTool || x.goldTools == 0 || x.goldTools == 1 }

// distinctGoldTools counts the distinct tool names of a record's gold:
// those of its alignment, or 1 for a gold of one call; -1 when the record
// does not say.
func distinctGoldTools(rec *results.Record) int {
	m := rec.Metrics
	if m.Explain != nil && len(m.Explain.Alignment) > 0 {
		var names []string
		for _, g := range m.Explain.Alignment {
			if !slices.Contains(names, g.Tool) {
				names = append(names, g.Tool)
			}
		}
		return len(names)
	}
	if m.GoldCalls == 1 {
		return 1
	}
	return -1
}

// toolNames are the tools a record shows its interface offers: its gold's
// and those of its calls the server knew, sorted.
func toolNames(rec *results.Record) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if e := rec.Metrics.Explain; e != nil {
		for _, g := range e.Alignment {
			add(g.Tool)
		}
	}
	for _, c := range rec.Calls {
		if c.ErrorClass != results.ErrUnknown {
			add(c.Tool)
		}
	}
	slices.Sort(out)
	return out
}

// markOneTool sets oneTool on every row whose interface offers a single
// tool: as run.json measured it, else as the records of its domain at
// that interface show it (every gold and accepted call names one tool).
func (r *Report) markOneTool() {
	seen := map[string][]string{}
	key := func(x row) string { return x.domain + "|" + x.iface }
	for _, x := range r.rows {
		k := key(x)
		for _, name := range x.tools {
			if !slices.Contains(seen[k], name) {
				seen[k] = append(seen[k], name)
			}
		}
	}
	for i := range r.rows {
		x := &r.rows[i]
		if x.imet != nil {
			x.oneTool = x.imet.Tools == 1
		} else {
			x.oneTool = len(seen[key(*x)]) == 1
		}
	}
}

// meanSD is the mean and sample standard deviation of xs (NaN below two
// values).
func meanSD(xs []float64) (float64, float64) {
	if len(xs) < 2 {
		return stats.Mean(xs), math.NaN()
	}
	m := stats.Mean(xs)
	ss := 0.0
	for _, v := range xs {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// PaperModelsTable and PaperLevelsTable name the reference's Table I and
// Table II in the report.
const (
	PaperModelsTable = "paper_models"
	PaperLevelsTable = "paper_levels"
)

// isPaperTable tells the tables of the reference's metrics, which
// report.md puts under their own heading.
func isPaperTable(t *Table) bool { return t.Name == PaperModelsTable || t.Name == PaperLevelsTable }

// paperModels is the paper's Table I by the reference's definitions: per
// model, its TC (answer strings) with the trial bootstrap's interval and
// granite's TC beside it, F1 and ArgAcc as mean ± sd, latency, errors
// and calls per trial.
func (r *Report) paperModels() *Table {
	t := &Table{Name: PaperModelsTable, Title: "The reference's metrics by model (the paper's Table I)",
		Header: []string{"model", "trials", "tc", "tc_lo", "tc_hi", "granite_tc", "f1", "f1_sd", "arg_acc", "arg_acc_sd",
			"wall_s", "error_rate", "calls", "f1_no_info"}}
	var f1Marked, shared bool
	for _, m := range r.Models {
		rows := r.where(func(x row) bool { return x.model == m && hasPaper(x) })
		if len(rows) == 0 {
			continue
		}
		ci := Interval(r.seed, "paper-model/"+m, col(rows, paperTC))
		f1, f1SD := meanSD(col(rows, paperF1))
		arg, argSD := meanSD(col(rows, paperArg))
		noInfo := rate(rows, f1NoInfo)
		f1Mark := ""
		if noInfo == 1 {
			f1Mark, f1Marked = markF1, true
		}
		shared = shared || noInfo > 0
		t.Rows = append(t.Rows, []any{m, len(rows), ci.Mean, ci.Lo, ci.Hi, stats.Mean(col(rows, getTC)), mark(f1, f1Mark), f1SD, arg, argSD,
			stats.Mean(col(rows, getWall)), rate(rows, func(x row) bool { return x.err }), stats.Mean(col(rows, getCalls)), noInfo})
	}
	t.Note = strings.Join(noInfoNotes(f1Marked, false, shared, false), "; ")
	return t
}

// paperCoverage says how many scored trials carry the reference's
// metrics, when some do not: the paper tables leave those out.
func (r *Report) paperCoverage() string {
	n := len(r.where(hasPaper))
	if n == 0 || n == len(r.rows) {
		return ""
	}
	return fmt.Sprintf("%d of %d scored trials carry the reference's metrics (metrics.paper); the paper tables leave out the others, recorded before granite kept them", n, len(r.rows))
}

// paperTests are the metrics the paper tests each level on against L4.
var paperTests = []metricTest{{"tc", paperTC}, {"f1", paperF1}, {"arg_acc", paperArg}}

// paperGrouping is how paper_levels groups trials: by interface, tested
// against the report's baseline, when the report has interface tables;
// else by level, tested against L4. It returns the group of a row ("" for
// none), the groups in the order of their rows, the reference group and
// the leading columns of the table.
func (r *Report) paperGrouping() (key func(row) string, groups []string, ref string, header []string) {
	if r.Interfaces != nil {
		return func(x row) string { return x.iface }, r.Interfaces, r.Baseline, []string{"interface", "level"}
	}
	return func(x row) string { return string(x.level) }, r.levelNames(), string(level.L4), []string{"level"}
}

// paperLevels is the paper's Table II by the reference's definitions: per
// level (or interface), TC, F1 and ArgAcc as the mean of the models' means
// with its 95% interval from the bootstrap over models (the paper's
// model-level bootstrap), the relative change of that mean against the
// reference with the paired bootstrap p over trials sharing model,
// domain, scenario and repetition (pairedFamily, BH-adjusted over every
// group × metric test), then the zero-call rate, the sequence metrics,
// the redundant-call rate and the error-recovery rate over the trials
// where a call failed.
func (r *Report) paperLevels() *Table {
	key, names, ref, header := r.paperGrouping()
	for _, m := range paperTests {
		header = append(header, m.name, m.name+"_lo", m.name+"_hi", "rel_"+m.name, "p_"+m.name)
	}
	header = append(header, "models", "trials", "zero_call_rate", "edit_distance", "kendall_tau", "redundant_rate", "error_recovery", "error_recovery_n",
		"f1_no_info", "tau_no_info")
	t := &Table{Name: PaperLevelsTable, Title: fmt.Sprintf("The reference's metrics by %s, with paired bootstrap tests against %s (the paper's Table II)", header[0], ref),
		Header: header}
	rowsOf := func(g string) []row { return r.where(func(x row) bool { return hasPaper(x) && key(x) == g }) }
	var groups []string
	for _, g := range names {
		if len(rowsOf(g)) > 0 {
			groups = append(groups, g)
		}
	}
	base := map[string]row{}
	for _, x := range rowsOf(ref) {
		base[pairKey(x)] = x
	}
	others := slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return g == ref })
	fam := r.pairedFamily("paper-paired/", others, base, pairKey, rowsOf, paperTests)
	cis := map[string][]stats.CI{}
	for _, g := range groups {
		for _, m := range paperTests {
			cis[g] = append(cis[g], Interval(r.seed, "paper-level/"+g+"/"+m.name, r.modelMeans(rowsOf(g), m.get)))
		}
	}
	var f1Marked, tauMarked, f1Shared, tauShared bool
	for _, g := range groups {
		rows := rowsOf(g)
		line := []any{g}
		if r.Interfaces != nil {
			line = append(line, string(rows[0].level))
		}
		f1None, tauNone := rate(rows, f1NoInfo), rate(rows, tauNoInfo)
		f1Shared, tauShared = f1Shared || f1None > 0, tauShared || tauNone > 0
		for mi, m := range paperTests {
			ci := cis[g][mi]
			rel, p := math.NaN(), math.NaN()
			if g != ref {
				if refCI, ok := cis[ref]; ok && refCI[mi].Mean != 0 {
					rel = (ci.Mean - refCI[mi].Mean) / refCI[mi].Mean
				}
				p = fam.adj[g][mi]
			}
			var mean any = ci.Mean
			if m.name == "f1" && f1None == 1 {
				mean, f1Marked = mark(ci.Mean, markF1), true
			}
			line = append(line, mean, ci.Lo, ci.Hi, mark(rel, daggers(p)), p)
		}
		models := 0
		for _, m := range r.Models {
			if slices.ContainsFunc(rows, func(x row) bool { return x.model == m }) {
				models++
			}
		}
		tau := stats.Mean(col(rows, paperTau))
		tauMark := ""
		if tauNone == 1 {
			tauMark, tauMarked = markTau, true
		}
		recovery := col(rows, paperRecovery)
		line = append(line, models, len(rows), rate(rows, func(x row) bool { return x.zero }), stats.Mean(col(rows, paperEdit)), mark(tau, tauMark),
			stats.Mean(col(rows, paperRed)), stats.Mean(recovery), len(recovery), f1None, tauNone)
		t.Rows = append(t.Rows, line)
	}
	var notes []string
	switch {
	case len(groups) == 0:
		notes = append(notes, fmt.Sprintf("no trial that carries the reference's metrics has a %s to group it by (artifacts of tools from outside the benchmark have none)", header[0]))
	case len(base) == 0:
		notes = append(notes, fmt.Sprintf("no %s trial carries the reference's metrics: the rows cannot be compared with it", ref))
	}
	t.Note = strings.Join(append(notes, noInfoNotes(f1Marked, tauMarked, f1Shared, tauShared)...), "; ")
	return t
}

// modelMeans are each model's mean of a metric over rows, in the report's
// order of models: the sample of the paper's model-level bootstrap.
func (r *Report) modelMeans(rows []row, get func(row) float64) []float64 {
	var out []float64
	for _, m := range r.Models {
		if v := stats.Mean(col(slices.DeleteFunc(slices.Clone(rows), func(x row) bool { return x.model != m }), get)); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// noInfoNotes are the sentences under a paper table on the definitions
// that carry no information: one per mark shown, and one on the shares
// when some rows hold such trials.
func noInfoNotes(f1Marked, tauMarked, f1Shared, tauShared bool) []string {
	var out []string
	if f1Marked {
		out = append(out, markF1+" F1 over tool-name sets is 1 for any call at L1: every trial of the row played an interface of one tool (as run.json measured it, or as its records show it), where F1 only tells a trial that called it from one that did not or named a tool the interface lacks")
	}
	if tauMarked {
		out = append(out, markTau+" τ needs two distinct gold tools: every trial of the row has a gold of fewer, where τ is 0 by definition")
	}
	var cols []string
	if f1Shared {
		cols = append(cols, "f1_no_info")
	}
	if tauShared {
		cols = append(cols, "tau_no_info")
	}
	if len(cols) > 0 {
		verb := "gives"
		if len(cols) > 1 {
			verb = "give"
		}
		out = append(out, strings.Join(cols, " and ")+" "+verb+" the share of each row's trials where that metric carries no information (they count in its mean)")
	}
	return out
}

// paperIntro is what report.md says above the paper tables.
func (r *Report) paperIntro() string {
	covered := fmt.Sprintf("All %d scored trials carry them.", len(r.rows))
	if c := r.paperCoverage(); c != "" {
		covered = strings.ToUpper(c[:1]) + c[1:] + "."
	}
	return "## The reference implementation's metrics\n\n" +
		"These tables give the metrics of the paper's reference implementation (a record's `metrics.paper`) by the reference's definitions, " +
		"which differ from granite's metrics of the same names above (docs/paper.md defines them): TC is 1 when the answer contains every expected string, no state read; " +
		"F1 is over sets of tool names; ArgAcc pairs calls by greedy best match; τ is 0 with fewer than two matched tools. " +
		"The statistics are granite's: a model's TC interval is the trial bootstrap; a level's TC, F1 and ArgAcc are the mean of the models' means " +
		"with the 95% interval of 2,000 resamples of the models (the paper's model-level bootstrap); rel_ is the relative change of that mean against the reference row, " +
		"and p_ the paired bootstrap over trials sharing model, domain, scenario and repetition, Benjamini-Hochberg adjusted over every row × metric test " +
		"(" + markP05 + " p<0.05, " + markP01 + " p<0.01, as the paper marks them). " + covered + "\n\n"
}
