package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
)

// paperWorld describes a hand-built run whose records carry the
// reference's metrics, with every value chosen so that the tables' cells
// can be worked out by hand.
//
// Three models (a, b, c) play one domain's four scenarios at the four
// levels as written, twice each. The gold tools per level and scenario are
// paperGold's; a trial calls its gold's tools, and at L1 also a tool the
// server does not know (which must not count as a second tool). The
// reference's metrics:
//
//   - task_completion is 1 at L3, and elsewhere 1 for scenario s1 only
//     (0.25 a model): a clear effect at L3, none at L2 and L1;
//   - tool_selection_f1 is 0.5 at L4, 0.75 at L3, 0.9 at L2, 1 at L1;
//   - argument_accuracy is 0.25, 0.5, 0.75 for models a, b, c at every
//     level, so that only the models differ;
//   - sequence_kendall_tau is 0.8 where the gold names two tools or more,
//     else 0 (the definition);
//   - error_recovery_rate is 0.5 at L4 scenario s4, null elsewhere.
//
// granite's tc is 1 but for scenario s4. Model a's first L1 trial of s4
// ends with an error.
type paperWorld struct {
	// old adds a model whose records lack metrics.paper (written before
	// granite kept them).
	old bool
	// queryOnly makes every L2 gold and call name d1_query alone, so that
	// the L2 interface, as the records show it, offers one tool.
	queryOnly bool
}

var paperModelsOf = []string{"a:1b", "b:2b", "c:3b"}

// gold is the gold's tool sequence per level and scenario.
func (w paperWorld) gold(l level.Level, sc int) []string {
	switch l {
	case level.L4:
		return [][]string{{"read_gauge"}, {"read_gauge", "open_hatch"}, {"list_hatches", "open_hatch", "read_gauge"}, {"open_hatch", "open_hatch", "read_gauge"}}[sc]
	case level.L3:
		return [][]string{{"query_status"}, {"query_status", "execute_action"}, {"query_status", "configure"}, {"execute_action", "analyze"}}[sc]
	case level.L2:
		if w.queryOnly {
			return [][]string{{"d1_query"}, {"d1_query", "d1_query"}, {"d1_query"}, {"d1_query", "d1_query"}}[sc]
		}
		return [][]string{{"d1_query"}, {"d1_query", "d1_query"}, {"d1_query", "d1_control"}, {"d1_control", "d1_query"}}[sc]
	}
	return [][]string{{"d1"}, {"d1", "d1"}, {"d1", "d1"}, {"d1", "d1", "d1"}}[sc]
}

func (w paperWorld) results(t testing.TB) *Results {
	t.Helper()
	models := slices.Clone(paperModelsOf)
	if w.old {
		models = append(models, "old:1b")
	}
	cfg := &results.Config{Name: "paper", Repetitions: 2, Granularities: level.Levels}
	man := &results.Manifest{Experiment: "paper", Shard: "0/1", Config: cfg, Models: map[string]results.ModelInfo{}}
	f1 := map[level.Level]float64{level.L4: 0.5, level.L3: 0.75, level.L2: 0.9, level.L1: 1}
	var recs []results.Record
	for mi, m := range models {
		cfg.Models = append(cfg.Models, results.ModelEntry{Name: m})
		for _, l := range level.Levels {
			for sc := range 4 {
				scen := fmt.Sprintf("d1-%03d", sc+1)
				for rep := 1; rep <= 2; rep++ {
					gold := w.gold(l, sc)
					var calls []results.Call
					var align []results.GoldMatch
					for i, tool := range gold {
						calls = append(calls, results.Call{Tool: tool})
						align = append(align, results.GoldMatch{Gold: i, Tool: tool, Call: i, ActionCall: i})
					}
					if l == level.L1 {
						calls = append(calls, results.Call{Tool: "open_hatch", IsError: true, ErrorClass: results.ErrUnknown})
					}
					distinct := slices.Compact(slices.Sorted(slices.Values(gold)))
					p := &results.PaperMetrics{ToolF1: f1[l], ArgAcc: float64(mi+1) / 4, EditDistance: 0.1 * float64(sc)}
					if l == level.L3 || sc == 0 {
						p.TaskCompletion = 1
					}
					if len(distinct) >= 2 {
						p.KendallTau = 0.8
					}
					if l == level.L4 && sc == 3 {
						half := 0.5
						p.ErrorRecovery = &half
					}
					rec := results.Record{TrialID: results.TrialID(m, scen, string(l), rep), Index: len(recs), Model: m, Domain: "d1", Level: l,
						Scenario: scen, Difficulty: "easy", Repetition: rep, StopReason: "answer", Calls: calls,
						Metrics: &results.Metrics{TC: b2f(sc != 3), WallS: float64(mi + 1), ToolCalls: len(calls), GoldCalls: len(gold),
							Explain: &results.Explanation{Alignment: align}, Paper: p}}
					if m == "a:1b" && l == level.L1 && sc == 3 && rep == 1 {
						rec.ErrorClass = results.ErrSchema
					}
					if m == "old:1b" {
						rec.Metrics.Paper = nil
					}
					recs = append(recs, rec)
				}
			}
		}
	}
	man.Trials = len(recs)
	return &Results{Dir: t.TempDir(), Manifest: man, Records: recs}
}

