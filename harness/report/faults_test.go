package report

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// faultWorld is a hand-built run under faults whose cells can be worked
// out by hand. Two models (a, b) play one domain's eight scenarios at L4
// and L1, twice each, under three settings: none (rate 0: plain trials),
// flaky and mild.
//
//   - Without faults TC is 1, but 0 at L4 for scenario 1: 0.875 at L4, 1
//     at L1.
//   - Under flaky TC is 0 at L1 (a clear effect, -1 against none), and at
//     L4 0 for scenario 2 instead of 1 (differences +1 and -1 that cancel:
//     a null effect). Every trial meets 2 faults; at L4 it recovers both,
//     at L1 one in repetition 1 and none in repetition 2.
//   - Under mild TC is as without faults and no fault was injected.
//
// plainOnly leaves the settings out: a run without faults; slim plays L1
// as an interface of its own, l1-slim.
type faultWorld struct{ plainOnly, slim bool }

var faultSettingsOf = []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}, {Name: "mild", Rate: 0.1}}

func (w faultWorld) results(t testing.TB) *Results {
	t.Helper()
	cfg := &results.Config{Name: "edge", Repetitions: 2, Granularities: []level.Level{level.L4, level.L1},
		Models: []results.ModelEntry{{Name: "a:1b"}, {Name: "b:2b"}}}
	levels := cfg.Granularities
	if w.slim {
		cfg.Granularities = cfg.Granularities[:1]
		cfg.Interfaces = surface.Specs{{Name: "l1-slim", Level: level.L1}}
	}
	settings := faultSettingsOf
	if w.plainOnly {
		settings = settings[:1]
	} else {
		cfg.Faults = settings
	}
	man := &results.Manifest{Experiment: "edge", Shard: "0/1", Config: cfg, Models: map[string]results.ModelInfo{}}
	var recs []results.Record
	for _, s := range settings {
		for _, m := range cfg.ModelNames() {
			for _, l := range levels {
				for sc := 1; sc <= 8; sc++ {
					scen := fmt.Sprintf("d1-%03d", sc)
					for rep := 1; rep <= 2; rep++ {
						tc := b2f(!(l == level.L4 && sc == 1))
						met := &results.Metrics{WallS: 1, ToolCalls: 1, GoldCalls: 1}
						if s.Name == "flaky" {
							switch l {
							case level.L1:
								tc = 0
								met.FaultsRecovered = 2 - rep
								met.FalseClaims = rep - 1 // claims done what it did not recover
							case level.L4:
								tc = b2f(sc != 2)
								met.FaultsRecovered = 2
							}
							met.FaultsInjected = 2
						}
						met.TC = tc
						rec := results.Record{Index: len(recs), Model: m, Domain: "d1",
							Level: l, Scenario: scen, Difficulty: "easy", Repetition: rep, StopReason: "answer", Metrics: met}
						if w.slim && l == level.L1 {
							rec.Interface = "l1-slim"
						}
						rec.TrialID = results.FaultTrialID(m, scen, rec.InterfaceName(), s, rep)
						if !s.None() {
							rec.Faults = s.Name
						}
						recs = append(recs, rec)
					}
				}
			}
		}
	}
	man.Trials = len(recs)
	return &Results{Dir: t.TempDir(), Manifest: man, Records: recs}
}

// faultRow finds a fault table's row by its leading cells.
func faultRow(t *testing.T, tab *Table, lead ...string) []any {
	t.Helper()
	for _, row := range tab.Rows {
		if slices.Equal(lead, []string{row[0].(string), row[1].(string)}) {
			return row
		}
	}
	t.Fatalf("%s has no row %v: %v", tab.Name, lead, tab.Rows)
	return nil
}

// cellOf is a row's cell under a column name.
func cellOf(t *testing.T, tab *Table, row []any, column string) any {
	t.Helper()
	i := slices.Index(tab.Header, column)
	if i < 0 {
		t.Fatalf("%s has no column %s: %v", tab.Name, column, tab.Header)
	}
	return row[i]
}

// sameNumber compares a number with what it should be, NaN with NaN.
func sameNumber(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return near(got, want, 1e-9)
}

