package report

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
// fineOnly plays a setting only at L4 (its interaction has no trial);
// dead fails every trial at L1 (the interaction separates the outcome).
// Every trial under a setting meets two faults and recovers both at L4,
// none at L1.
type fitWorld struct {
	settings []faults.Setting
	slim     bool
	fineOnly string
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
				if s.Name == w.fineOnly && l == level.L1 {
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