// value is a table cell's number, marked or not, and its mark.
func value(t *testing.T, c any) (float64, string) {
	t.Helper()
	switch x := c.(type) {
	case float64:
		return x, ""
	case int:
		return float64(x), ""
	case marked:
		return x.v, x.mark
	}
	t.Fatalf("cell %v (%T) is not a number", c, c)
	return 0, ""
}

// TestPaperModels pins Table I's cells, worked out by hand from
// paperWorld: each model's 32 trials, its reference TC with the interval
// around it, granite's TC beside it, F1 and ArgAcc as mean ± sd.
func TestPaperModels(t *testing.T) {
	r := Build(paperWorld{}.results(t), 0)
	tb := r.Table(PaperModelsTable)
	if tb == nil {
		t.Fatalf("no %s table among %v", PaperModelsTable, tableNames(r))
	}
	if got := strings.Join(tb.Header, " "); got != "model trials tc tc_lo tc_hi granite_tc f1 f1_sd arg_acc arg_acc_sd wall_s error_rate calls f1_no_info" {
		t.Errorf("header %s", got)
	}
	if len(tb.Rows) != 3 {
		t.Fatalf("%d rows, want one per model: %v", len(tb.Rows), tb.Rows)
	}
	// F1 is 0.5, 0.75, 0.9, 1 on 8 trials each: mean 0.7875, sd over 32.
	f1SD := math.Sqrt(8 * (math.Pow(0.5-0.7875, 2) + math.Pow(0.75-0.7875, 2) + math.Pow(0.9-0.7875, 2) + math.Pow(1-0.7875, 2)) / 31)
	for mi, m := range paperModelsOf {
		want := map[string]float64{"trials": 32, "tc": (0.25 + 1 + 0.25 + 0.25) / 4, "granite_tc": 0.75, "f1": 0.7875, "f1_sd": f1SD,
			"arg_acc": float64(mi+1) / 4, "arg_acc_sd": 0, "wall_s": float64(mi + 1), "error_rate": b2f(mi == 0) / 32,
			// A trial calls its gold's tools, and one unknown tool more at
			// L1; the golds have 1, 2, 3, 3 (L4), 1, 2, 2, 2 (L3), 1, 2, 2,
			// 2 (L2) and 1, 2, 2, 3 (L1) calls.
			"calls": float64(9+7+7+8+4) / 16, "f1_no_info": 0.25}
		for col, w := range want {
			got, mk := value(t, cell(t, tb, m, col))
			if !near(got, w, 1e-12) || mk != "" {
				t.Errorf("%s %s = %v%s, want %v", m, col, got, mk, w)
			}
		}
		lo, _ := value(t, cell(t, tb, m, "tc_lo"))
		hi, _ := value(t, cell(t, tb, m, "tc_hi"))
		if !(lo < want["tc"] && want["tc"] < hi) {
			t.Errorf("%s: TC %v outside its interval [%v, %v]", m, want["tc"], lo, hi)
		}
	}
	if !strings.Contains(tb.Note, "f1_no_info") || strings.Contains(tb.Note, markF1) {
		t.Errorf("note %q: want the share column named and no mark (a quarter of each model's trials are L1)", tb.Note)
	}
}