// TestFaultTablesByLevel pins by_faults on faultWorld: per setting and
// level the trials, TC, faults per trial, recovery ("–" where none was
// injected), the paired difference against none and its significance:
// flaky lowers TC at L1 (significant: the bootstrap's floor 2/2001, BH
// over the table's four tests) and not at L4 (p 1).
func TestFaultTablesByLevel(t *testing.T) {
	r := Build(faultWorld{}.results(t), 0)
	tab := r.Table(FaultsTable)
	if tab == nil {
		t.Fatalf("no %s table; tables: %v", FaultsTable, r.Tables)
	}
	if want := []string{"faults", "level", "trials", "tc", "tc_lo", "tc_hi", "faults_per_trial", "recovery_rate", "false_claims_per_trial", "d_tc", "p_tc", "sig"}; !slices.Equal(tab.Header, want) {
		t.Fatalf("header %v, want %v", tab.Header, want)
	}
	var order [][2]string
	for _, row := range tab.Rows {
		order = append(order, [2]string{row[0].(string), row[1].(string)})
	}
	if want := [][2]string{{"none", "L4"}, {"none", "L1"}, {"flaky", "L4"}, {"flaky", "L1"}, {"mild", "L4"}, {"mild", "L1"}}; !slices.Equal(order, want) {
		t.Errorf("rows %v, want %v", order, want)
	}
	nan := math.NaN()
	for _, c := range []struct {
		setting, level          string
		tc, perTrial, recovery  float64
		falseClaims, d          float64
		sig                     string
		significant, untestable bool
	}{
		{"none", "L4", 0.875, 0, nan, 0, nan, "ref", false, true},
		{"none", "L1", 1, 0, nan, 0, nan, "ref", false, true},
		{"flaky", "L4", 0.875, 2, 1, 0, 0, "", false, false},
		{"flaky", "L1", 0, 2, 0.25, 0.5, -1, "**", true, false},
		{"mild", "L4", 0.875, 0, nan, 0, 0, "", false, false},
		{"mild", "L1", 1, 0, nan, 0, 0, "", false, false},
	} {
		row := faultRow(t, tab, c.setting, c.level)
		if n := cellOf(t, tab, row, "trials").(int); n != 32 {
			t.Errorf("%s/%s: %d trials, want 32", c.setting, c.level, n)
		}
		for col, want := range map[string]float64{"tc": c.tc, "faults_per_trial": c.perTrial, "recovery_rate": c.recovery, "false_claims_per_trial": c.falseClaims, "d_tc": c.d} {
			if got := cellOf(t, tab, row, col).(float64); !sameNumber(got, want) {
				t.Errorf("%s/%s: %s %v, want %v", c.setting, c.level, col, got, want)
			}
		}
		p := cellOf(t, tab, row, "p_tc").(float64)
		switch {
		case c.untestable && !math.IsNaN(p):
			t.Errorf("%s/%s: the reference row has p %v", c.setting, c.level, p)
		case c.significant && !(p < 0.01):
			t.Errorf("%s/%s: p %v, want a clear effect below 0.01", c.setting, c.level, p)
		case !c.significant && !c.untestable && !(p > 0.5):
			t.Errorf("%s/%s: p %v, want a null effect", c.setting, c.level, p)
		}
		if sig := cellOf(t, tab, row, "sig").(string); sig != c.sig {
			t.Errorf("%s/%s: sig %q, want %q", c.setting, c.level, sig, c.sig)
		}
	}
	// The reference rows are the trials by_level reports: the same
	// interval under the same label.
	for _, l := range []string{"L4", "L1"} {
		ref, lv := faultRow(t, tab, "none", l), r.Table("by_level")
		for _, row := range lv.Rows {
			if row[0] == l && (cellOf(t, tab, ref, "tc_lo") != cellOf(t, lv, row, "tc_lo") || cellOf(t, tab, ref, "tc_hi") != cellOf(t, lv, row, "tc_hi")) {
				t.Errorf("none/%s interval differs from by_level's: %v vs %v", l, ref, row)
			}
		}
	}
	// The table's report.md section: its heading, "–" for no recovery.
	md := r.markdown(nil, nil, t.TempDir())
	for _, want := range []string{"## Under faults\n", "### By fault setting and level, with paired bootstrap tests of TC against none (BH-adjusted p)",
		"| mild | L1 | 32 | 1.000 | 1.000 | 1.000 | 0.000 | – | 0.000 | 0.000 | 1.000 |  |", "CSV: `by_faults.csv`", "CSV: `by_faults_model.csv`"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestFaultTablesByInterface: with interface tables the rows name the
// interface and its level, as by_interface does, and each interface is
// tested against its own trials without faults.
func TestFaultTablesByInterface(t *testing.T) {
	r := Build(faultWorld{slim: true}.results(t), 0)
	tab := r.Table(FaultsTable)
	if tab == nil || r.Interfaces == nil {
		t.Fatalf("no %s table or no interface tables: %v", FaultsTable, r.Interfaces)
	}
	if want := []string{"faults", "interface", "level", "trials"}; !slices.Equal(tab.Header[:4], want) {
		t.Fatalf("header %v, want %v first", tab.Header, want)
	}
	flaky := faultRow(t, tab, "flaky", "l1-slim")
	if flaky[2] != "L1" || cellOf(t, tab, flaky, "d_tc").(float64) != -1 || cellOf(t, tab, flaky, "sig") != "**" {
		t.Errorf("flaky/l1-slim: %v", flaky)
	}
	if d := cellOf(t, tab, faultRow(t, tab, "flaky", "L4"), "d_tc").(float64); d != 0 {
		t.Errorf("flaky/L4: d_tc %v, want 0", d)
	}
	ref, bi := faultRow(t, tab, "none", "l1-slim"), r.Table("by_interface")
	if !slices.ContainsFunc(bi.Rows, func(row []any) bool { return row[0] == "l1-slim" }) {
		t.Fatalf("by_interface has no l1-slim row: %v", bi.Rows)
	}
	for _, row := range bi.Rows {
		if row[0] == "l1-slim" && (cellOf(t, tab, ref, "tc_lo") != cellOf(t, bi, row, "tc_lo") || cellOf(t, tab, ref, "tc") != cellOf(t, bi, row, "tc")) {
			t.Errorf("none/l1-slim differs from by_interface's row: %v vs %v", ref, row)
		}
	}
}

// TestFaultTablesByModel pins by_faults_model: each model's trials of a
// setting pool both levels, so flaky halves TC's drop (-0.5) and the
// recovery is (16·2 + 8·1) / 64 faults.
func TestFaultTablesByModel(t *testing.T) {
	r := Build(faultWorld{}.results(t), 0)
	tab := r.Table(FaultsModelTable)
	if tab == nil {
		t.Fatalf("no %s table", FaultsModelTable)
	}
	if want := []string{"faults", "model", "trials", "tc", "tc_lo", "tc_hi", "faults_per_trial", "recovery_rate", "false_claims_per_trial", "d_tc", "p_tc", "sig"}; !slices.Equal(tab.Header, want) {
		t.Fatalf("header %v, want %v", tab.Header, want)
	}
	if len(tab.Rows) != 6 {
		t.Errorf("%d rows, want 2 models × 3 settings: %v", len(tab.Rows), tab.Rows)
	}
	for _, m := range []string{"a:1b", "b:2b"} {
		flaky := faultRow(t, tab, "flaky", m)
		for col, want := range map[string]float64{"tc": 14.0 / 32, "faults_per_trial": 2, "recovery_rate": 40.0 / 64, "d_tc": -0.5} {
			if got := cellOf(t, tab, flaky, col).(float64); !sameNumber(got, want) {
				t.Errorf("flaky/%s: %s %v, want %v", m, col, got, want)
			}
		}
		if p := cellOf(t, tab, flaky, "p_tc").(float64); !(p < 0.01) || cellOf(t, tab, flaky, "sig") != "**" {
			t.Errorf("flaky/%s: p %v, sig %v; want a clear effect", m, p, cellOf(t, tab, flaky, "sig"))
		}
		mild := faultRow(t, tab, "mild", m)
		if d, p := cellOf(t, tab, mild, "d_tc").(float64), cellOf(t, tab, mild, "p_tc").(float64); d != 0 || p != 1 || cellOf(t, tab, mild, "sig") != "" {
			t.Errorf("mild/%s: d %v p %v; want no effect", m, d, p)
		}
		// The reference row is the model's trials without faults, with
		// the overall table's interval.
		none := faultRow(t, tab, "none", m)
		if got := cellOf(t, tab, none, "tc").(float64); !sameNumber(got, 60.0/64) || cellOf(t, tab, none, "sig") != "ref" {
			t.Errorf("none/%s: %v", m, none)
		}
		for _, row := range r.Table("overall").Rows {
			if row[0] == m && cellOf(t, tab, none, "tc_lo") != cellOf(t, r.Table("overall"), row, "tc_lo") {
				t.Errorf("none/%s interval differs from overall's", m)
			}
		}
	}
}

// TestFaultsLeaveTheOtherTables: every other table is over the trials
// without faults, cell for cell the tables of the same run without
// faults, which has no fault tables and no word of faults in report.md;
// and a complete run under faults is reported complete, with no note of
// trials left out.
func TestFaultsLeaveTheOtherTables(t *testing.T) {
	faulted := Build(faultWorld{}.results(t), 0)
	plain := Build(faultWorld{plainOnly: true}.results(t), 0)
	if plain.Table(FaultsTable) != nil || plain.Table(FaultsModelTable) != nil {
		t.Errorf("a run without faults has fault tables")
	}
	if md := plain.markdown(nil, nil, t.TempDir()); strings.Contains(md, "faults") || strings.Contains(md, "Under faults") {
		t.Errorf("report.md of a run without faults speaks of faults:\n%s", md)
	}
	if len(faulted.Tables) != len(plain.Tables)+2 {
		t.Fatalf("%d tables under faults, %d without; want the fault tables added", len(faulted.Tables), len(plain.Tables))
	}
	for _, pt := range plain.Tables {
		ft := faulted.Table(pt.Name)
		if ft == nil {
			t.Errorf("the run under faults lacks %s", pt.Name)
			continue
		}
		if fmt.Sprint(ft.Header, ft.Rows) != fmt.Sprint(pt.Header, pt.Rows) {
			t.Errorf("%s differs under faults:\n%v\nwithout:\n%v", pt.Name, ft.Rows, pt.Rows)
		}
	}
	if !slices.Equal(faulted.Notes, plain.Notes) {
		t.Errorf("notes under faults %q, without %q", faulted.Notes, plain.Notes)
	}
	if faulted.Covered != 192 || faulted.Planned != 192 {
		t.Errorf("covered %d of %d planned, want 192 of 192", faulted.Covered, faulted.Planned)
	}
	md := faulted.markdown(nil, nil, t.TempDir())
	if !strings.Contains(md, "covers **192 of 192** planned trials (100.0%)") || strings.Contains(md, "unfinished") || strings.Contains(strings.Join(faulted.Notes, "|"), "left out") {
		t.Errorf("a complete run under faults does not read complete:\n%.600s", md)
	}
}

// TestFaultsWithoutAReference: a config whose every setting injects
// faults has no trials to test against; the tables still list the
// settings, untested, and the report says why.
func TestFaultsWithoutAReference(t *testing.T) {
	res := faultWorld{}.results(t)
	res.Manifest.Config.Faults = faultSettingsOf[1:]
	res.Records = slices.DeleteFunc(res.Records, func(rec results.Record) bool { return rec.Faults == "" })
	res.Manifest.Trials = len(res.Records)
	r := Build(res, 0)
	if r.Covered != 128 || r.Planned != 128 {
		t.Errorf("covered %d of %d, want 128 of 128", r.Covered, r.Planned)
	}
	tab := r.Table(FaultsTable)
	if tab == nil || len(tab.Rows) != 4 {
		t.Fatalf("by_faults: %v", tab)
	}
	for _, row := range tab.Rows {
		if p := cellOf(t, tab, row, "p_tc").(float64); !math.IsNaN(p) {
			t.Errorf("%v tested with no trials without faults", row)
		}
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"every trial played under a fault setting", "no trial played without faults: the settings cannot be tested against none"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestFaultsInTrialsCSVAndPlots: trials.csv of a run under faults lists
// every trial, with its setting (the trials without faults under the
// setting of rate 0) and its fault counts in columns after the usual
// ones, and the report draws TC and recovery by setting and level; a run
// without faults keeps trials.csv's columns and draws neither.
func TestFaultsInTrialsCSVAndPlots(t *testing.T) {
	r, out, files := writeReportOf(t, faultWorld{}.results(t))
	rows := readCSV(t, filepath.Join(out, "trials.csv"))
	if len(rows) != r.Covered || len(rows) != 192 {
		t.Fatalf("trials.csv has %d rows, want all %d trials", len(rows), r.Covered)
	}
	header := csvRecords(t, filepath.Join(out, "trials.csv"))[0]
	if want := append(slices.Clone(trialHeader), "faults", "faults_injected", "faults_recovered", "false_claims"); !slices.Equal(header, want) {
		t.Errorf("trials.csv header %v, want %v", header, want)
	}
	count := map[string]int{}
	for _, row := range rows {
		count[row["faults"]]++
		setting := row["faults"]
		if (setting == "none") != !strings.Contains(row["trial_id"], "/"+setting+"/") {
			t.Errorf("%s: setting %s", row["trial_id"], setting)
		}
		want := map[string]string{"none": "0", "mild": "0", "flaky": "2"}[setting]
		if row["faults_injected"] != want {
			t.Errorf("%s: faults_injected %s, want %s", row["trial_id"], row["faults_injected"], want)
		}
		// faultWorld's flaky recovers both faults at L4, one at L1 in
		// repetition 1 and none in repetition 2.
		if setting == "flaky" {
			rec := map[string]string{"L4": "2", "L1": map[string]string{"1": "1", "2": "0"}[row["repetition"]]}[row["level"]]
			if row["faults_recovered"] != rec || row["tc"] != map[string]string{"L4": row["tc"], "L1": "0"}[row["level"]] {
				t.Errorf("%s: recovered %s tc %s", row["trial_id"], row["faults_recovered"], row["tc"])
			}
			claims := map[string]string{"L4": "0", "L1": map[string]string{"1": "0", "2": "1"}[row["repetition"]]}[row["level"]]
			if row["false_claims"] != claims {
				t.Errorf("%s: false_claims %s, want %s", row["trial_id"], row["false_claims"], claims)
			}
		}
	}
	if want := map[string]int{"none": 64, "flaky": 64, "mild": 64}; !maps.Equal(count, want) {
		t.Errorf("trials by setting %v, want %v", count, want)
	}
	for _, name := range []string{"tc_faults", "recovery_faults"} {
		if !slices.Contains(files, filepath.Join(out, name+".png")) {
			t.Errorf("no %s.png among %v", name, files)
		}
		svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// The legend names the settings: none only where TC is drawn
		// (it injects nothing to recover).
		if !strings.Contains(string(svg), ">flaky<") || strings.Contains(string(svg), ">none<") != (name == "tc_faults") {
			t.Errorf("%s.svg's legend is not the settings'", name)
		}
	}
	// A setting has its colour in both figures: flaky is the second
	// series of TC, the first of recovery.
	tc, _, err := r.plotTCFaults()
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := r.plotRecoveryFaults()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := tc.(bars).charts[1].Color, rec.(bars).charts[0].Color; a != b {
		t.Errorf("flaky is %v in tc_faults, %v in recovery_faults", a, b)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "![tc_faults](tc_faults.svg)") || !strings.Contains(string(md), "![recovery_faults](recovery_faults.svg)") {
		t.Errorf("report.md does not show the fault figures")
	}

	_, out, files = writeReportOf(t, faultWorld{plainOnly: true}.results(t))
	if header := csvRecords(t, filepath.Join(out, "trials.csv"))[0]; !slices.Equal(header, trialHeader) {
		t.Errorf("trials.csv of a run without faults has header %v", header)
	}
	if slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, "faults") }) {
		t.Errorf("a run without faults drew %v", files)
	}
}

// writeReportOf writes the report of results built in memory.
func writeReportOf(t *testing.T, res *Results) (*Report, string, []string) {
	t.Helper()
	r := Build(res, 0)
	out := t.TempDir()
	files, err := r.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	return r, out, files
}

// TestFaultRecoveryOfArtifactsIsNotJudged: an artifact trial's
// faults_recovered is absent (no store holds an external tool's effect),
// so its faults count in faults_per_trial but not in recovery_rate, and
// trials.csv leaves its faults_recovered empty rather than 0.
func TestFaultRecoveryOfArtifactsIsNotJudged(t *testing.T) {
	res := faultWorld{}.results(t)
	for i, rec := range res.Records {
		// The flaky L4 trials of model a become artifact trials, whose
		// recovery is not judged; b's keep recovering both faults.
		if rec.Faults == "flaky" && rec.Level == level.L4 && rec.Model == "a:1b" {
			res.Records[i].Artifacts = "played.jsonl"
			res.Records[i].Metrics.FaultsRecovered = 0
		}
	}
	r, out, _ := writeReportOf(t, res)
	row := faultRow(t, r.Table(FaultsTable), "flaky", "L4")
	if got := cellOf(t, r.Table(FaultsTable), row, "recovery_rate").(float64); got != 1 {
		t.Errorf("flaky L4 recovery_rate %v; want 1, over the judged trials alone", got)
	}
	if got := cellOf(t, r.Table(FaultsTable), row, "faults_per_trial").(float64); got != 2 {
		t.Errorf("flaky L4 faults_per_trial %v; want 2, every trial's faults", got)
	}
	empty := 0
	for _, line := range readCSV(t, filepath.Join(out, "trials.csv")) {
		if line["faults_recovered"] == "" {
			empty++
		}
	}
	if empty != 16 {
		t.Errorf("%d trials.csv rows with faults_recovered empty; want the 16 artifact trials", empty)
	}
}
