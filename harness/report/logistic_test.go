package report

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
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

var update = flag.Bool("update", false, "rewrite testdata/logistic_without_faults.golden from this run")

// logisticGolden holds the logistic table, as logistic.csv and as
// report.md prints it, of runs without faults.
const logisticGolden = "testdata/logistic_without_faults.golden"

// logisticSection is the logistic table of a report written to out: its
// CSV, then its section of report.md.
func logisticSection(t *testing.T, r *Report) string {
	t.Helper()
	out := t.TempDir()
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(out, "logistic.csv"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(md), "## Logistic regression of TC")
	if start < 0 {
		t.Fatalf("report.md has no logistic table:\n%s", md)
	}
	section := string(md[start:])
	if end := strings.Index(section[2:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	return string(csv) + "\n" + section
}

// TestLogisticWithoutFaultsIsUnchanged: a run without faults gets the
// logistic table it got before the model had fault terms, byte for
// byte, whether it codes levels (the paper's grid) or interfaces, cannot be
// estimated, or has no model sizes. A change meant to alter it rewrites the golden with
// -update and says why in its commit.
func TestLogisticWithoutFaultsIsUnchanged(t *testing.T) {
	paper, err := Load(synthetic(t, func(int) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, c := range []struct {
		name string
		res  *Results
	}{
		{"levels", paper},
		{"interfaces", fitWorld{slim: true}.results(t)},
		{"separated", ifaceResults(t, func(shownIface) bool { return true })},
		{"no sizes", faultWorld{plainOnly: true}.results(t)},
	} {
		got.WriteString("== " + c.name + " ==\n" + logisticSection(t, Build(c.res, 0)) + "\n")
	}
	if *update {
		if err := os.WriteFile(logisticGolden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(logisticGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("the logistic table of a run without faults changed; got:\n%s\nwant:\n%s", got.String(), want)
	}
}

// fitWorld is a run drawn from a known logistic model of TC, under fault
// settings or not: three sized models play two domains' twelve scenarios
// at L4 and at L1 (as the interface l1-slim when slim), four times each.
// Without faults the log-odds are 1 + 0.3·log10(size/1e9), −0.4 at L1,
// −0.5 per step of difficulty. Under flaky they fall by 0.3 at L4 and by
// 2 at L1: the coarse interface recovers worse, an interaction of −1.7.
// only plays a setting at one level (at L4 its interaction has no trial,
// at L1 it is the setting's own term); dead fails every trial at L1 under
// a setting (the interaction separates the outcome).
// Every trial under a setting meets two faults and recovers both at L4,
// none at L1.
type fitWorld struct {
	settings []faults.Setting
	slim     bool
	only     map[string]level.Level
	dead     string
}

func (w fitWorld) results(t testing.TB) *Results {
	t.Helper()
	rng := rand.New(rand.NewPCG(44, 6))
	cfg := &results.Config{Name: "fit", Repetitions: 4, Granularities: []level.Level{level.L4, level.L1}, Faults: w.settings}
	if w.slim {
		cfg.Granularities = cfg.Granularities[:1]
		cfg.Interfaces = surface.Specs{{Name: "l1-slim", Level: level.L1}}
	}
	man := &results.Manifest{Experiment: "fit", Shard: "0/1", Config: cfg, Models: map[string]results.ModelInfo{}}
	models := []struct {
		name, quant string
		size        float64
	}{{"a:1b", "Q4_K_M", 1e9}, {"b:4b", "Q8_0", 4e9}, {"c:12b", "Q4_K_M", 12e9}}
	for _, m := range models {
		cfg.Models = append(cfg.Models, results.ModelEntry{Name: m.name})
		man.Models[m.name] = results.ModelInfo{Parameters: m.size, Quantization: m.quant}
	}
	settings := w.settings
	if len(settings) == 0 {
		settings = []faults.Setting{{Name: "none"}}
	}
	var recs []results.Record
	for _, s := range settings {
		for _, m := range models {
			for _, l := range []level.Level{level.L4, level.L1} {
				if at, ok := w.only[s.Name]; ok && at != l {
					continue
				}
				for i := range 24 {
					domain, sc := []string{"d1", "d2"}[i/12], i%12+1
					scen := fmt.Sprintf("%s-%03d", domain, sc)
					for rep := 1; rep <= 4; rep++ {
						z := 1 + 0.3*math.Log10(m.size/1e9) - 0.5*float64((sc-1)/4)
						if l == level.L1 {
							z -= 0.4
						}
						met := &results.Metrics{WallS: 1, ToolCalls: 2, GoldCalls: 2}
						if !s.None() {
							z -= map[level.Level]float64{level.L4: 0.3, level.L1: 2}[l]
							met.FaultsInjected = 2
							met.FaultsRecovered = map[level.Level]int{level.L4: 2, level.L1: 0}[l]
						}
						met.TC = b2f(rng.Float64() < sigmoid(z))
						if s.Name == w.dead && l == level.L1 {
							met.TC = 0
						}
						rec := results.Record{Index: len(recs), Model: m.name, Domain: domain, Level: l, Scenario: scen,
							Difficulty: []string{"easy", "medium", "hard"}[(sc-1)/4], Repetition: rep, StopReason: "answer", Metrics: met}
						if w.slim && l == level.L1 {
							rec.Interface = "l1-slim"
						}
						rec.TrialID = results.FaultTrialID(m.name, scen, rec.InterfaceName(), s, rep)
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

// logisticRows are the logistic table's rows by term, and its terms in
// order.
func logisticRows(t *testing.T, r *Report) (map[string][]any, []string) {
	t.Helper()
	tab := r.Table("logistic")
	if len(tab.Rows) == 0 {
		t.Fatalf("no logistic fit: %s", tab.Note)
	}
	rows := map[string][]any{}
	var terms []string
	for _, row := range tab.Rows {
		rows[row[0].(string)] = row
		terms = append(terms, row[0].(string))
	}
	return rows, terms
}

// TestLogisticFaultTerms: under faults the model takes every trial, a
// term per setting against the trials without faults and its interaction
// with each level (or interface) term, last. fitWorld's flaky lowers the
// log-odds by 0.3 at L4 and by 2 at L1: the interaction is negative and
// clear, the setting's own term (its effect at L4) small beside it.
func TestLogisticFaultTerms(t *testing.T) {
	flaky := []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2, Kinds: []faults.Kind{faults.Transient}}}
	for _, c := range []struct {
		name     string
		world    fitWorld
		place    string
		noConfig bool
	}{
		{"levels", fitWorld{settings: flaky}, "level=L1", false},
		{"interfaces", fitWorld{settings: flaky, slim: true}, "interface=l1-slim", false},
		// A run.json without its config still names the settings, by
		// the records.
		{"no config", fitWorld{settings: flaky}, "level=L1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := c.world.results(t)
			if c.noConfig {
				res.Manifest.Config = nil
			}
			r := Build(res, 0)
			rows, terms := logisticRows(t, r)
			want := []string{"intercept", c.place, "log10_params", "quant_bits", "domain=d2", "difficulty=medium", "difficulty=hard", "faults=flaky", "faults=flaky:" + c.place}
			if !slices.Equal(terms, want) {
				t.Fatalf("terms %v, want %v", terms, want)
			}
			inter, main := rows["faults=flaky:"+c.place], rows["faults=flaky"]
			if beta, p := inter[1].(float64), inter[6].(float64); !(beta < -0.8 && beta > -2.6 && p < 0.001) {
				t.Errorf("interaction β %v p %v; want about -1.7, clear", beta, p)
			}
			if or, hi := inter[3].(float64), inter[5].(float64); !(or < 1 && hi < 1) {
				t.Errorf("interaction odds ratio %v (upper %v); want below 1", or, hi)
			}
			if beta := main[1].(float64); !(beta < 0 && beta > inter[1].(float64)) {
				t.Errorf("faults=flaky β %v; want negative and smaller than the interaction's %v", beta, inter[1])
			}
			if note := r.Table("logistic").Note; note != "1152 trials, 576 of them under fault settings" {
				t.Errorf("note %q", note)
			}
			md := r.markdown(nil, nil, t.TempDir())
			if !strings.Contains(md, "| faults=flaky:"+c.place+" | ") || !strings.Contains(md, "Note: 1152 trials, 576 of them under fault settings.") {
				t.Errorf("report.md lacks the interaction or the note:\n%s", md)
			}
		})
	}
}

// TestLogisticFaultTermsLeftOut: a term no trial or the terms before it
// give is left out and the note says why; a setting played at L4 alone
// keeps its own term.
func TestLogisticFaultTermsLeftOut(t *testing.T) {
	w := fitWorld{settings: []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}, {Name: "fine", Rate: 0.1}, {Name: "coarse", Rate: 0.1}},
		only: map[string]level.Level{"fine": level.L4, "coarse": level.L1}}
	r := Build(w.results(t), 0)
	_, terms := logisticRows(t, r)
	if want := []string{"faults=flaky", "faults=fine", "faults=coarse", "faults=flaky:level=L1"}; !slices.Equal(terms[7:], want) {
		t.Errorf("fault terms %v, want %v", terms[7:], want)
	}
	note := r.Table("logistic").Note
	for _, want := range []string{"left out: faults=fine:level=L1 (no trial with a model size played under it), faults=coarse:level=L1 (the same trials as faults=coarse)", "1728 trials, 1152 of them under fault settings"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}

// TestLogisticFaultSeparation: a setting that fails every trial at L1
// separates the outcome; the maximum likelihood has no estimate, so the
// fit is the ridge's, finite, its interaction far below the others, and
// the note names the term and the fit.
func TestLogisticFaultSeparation(t *testing.T) {
	w := fitWorld{settings: []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.2}, {Name: "dark", Rate: 0.1, Kinds: []faults.Kind{faults.Offline}}}, dead: "dark"}
	r := Build(w.results(t), 0)
	rows, _ := logisticRows(t, r)
	for term, row := range rows {
		for _, v := range row[1:] {
			if !finite(v.(float64)) {
				t.Errorf("%s: %v not finite", term, row)
			}
		}
	}
	dark, flaky := rows["faults=dark:level=L1"][1].(float64), rows["faults=flaky:level=L1"][1].(float64)
	if !(dark < flaky && flaky < 0) {
		t.Errorf("interactions dark %v, flaky %v; want dark below flaky below 0", dark, flaky)
	}
	note := r.Table("logistic").Note
	if want := fmt.Sprintf("every trial of faults=dark:level=L1 failed, so the maximum likelihood has no finite estimate: fitted by ridge logistic (λ = %g", RidgeLambda); !strings.HasPrefix(note, want) {
		t.Errorf("note %q, want it to start %q", note, want)
	}
}