// TestPaperLevels pins Table II's cells: the means of the models' means
// with the model-level interval, the relative change against L4 and its
// marks, the sequence and recovery columns.
func TestPaperLevels(t *testing.T) {
	r := Build(paperWorld{}.results(t), 0)
	tb := r.Table(PaperLevelsTable)
	if tb == nil {
		t.Fatalf("no %s table among %v", PaperLevelsTable, tableNames(r))
	}
	if tb.Header[0] != "level" || len(tb.Rows) != 4 {
		t.Fatalf("header %v, %d rows; want a row per level", tb.Header, len(tb.Rows))
	}
	type want struct {
		tc, relTC, f1, relF1   float64
		tcMark, f1Mark, tauMrk string
		tau, tauNone, f1None   float64
		recovery               float64
		recoveryN              float64
	}
	nan := math.NaN()
	for l, w := range map[string]want{
		"L4": {tc: 0.25, relTC: nan, f1: 0.5, relF1: nan, tau: 0.8 * 3 / 4, tauNone: 0.25, recovery: 0.5, recoveryN: 6},
		"L3": {tc: 1, relTC: 3, f1: 0.75, relF1: 0.5, tcMark: markP01, f1Mark: markP01, tau: 0.8 * 3 / 4, tauNone: 0.25, recovery: nan},
		"L2": {tc: 0.25, relTC: 0, f1: 0.9, relF1: 0.8, f1Mark: markP01, tau: 0.8 * 2 / 4, tauNone: 0.5, recovery: nan},
		"L1": {tc: 0.25, relTC: 0, f1: 1, relF1: 1, f1Mark: markP01, tau: 0, tauNone: 1, f1None: 1, tauMrk: markTau, recovery: nan},
	} {
		for _, c := range []struct {
			col  string
			want float64
			mark string
		}{{"tc", w.tc, ""}, {"rel_tc", w.relTC, w.tcMark}, {"f1", w.f1, map[bool]string{true: markF1}[w.f1None == 1]}, {"rel_f1", w.relF1, w.f1Mark},
			{"arg_acc", 0.5, ""}, {"rel_arg_acc", map[bool]float64{true: nan, false: 0}[l == "L4"], ""},
			{"kendall_tau", w.tau, w.tauMrk}, {"tau_no_info", w.tauNone, ""}, {"f1_no_info", w.f1None, ""},
			{"error_recovery", w.recovery, ""}, {"error_recovery_n", w.recoveryN, ""}, {"models", 3, ""}, {"trials", 24, ""},
			{"zero_call_rate", 0, ""}, {"edit_distance", 0.15, ""}} {
			got, mk := value(t, cell(t, tb, l, c.col))
			if !(near(got, c.want, 1e-12) || math.IsNaN(got) && math.IsNaN(c.want)) || mk != c.mark {
				t.Errorf("%s %s = %v%q, want %v%q", l, c.col, got, mk, c.want, c.mark)
			}
		}
		// The intervals hold their means; ArgAcc's is the bootstrap over
		// the three models' means (0.25, 0.5, 0.75), far wider than one
		// over the 24 trials would be.
		for _, m := range paperTests {
			mean, _ := value(t, cell(t, tb, l, m.name))
			lo, _ := value(t, cell(t, tb, l, m.name+"_lo"))
			hi, _ := value(t, cell(t, tb, l, m.name+"_hi"))
			if !(lo <= mean && mean <= hi) {
				t.Errorf("%s %s: %v outside [%v, %v]", l, m.name, mean, lo, hi)
			}
		}
		lo, _ := value(t, cell(t, tb, l, "arg_acc_lo"))
		hi, _ := value(t, cell(t, tb, l, "arg_acc_hi"))
		if lo != 0.25 || hi != 0.75 {
			t.Errorf("%s: ArgAcc interval [%v, %v], want the models' [0.25, 0.75]", l, lo, hi)
		}
		// No effect, no mark: L2 and L1 complete as L4 does, ArgAcc never
		// moves.
		for _, col := range []string{"p_tc", "p_arg_acc"} {
			p, _ := value(t, cell(t, tb, l, col))
			switch {
			case l == "L4" && !math.IsNaN(p):
				t.Errorf("the reference L4 has %s %v", col, p)
			case l == "L3" && col == "p_tc" && !(p < 0.01):
				t.Errorf("L3's clear TC effect: %s %v, want below 0.01", col, p)
			case l != "L4" && !(l == "L3" && col == "p_tc") && p != 1:
				t.Errorf("%s %s = %v, want 1 (no difference in any pair)", l, col, p)
			}
		}
	}
	for _, s := range []string{markF1 + " F1 over tool-name sets is 1 for any call at L1", markTau + " τ needs two distinct gold tools"} {
		if !strings.Contains(tb.Note, s) {
			t.Errorf("note %q lacks %q", tb.Note, s)
		}
	}
}

