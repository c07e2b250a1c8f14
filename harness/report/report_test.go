package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// synthetic writes a results folder shaped like the paper's run: 9 models
// (268M to 20.9B) × 9 domains × 4 levels × 9 scenarios × 3 repetitions =
// 8,748 trials, with outcomes drawn from a seeded model in which L3 helps,
// L1 hurts and size helps a little. keep decides which trials land (a
// partial run).
func synthetic(t testing.TB, keep func(i int) bool) string {
	t.Helper()
	dir := t.TempDir()
	models := []struct {
		name  string
		size  string
		quant string
	}{
		{"fg:270m", "268.10M", "Q8_0"}, {"l32:3b", "3.2B", "Q4_K_M"}, {"g4:3b", "3.4B", "Q4_K_M"},
		{"h3:3b", "3.2B", "Q4_K_M"}, {"m3:8b", "8.0B", "Q4_K_M"}, {"x2:8b", "8.0B", "Q3_K_M"},
		{"mn:12b", "12.2B", "Q4_0"}, {"q3:14b", "14.8B", "Q6_K"}, {"go:20b", "20.9B", "MXFP4"},
	}
	man := &results.Manifest{Experiment: "synthetic", ConfigHash: "feedfacecafebeef", Shard: "0/1", Meter: "nvml",
		Config: &results.Config{Name: "synthetic"}, Models: map[string]results.ModelInfo{}}
	for _, m := range models {
		man.Config.Models = append(man.Config.Models, results.ModelEntry{Name: m.name})
		man.Models[m.name] = results.ModelInfo{ParameterSize: m.size, Parameters: results.ParseSize(m.size), Quantization: m.quant}
	}
	domains := []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9"}
	levelEffect := map[level.Level]float64{level.L4: 0, level.L3: 0.5, level.L2: -0.2, level.L1: -0.6}
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := os.Create(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for mi, m := range models {
		size := results.ParseSize(m.size)
		for _, d := range domains {
			for _, l := range level.Levels {
				for s := 1; s <= 9; s++ {
					diff := []string{"easy", "medium", "hard"}[(s-1)/3]
					for rep := 1; rep <= 3; rep++ {
						z := -0.4 + 0.25*math.Log10(size/1e9) + levelEffect[l] - 0.5*float64((s-1)/3)
						tc := 0.0
						if rng.Float64() < 1/(1+math.Exp(-z)) {
							tc = 1
						}
						wall := 2 + size/1e9*8*(0.8+0.4*rng.Float64())
						energy := wall * (40 + 3*float64(mi))
						calls := rng.IntN(8)
						rec := results.Record{TrialID: fmt.Sprintf("%s/%s-%03d/%s/r%d", m.name, d, s, l, rep), Index: i, Experiment: "synthetic",
							Model: m.name, Agent: "ollama", Domain: d, Level: l, Scenario: fmt.Sprintf("%s-%03d", d, s), Difficulty: diff, Repetition: rep,
							StopReason: "answer", PromptTokens: 500 + calls*100, CompletionTokens: 40 + calls*10,
							Energy: &results.Reading{Meter: meter.NVML, EnergyJ: &energy, Telemetry: &results.Telemetry{Samples: 10, MeanPowerW: energy / wall, MeanGPUUtil: 30 + 5*float64(mi)}},
							Metrics: &results.Metrics{TC: tc, F1: rng.Float64(), ActionF1: rng.Float64(), ArgAcc: rng.Float64(), ZeroToolCall: calls == 0,
								WallS: wall, EnergyJ: &energy, ToolCalls: calls}}
						// The strict TC fails one success in five; action
						// ArgAcc forgives some order. Neither draws from rng,
						// so the world above stays as it was.
						if i%5 != 0 {
							rec.Metrics.TCStrict = tc
						}
						rec.Metrics.ActionArgAcc = math.Min(1, rec.Metrics.ArgAcc+0.1)
						if rng.IntN(20) == 0 {
							rec.ErrorClass = []results.ErrorClass{results.ErrMalformed, results.ErrSchema, results.ErrTimeout}[rng.IntN(3)]
						}
						if keep(i) {
							b, _ := json.Marshal(rec)
							f.Write(append(b, '\n'))
						}
						i++
					}
				}
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	man.Trials, man.Grid = i, i
	b, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, results.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeReport builds the report of a results folder and writes it to a
// temporary folder, returning the files written.
func writeReport(t *testing.T, dir string) (*Report, string, []string) {
	t.Helper()
	res, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return writeReportOf(t, res)
}

// csvRecords are a CSV file's lines, its header first.
func csvRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs := csvRecords(t, path)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return f
}

// TestReportOnThePaperGrid renders the report of a synthetic 8,748-trial
// run and checks it: the PNGs decode at their size, and every table's
// numbers equal a recomputation from trials.csv.
func TestReportOnThePaperGrid(t *testing.T) {
	dir := synthetic(t, func(int) bool { return true })
	r, out, files := writeReport(t, dir)
	if r.Covered != 8748 || r.Planned != 8748 {
		t.Fatalf("covered %d of %d", r.Covered, r.Planned)
	}
	pngs := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".png") {
			continue
		}
		pngs++
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b := img.Bounds(); b.Dx() != PNGWidth || b.Dy() != PNGHeight {
			t.Errorf("%s: %dx%d, want %dx%d", f, b.Dx(), b.Dy(), PNGWidth, PNGHeight)
		}
	}
	if pngs != 6 {
		t.Errorf("%d PNGs, want 6 (power and utilisation included: the run has GPU telemetry)", pngs)
	}
	svg, _ := os.ReadFile(filepath.Join(out, "metrics_by_level.svg"))
	if !strings.Contains(string(svg), ">action ArgAcc<") {
		t.Error("metrics_by_level.svg has no action ArgAcc series")
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if strings.Contains(string(md), "records written before") {
		t.Error("report.md says the strict metrics are missing; the synthetic run has them")
	}
	for _, want := range []string{"covers **8748 of 8748** planned trials", "## By level, with paired bootstrap", "![pareto_tc_wall](pareto_tc_wall.svg)", "| level=L3 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	// Recompute from trials.csv.
	trials := readCSV(t, filepath.Join(out, "trials.csv"))
	type acc struct{ n, tc, tcs, f1, arg, aarg, wall, errs, energy float64 }
	group := func(key func(map[string]string) string) map[string]*acc {
		g := map[string]*acc{}
		for _, tr := range trials {
			k := key(tr)
			if g[k] == nil {
				g[k] = &acc{}
			}
			a := g[k]
			a.n++
			a.tc += num(t, tr["tc"])
			a.tcs += num(t, tr["tc_strict"])
			a.f1 += num(t, tr["f1"])
			a.arg += num(t, tr["arg_acc"])
			a.aarg += num(t, tr["action_arg_acc"])
			a.wall += num(t, tr["wall_s"])
			a.energy += num(t, tr["energy_j"])
			if tr["error"] == "true" {
				a.errs++
			}
		}
		return g
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	check := func(table string, key func(map[string]string) string, g map[string]*acc) {
		rows := readCSV(t, filepath.Join(out, table+".csv"))
		if len(rows) != len(g) {
			t.Errorf("%s: %d rows, recomputed %d groups", table, len(rows), len(g))
		}
		for _, row := range rows {
			a := g[key(row)]
			if a == nil {
				t.Errorf("%s: row %v has no group", table, row)
				continue
			}
			if num(t, row["trials"]) != a.n || !near(num(t, row["tc"]), a.tc/a.n) {
				t.Errorf("%s %s: trials %s tc %s; recomputed %v %v", table, key(row), row["trials"], row["tc"], a.n, a.tc/a.n)
			}
			if s, ok := row["tc_strict"]; ok && (!near(num(t, s), a.tcs/a.n) || a.tcs >= a.tc) {
				t.Errorf("%s %s: tc_strict %s, recomputed %v (tc %v)", table, key(row), s, a.tcs/a.n, a.tc/a.n)
			}
			if f, ok := row["f1"]; ok && (!near(num(t, f), a.f1/a.n) || !near(num(t, row["arg_acc"]), a.arg/a.n) || !near(num(t, row["action_arg_acc"]), a.aarg/a.n) ||
				!near(num(t, row["wall_s"]), a.wall/a.n) || !near(num(t, row["error_rate"]), a.errs/a.n)) {
				t.Errorf("%s %s: f1/arg_acc/action_arg_acc/wall/error_rate differ from the recomputation", table, key(row))
			}
			if j, ok := row["j_per_success"]; ok && a.tc > 0 && !near(num(t, j), a.energy/a.tc) {
				t.Errorf("%s %s: J per success %s, recomputed %v", table, key(row), j, a.energy/a.tc)
			}
			if lo, hi := num(t, row["tc_lo"]), num(t, row["tc_hi"]); !math.IsNaN(lo) && (lo > a.tc/a.n || hi < a.tc/a.n) {
				t.Errorf("%s %s: interval [%v, %v] misses the mean %v", table, key(row), lo, hi, a.tc/a.n)
			}
		}
	}
	by := func(cols ...string) func(map[string]string) string {
		return func(m map[string]string) string {
			var parts []string
			for _, c := range cols {
				parts = append(parts, m[c])
			}
			return strings.Join(parts, "|")
		}
	}
	check("overall", by("model"), group(by("model")))
	check("by_level", by("level"), group(by("level")))
	check("model_level", by("model", "level"), group(by("model", "level")))
	check("model_domain", by("model", "domain"), group(by("model", "domain")))
	check("by_domain", by("domain"), group(by("domain")))
	check("by_difficulty", by("difficulty"), group(by("difficulty")))

	// The synthetic world has L3 > L4 > L2 > L1: the tests must see L3
	// and L1 apart from L4, and the regression the level and size effects.
	lv := map[string]map[string]string{}
	for _, row := range readCSV(t, filepath.Join(out, "by_level.csv")) {
		lv[row["level"]] = row
	}
	if num(t, lv["L3"]["d_tc"]) <= 0 || num(t, lv["L3"]["p_tc"]) > 0.01 || num(t, lv["L1"]["d_tc"]) >= 0 || num(t, lv["L1"]["p_tc"]) > 0.01 {
		t.Errorf("level tests: %v %v", lv["L3"], lv["L1"])
	}
	// The strict TC follows TC; action ArgAcc is ArgAcc shifted, so its
	// paired difference is ArgAcc's but where the shift is capped at 1.
	if num(t, lv["L3"]["d_tc_strict"]) <= 0 || num(t, lv["L1"]["d_tc_strict"]) >= 0 || num(t, lv["L1"]["p_tc_strict"]) > 0.05 ||
		math.Abs(num(t, lv["L3"]["d_action_arg_acc"])-num(t, lv["L3"]["d_arg_acc"])) > 0.01 || math.IsNaN(num(t, lv["L3"]["p_action_arg_acc"])) {
		t.Errorf("level tests of tc_strict and action_arg_acc: %v %v", lv["L3"], lv["L1"])
	}
	coef := map[string]map[string]string{}
	for _, row := range readCSV(t, filepath.Join(out, "logistic.csv")) {
		coef[row["term"]] = row
	}
	if or := num(t, coef["level=L3"]["odds_ratio"]); or < 1.3 || or > 2.2 {
		t.Errorf("L3 odds ratio %v, the world's is e^0.5 = 1.65", or)
	}
	if or := num(t, coef["level=L1"]["odds_ratio"]); or > 0.75 || or < 0.4 {
		t.Errorf("L1 odds ratio %v, the world's is e^-0.6 = 0.55", or)
	}
	sp := readCSV(t, filepath.Join(out, "spearman.csv"))
	if len(sp) != 5 || sp[0]["models"] != "9" || sp[1]["metric"] != "tc_strict" || sp[3]["metric"] != "action_arg_acc" {
		t.Errorf("spearman: %v", sp)
	}
	pk := readCSV(t, filepath.Join(out, "pass_k.csv"))
	if len(pk) != 9*4*3 {
		t.Errorf("pass_k: %d rows", len(pk))
	}
}

// TestReportOnAPartialRun works on a run still in progress and says so.
func TestReportOnAPartialRun(t *testing.T) {
	dir := synthetic(t, func(i int) bool { return i%3 == 0 })
	r, out, _ := writeReport(t, dir)
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if r.Covered != 2916 || !strings.Contains(string(md), "covers **2916 of 8748** planned trials (33.3%)") || !strings.Contains(string(md), "unfinished or partial") {
		t.Errorf("covered %d:\n%.400s", r.Covered, md)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "expected a folder granite run or merge wrote") {
		t.Errorf("empty folder: %v", err)
	}
}

// BenchmarkReport is granite report on the paper's grid (8,748 trials):
// every table with 2,000 bootstrap resamples per interval, the tests, the
// regression and the plots. Target: under 3 s.
func BenchmarkReport(b *testing.B) {
	dir := synthetic(b, func(int) bool { return true })
	for b.Loop() {
		res, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Build(res, 0).Write(b.TempDir()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReportOnArtifactTrials: trials of synthesized artifacts of external
// tools have no level and simple/complex tiers; the report still builds
// every table it can, says why the level tables are empty, regresses on
// the tiers present, and tabulates the assertions.
func TestReportOnArtifactTrials(t *testing.T) {
	dir := t.TempDir()
	models := []string{"a:1b", "b:3b", "c:8b", "d:14b"}
	man := &results.Manifest{Experiment: "arts", ConfigHash: "0123456789abcdef", Shard: "0/1", Meter: "none",
		Config: &results.Config{Name: "arts", Models: results.Entries(models...)}, Models: map[string]results.ModelInfo{}}
	f, err := os.Create(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	i := 0
	for mi, m := range models {
		man.Models[m] = results.ModelInfo{Parameters: float64(mi+1) * 1e9, Quantization: []string{"Q4_K_M", "Q8_0", "Q6_K", "Q4_0"}[mi]}
		for a := range 40 {
			tier := []string{"simple", "complex"}[a%2]
			pass := rng.Float64() < 0.2+0.15*float64(mi)
			tc := 0.0
			if pass {
				tc = 1
			}
			rec := results.Record{TrialID: fmt.Sprintf("%s/x-%d/r1", m, a), Index: i, Model: m, Agent: "ollama", Domain: "tools:x.json",
				Scenario: fmt.Sprintf("x-%d", a), Difficulty: tier, Repetition: 1, Artifacts: "x.jsonl",
				Assertions: []results.Verdict{{Kind: "tool_call", Tool: "t", Severity: "blocker", Passed: pass}, {Kind: "output_schema", Tool: "t", Severity: "warning", Passed: true}},
				Metrics:    &results.Metrics{TC: tc, F1: tc, ArgAcc: tc, WallS: 1}}
			b, _ := json.Marshal(rec)
			f.Write(append(b, '\n'))
			i++
		}
	}
	f.Close()
	man.Trials, man.Grid = i, i
	b, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, results.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, out, _ := writeReport(t, dir)
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"Levels: none", "no trial has a level", "For synthesized artifacts", "| simple | 80 |", "| complex | 80 |", "difficulty=complex"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	rows := readCSV(t, filepath.Join(out, "assertions.csv"))
	if len(rows) != 8 {
		t.Fatalf("assertions.csv: %v", rows)
	}
	for _, row := range rows {
		if row["kind"] == "tool_call" {
			var want float64
			for _, x := range r.rows {
				if x.model == row["model"] {
					want += x.tc / 40
				}
			}
			if got, _ := strconv.ParseFloat(row["passed"], 64); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s: tool_call passed %v, want %v", row["model"], got, want)
			}
		}
	}
}

// TestMarkdownPValues: report.md never prints a p-value as 0; a p that
// underflowed (a logistic z past 37) prints as the bound it is below.
func TestMarkdownPValues(t *testing.T) {
	r := &Report{Results: &Results{Manifest: &results.Manifest{Experiment: "p"}}, Tables: []*Table{{
		Name: "t", Title: "T", Header: []string{"term", "p", "d_tc", "p_tc", "rho"},
		Rows: [][]any{{"a", 0.0, 0.0, 2.0 / (stats.Resamples + 1), 0.0}, {"b", 0.5, 0.25, 1.0, 1.0}},
	}}}
	md := r.markdown(nil, nil, t.TempDir())
	for _, want := range []string{"| a | < 1e-300 | 0.000 | 1.0e-03 | 0.000 |", "| b | 0.500 | 0.250 | 1.000 | 1.000 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

// TestTableHeaders pins the columns of the tables that put the two task
// completions and the two argument accuracies side by side: TC first,
// then TC strict; ArgAcc, then action ArgAcc.
func TestTableHeaders(t *testing.T) {
	r, _, _ := writeReport(t, trialSet{models: 1, levels: 2, scenarios: 1, reps: 1, wall: 1}.write(t))
	summary := "trials tc tc_lo tc_hi tc_strict f1 action_f1 arg_acc action_arg_acc wall_s error_rate zero_call_rate"
	for _, c := range []struct{ table, header string }{
		{"overall", "model params_b quantization " + summary + " calls redundant_rate prompt_tokens completion_tokens"},
		{"model_level", "model level " + summary + " tc_per_s j_per_success mean_power_w"},
		{"by_level", "level " + summary + " d_tc p_tc d_tc_strict p_tc_strict d_f1 p_f1 d_arg_acc p_arg_acc d_action_arg_acc p_action_arg_acc sig"},
		{"model_domain", "model domain trials tc tc_strict"},
	} {
		if got := strings.Join(r.Table(c.table).Header, " "); got != c.header {
			t.Errorf("%s:\n got %s\nwant %s", c.table, got, c.header)
		}
	}
	if got, want := strings.Join(trialHeader, " "), "trial_id model level domain scenario difficulty repetition tc tc_strict f1 action_f1 arg_acc action_arg_acc "+
		"wall_s tool_calls zero_tool_call error error_class timeout redundant_rate prompt_tokens completion_tokens energy_j params quantization"; got != want {
		t.Errorf("trials.csv:\n got %s\nwant %s", got, want)
	}
}

// TestNoteOnRecordsBeforeStrictMetrics: results recorded before tc_strict
// and action_arg_acc existed read 0 there, and the report says why.
func TestNoteOnRecordsBeforeStrictMetrics(t *testing.T) {
	r, _, _ := writeReport(t, trialSet{models: 2, levels: 2, scenarios: 3, reps: 1, wall: 1}.write(t))
	want := []string{
		"TC strict is 0 in every trial while TC is not: records written before granite scored TC strict carry 0 for it",
		"action ArgAcc is 0 in every trial while ArgAcc is not: records written before granite scored action ArgAcc carry 0 for it",
	}
	for _, w := range want {
		if !slices.Contains(r.Notes, w) {
			t.Errorf("notes lack %q: %q", w, r.Notes)
		}
	}
	// Every trial failed: nothing to tell apart.
	r, _, _ = writeReport(t, trialSet{models: 1, levels: 1, scenarios: 1, reps: 1, failed: true}.write(t))
	if len(r.Notes) > 0 && strings.Contains(strings.Join(r.Notes, "|"), "records written before") {
		t.Errorf("notes on failed trials: %q", r.Notes)
	}
}

// TestReportCountsPlannedTrials: records that are not trials of the run's
// plan, or repeat one, never inflate "N of M planned"; when the report
// cannot tell, it says the count passes the plan instead of a share.
func TestReportCountsPlannedTrials(t *testing.T) {
	base := trialSet{models: 2, levels: 2, scenarios: 3, reps: 2, wall: 1}
	for _, c := range []struct {
		name     string
		set      trialSet
		change   func(res *Results)
		covered  int
		note     string
		coverage string
	}{
		{"all planned", base, func(*Results) {}, 24, "", "covers **24 of 24** planned trials (100.0%)"},
		{"repetitions the config lacks", trialSet{models: 2, levels: 2, scenarios: 3, reps: 2, wall: 1, extra: 1}, func(*Results) {}, 24,
			"12 records are not trials of run.json's plan and left out of every table (the first, m0:1b/d1-001/L4/r3: repetition 3, the config has 2)",
			"covers **24 of 24** planned trials"},
		{"failed repetitions the config lacks", trialSet{models: 2, levels: 2, scenarios: 3, reps: 2, wall: 1, extra: 1, failed: true}, func(*Results) {}, 24,
			"12 records are not trials of run.json's plan", "covers **24 of 24** planned trials"},
		{"a model the config lacks", base, func(res *Results) {
			rec := res.Records[0]
			rec.TrialID, rec.Model = "ghost:7b/d1-001/L4/r1", "ghost:7b"
			res.Records = append(res.Records, rec)
		}, 24, "1 record is not a trial of run.json's plan and left out of every table (the first, ghost:7b/d1-001/L4/r1: model ghost:7b is not in the config)", ""},
		{"a level the config lacks", base, func(res *Results) {
			rec := res.Records[0]
			rec.TrialID, rec.Level = "m0:1b/d1-001/L1/r1", level.L1
			res.Records = append(res.Records, rec)
		}, 24, "(the first, m0:1b/d1-001/L1/r1: level L1 is not in the config)", ""},
		{"an id that does not name its trial", base, func(res *Results) {
			rec := res.Records[0]
			rec.TrialID = "m0:1b/other/L4/r1"
			res.Records = append(res.Records, rec)
		}, 24, "(the first, m0:1b/other/L4/r1: its id does not name its model, scenario, interface (or level) and repetition)", ""},
		{"another shard's trial", base, func(res *Results) {
			res.Manifest.Shard, res.Manifest.Trials = "1/2", 12
			var keep []results.Record
			for _, r := range res.Records {
				if r.Index%2 == 1 || r.Index == 0 {
					keep = append(keep, r)
				}
			}
			res.Records = keep
		}, 12, "(the first, m0:1b/d1-001/L4/r1: index 0 is not in shard 1/2)", "covers **12 of 12** planned trials"},
		{"trials under a fault setting", base, func(res *Results) {
			res.Manifest.Config.Faults = []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}}
			res.Manifest.Trials *= 2
			for _, rec := range res.Records {
				rec.Faults, rec.TrialID = "flaky", results.FaultTrialID(rec.Model, rec.Scenario, rec.InterfaceName(), res.Manifest.Config.Faults[1], rec.Repetition)
				res.Records = append(res.Records, rec)
			}
		}, 48, "", "covers **48 of 48** planned trials (100.0%)"},
		{"a fault setting the config lacks", base, func(res *Results) {
			res.Manifest.Config.Faults = []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}}
			rec := res.Records[0]
			rec.Faults, rec.TrialID = "gone", results.FaultTrialID(rec.Model, rec.Scenario, rec.InterfaceName(), faults.Setting{Name: "gone", Rate: 0.5}, rec.Repetition)
			res.Records = append(res.Records, rec)
		}, 24, "(the first, m0:1b/d1-001/L4/gone/r1: fault setting gone is not in the config)", "covers **24 of 24** planned trials"},
		{"a faulted trial under a plain id", base, func(res *Results) {
			res.Manifest.Config.Faults = []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}}
			rec := res.Records[0]
			rec.Faults = "flaky"
			res.Records = append(res.Records[1:], rec)
		}, 23, "its id does not name its model, scenario, interface (or level), fault setting and repetition", ""},
		{"a repeated trial id", base, func(res *Results) {
			res.Records = append(res.Records, res.Records[3])
		}, 24, "1 record repeats a trial id; the first of each counts", "covers **24 of 24**"},
		{"more records than run.json plans", base, func(res *Results) { res.Manifest.Trials = 20 }, 24,
			"the results hold 24 scored trials that fit run.json's config, but it plans 20: run.json does not list the benchmark's scenarios, so the report cannot tell which are extra and covers them all",
			"This report covers **24** trials, **more than the 20 planned** (see the notes), config hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Load(c.set.write(t))
			if err != nil {
				t.Fatal(err)
			}
			c.change(res)
			r := Build(res, 0)
			if r.Covered != c.covered {
				t.Errorf("covered %d, want %d", r.Covered, c.covered)
			}
			failed := 0
			for _, row := range r.Table("errors").Rows {
				failed += row[2].(int)
			}
			if want := map[bool]int{true: c.covered}[c.set.failed]; failed != want {
				t.Errorf("the errors table counts %d failed trials, want %d", failed, want)
			}
			notes := strings.Join(r.Notes, "\n")
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("notes lack %q:\n%s", c.note, notes)
			}
			if c.note == "" && (strings.Contains(notes, "plan") || strings.Contains(notes, "repeat")) {
				t.Errorf("unexpected notes:\n%s", notes)
			}
			md := r.markdown(nil, nil, t.TempDir())
			if !strings.Contains(md, c.coverage) {
				t.Errorf("report.md lacks %q:\n%.300s", c.coverage, md)
			}
		})
	}
}

// TestNoteOnParallelTrials: records of trials that ran at once make the
// report say their latency and energy are not comparable with sequential
// ones, naming the models.
func TestNoteOnParallelTrials(t *testing.T) {
	dir := trialSet{models: 2, levels: 2, scenarios: 2, reps: 1, wall: 1}.write(t)
	r, _, _ := writeReport(t, dir)
	if strings.Contains(strings.Join(r.Notes, "|"), "parallel") {
		t.Errorf("sequential trials noted as parallel: %q", r.Notes)
	}
	path := filepath.Join(dir, results.TrialsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	first := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec results.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = rec.Model
		}
		if rec.Model == first {
			rec.Parallel = 4
		}
		b, _ := json.Marshal(rec)
		out = append(append(out, b...), '\n')
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, _ = writeReport(t, dir)
	want := first + " (parallel 4) ran several trials at once"
	notes := strings.Join(r.Notes, "|")
	if !strings.Contains(notes, want) || !strings.Contains(notes, "not comparable with sequential ones") || strings.Count(notes, "(parallel") != 1 {
		t.Errorf("notes %q; want one naming %q", r.Notes, want)
	}
}

// TestTrialsCSVJoinsTheJournal: each row of trials.csv names its record's
// trial_id and error_class, so a row joins back to trials.jsonl.
func TestTrialsCSVJoinsTheJournal(t *testing.T) {
	dir := synthetic(t, func(i int) bool { return i%7 == 0 })
	res, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]results.Record{}
	for _, rec := range res.Records {
		byID[rec.TrialID] = rec
	}
	_, out, _ := writeReport(t, dir)
	rows := readCSV(t, filepath.Join(out, "trials.csv"))
	if len(rows) != len(byID) {
		t.Fatalf("%d rows for %d records", len(rows), len(byID))
	}
	classed := 0
	for _, row := range rows {
		rec, ok := byID[row["trial_id"]]
		if !ok {
			t.Fatalf("row %v names no record", row)
		}
		if row["error_class"] != string(rec.ErrorClass) || row["model"] != rec.Model || row["scenario"] != rec.Scenario {
			t.Errorf("row %v; record has error_class %q model %q scenario %q", row, rec.ErrorClass, rec.Model, rec.Scenario)
		}
		if row["error_class"] != "" {
			classed++
		}
	}
	if classed == 0 {
		t.Error("no row carries an error class; the trial set should have some")
	}
}

// TestModelTimeSplitsPromptAndGeneration: the model-time table gives a
// model's seconds per trial split into prompt evaluation and generation,
// and the first trial of each (domain, level) apart from the later ones,
// which find the prompt's prefix in the server's cache.
func TestModelTimeSplitsPromptAndGeneration(t *testing.T) {
	man := &results.Manifest{Experiment: "time", Config: &results.Config{Name: "time", Models: results.Entries("m", "builtin:oracle")}, Models: map[string]results.ModelInfo{}}
	var recs []results.Record
	for _, model := range []string{"m", "builtin:oracle"} {
		for _, d := range []string{"d1", "d2"} {
			for s := 1; s <= 3; s++ {
				rec := results.Record{TrialID: fmt.Sprintf("%s/%s-%03d/L2/r1", model, d, s), Index: len(recs), Model: model, Domain: d, Level: level.L2,
					Scenario: fmt.Sprintf("%s-%03d", d, s), Difficulty: "easy", Repetition: 1, StopReason: results.StopAnswer,
					PromptTokens: 100, CompletionTokens: 20, Metrics: &results.Metrics{TC: 1, WallS: 2}}
				if model == "m" {
					prompt := 0.2
					if s == 1 {
						prompt = 5
					}
					rec.Durations = results.Durations{PromptEvalNS: int64(prompt * 1e9), EvalNS: 1e9, ModelWaitNS: int64((prompt + 1.1) * 1e9)}
				}
				recs = append(recs, rec)
			}
		}
	}
	man.Trials = len(recs)
	tb := Build(&Results{Manifest: man, Records: recs}, 0).Table("model_time")
	if len(tb.Rows) != 1 {
		t.Fatalf("rows %v; want one, the model with durations (the built-in agent has none)", tb.Rows)
	}
	got := map[string]any{}
	for i, h := range tb.Header {
		got[h] = tb.Rows[0][i]
	}
	near := func(name string, want float64) {
		if v, ok := got[name].(float64); !ok || math.Abs(v-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	near("prompt_eval_s", (5+0.2+0.2)/3)
	near("generation_s", 1)
	near("first_prompt_eval_s", 5)
	near("later_prompt_eval_s", 0.2)
	near("model_wait_s", (5+0.2+0.2)/3+1.1)
	if got["model"] != "m" || got["trials"] != 6 {
		t.Errorf("row %v", tb.Rows[0])
	}
}