// TestPaperNoInformationFromTheData: the F1 and τ marks follow what the
// records show, not the level's name: an L2 whose every gold and call
// names one tool is marked as L1 is; and the interface world, whose
// run.json measures 13 tools for L1, marks no F1.
func TestPaperNoInformationFromTheData(t *testing.T) {
	tb := Build(paperWorld{queryOnly: true}.results(t), 0).Table(PaperLevelsTable)
	for l, marks := range map[string][2]string{"L4": {"", ""}, "L3": {"", ""}, "L2": {markF1, markTau}, "L1": {markF1, markTau}} {
		_, f1 := value(t, cell(t, tb, l, "f1"))
		_, tau := value(t, cell(t, tb, l, "kendall_tau"))
		if f1 != marks[0] || tau != marks[1] {
			t.Errorf("%s: marks %q %q, want %q %q", l, f1, tau, marks[0], marks[1])
		}
	}

	res := ifaceResults(t, all)
	for i := range res.Records {
		m := res.Records[i].Metrics
		m.Paper = &results.PaperMetrics{TaskCompletion: m.TC, ToolF1: 1, ArgAcc: m.ArgAcc}
	}
	r := Build(res, 0)
	tb = r.Table(PaperLevelsTable)
	if tb.Header[0] != "interface" || tb.Header[1] != "level" || len(tb.Rows) != len(ifaceWorld) {
		t.Fatalf("header %v, %d rows; want a row per interface", tb.Header[:2], len(tb.Rows))
	}
	for _, row := range tb.Rows {
		for i, c := range row {
			if m, ok := c.(marked); ok && (m.mark == markF1 || m.mark == markTau) {
				t.Errorf("%v %s marked %q: records without gold tools or one-tool interfaces say nothing of it", row[0], tb.Header[i], m.mark)
			}
		}
	}
	if v, _ := value(t, cell(t, tb, r.Baseline, "rel_tc")); !math.IsNaN(v) {
		t.Errorf("the baseline %s has a relative change %v", r.Baseline, v)
	}
	// The rule of ifaceWorld: few tools succeed, many fail; L4-terse (12
	// tools) falls far below L4 (4).
	if _, mk := value(t, cell(t, tb, "L4-terse", "rel_tc")); mk != markP01 {
		t.Errorf("L4-terse against L4: mark %q, want %q", mk, markP01)
	}
}

// TestPaperTablesSkipRecordsWithout: a model whose records lack the
// reference's metrics has no row, the levels count only the others, and a
// note says how many trials are left out; a run where no record has them
// makes no paper table.
func TestPaperTablesSkipRecordsWithout(t *testing.T) {
	r := Build(paperWorld{old: true}.results(t), 0)
	models := r.Table(PaperModelsTable)
	if slices.ContainsFunc(models.Rows, func(row []any) bool { return row[0] == "old:1b" }) || len(models.Rows) != 3 {
		t.Errorf("rows %v: want a, b and c only", models.Rows)
	}
	if n, _ := value(t, cell(t, r.Table(PaperLevelsTable), "L4", "trials")); n != 24 {
		t.Errorf("L4 counts %v trials, want the 24 that carry the reference's metrics", n)
	}
	want := "96 of 128 scored trials carry the reference's metrics"
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("notes %q lack %q", r.Notes, want)
	}
	if full := Build(paperWorld{}.results(t), 0); slices.ContainsFunc(full.Notes, func(n string) bool { return strings.Contains(n, "reference's metrics") }) {
		t.Errorf("notes %q speak of left-out trials where none is", full.Notes)
	}

	res := paperWorld{}.results(t)
	for i := range res.Records {
		res.Records[i].Metrics.Paper = nil
	}
	r = Build(res, 0)
	for _, name := range []string{PaperModelsTable, PaperLevelsTable} {
		if r.Table(name) != nil {
			t.Errorf("%s made though no record carries the reference's metrics", name)
		}
	}
}

// TestPaperTablesReproduce: one seed, one table, whatever order the
// builders ran in.
func TestPaperTablesReproduce(t *testing.T) {
	res := paperWorld{old: true}.results(t)
	a, b := Build(res, 11), Build(res, 11)
	for _, name := range []string{PaperModelsTable, PaperLevelsTable} {
		if fmt.Sprint(a.Table(name).Rows) != fmt.Sprint(b.Table(name).Rows) || a.Table(name).Note != b.Table(name).Note {
			t.Errorf("%s differs between two reports of one seed", name)
		}
	}
}

// TestPaperTablesWritten: report.md puts the paper tables under their own
// heading, naming the definitions' page, with the marks after the
// numbers; their CSVs hold the numbers alone.
func TestPaperTablesWritten(t *testing.T) {
	r := Build(paperWorld{}.results(t), 0)
	out := t.TempDir()
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, w := range []string{"## The reference implementation's metrics", "docs/paper.md", "### The reference's metrics by model (the paper's Table I)",
		"### The reference's metrics by level, with paired bootstrap tests against L4 (the paper's Table II)", "| L3 | 1.000 |", "3.000" + markP01,
		"1.000" + markF1, "0.000" + markTau, "F1 over tool-name sets is 1 for any call at L1"} {
		if !strings.Contains(s, w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if i, j := strings.Index(s, "## The reference implementation's metrics"), strings.Index(s, "### The reference's metrics by model"); i < 0 || j < i {
		t.Errorf("the paper heading does not come before its tables")
	}
	rows := readCSV(t, filepath.Join(out, PaperLevelsTable+".csv"))
	for _, row := range rows {
		if row["level"] == "L1" && (row["f1"] != "1" || row["kendall_tau"] != "0" || row["rel_tc"] != "0") {
			t.Errorf("paper_levels.csv L1: f1 %q, τ %q, rel_tc %q; want plain numbers", row["f1"], row["kendall_tau"], row["rel_tc"])
		}
		if row["level"] == "L3" && row["rel_tc"] != "3" {
			t.Errorf("paper_levels.csv L3 rel_tc %q, want 3", row["rel_tc"])
		}
	}
}

// TestPaperLevelsWithoutLevels: artifacts of outside tools carry the
// reference's metrics but no level; Table I has their models, Table II
// no rows and a note saying why, among the report's notes.
func TestPaperLevelsWithoutLevels(t *testing.T) {
	res, err := Load(trialSet{models: 2, scenarios: 4, reps: 1, wall: 0.1, artifacts: true}.write(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Records {
		res.Records[i].Metrics.Paper = &results.PaperMetrics{TaskCompletion: 1, ToolF1: 1}
	}
	r := Build(res, 0)
	if n := len(r.Table(PaperModelsTable).Rows); n != 2 {
		t.Errorf("paper_models has %d rows, want 2", n)
	}
	tb := r.Table(PaperLevelsTable)
	want := "no trial that carries the reference's metrics has a level to group it by"
	if len(tb.Rows) != 0 || !strings.Contains(tb.Note, want) || !slices.Contains(r.Notes, tb.Title+": "+tb.Note) {
		t.Errorf("paper_levels: %d rows, note %q, report notes %q; want none and a note saying %q", len(tb.Rows), tb.Note, r.Notes, want)
	}
	out := t.TempDir()
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
}
