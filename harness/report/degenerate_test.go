package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
)

// trialSet describes a small results folder at the edges of what a run
// can write: the cases where a report used to panic or overstate.
type trialSet struct {
	models, levels, scenarios, reps int
	// sized gives the models sizes in run.json (built-in agents have none).
	sized bool
	// failed fails every trial: TC 0, an error class, no calls.
	failed bool
	// wall is the wall time of the first model's trials; model i takes
	// (i+1) times as long, each trial within ±10% of that.
	wall float64
	// energy meters the trials; without it energy_j is null.
	energy bool
	// artifacts plays artifacts of outside tools: no level, tiers
	// simple and complex.
	artifacts bool
	// extra appends records of repetitions the plan does not have.
	extra int
	// noConfig leaves the config out of run.json, as a hand-made or
	// damaged one may.
	noConfig bool
}

// write puts the set into a results folder and returns the folder.
func (s trialSet) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	man := &results.Manifest{Experiment: "edge", ConfigHash: "0000000000000000", Shard: "0/1", Meter: "none",
		Config: &results.Config{Name: "edge", Repetitions: s.reps}, Models: map[string]results.ModelInfo{}}
	if s.energy {
		man.Meter = meter.NVML
	}
	levels := []level.Level{""}
	if !s.artifacts {
		levels = level.Levels[:s.levels]
		man.Config.Granularities = levels
	}
	var lines []byte
	n := 0
	add := func(rec results.Record) {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	for mi := range s.models {
		model := fmt.Sprintf("m%d:%db", mi, mi+1)
		man.Config.Models = append(man.Config.Models, results.ModelEntry{Name: model})
		if s.sized {
			man.Models[model] = results.ModelInfo{Parameters: float64(mi+1) * 1e9, Quantization: "Q4_K_M"}
		}
		for _, l := range levels {
			for sc := range s.scenarios {
				for rep := 1; rep <= s.reps+s.extra; rep++ {
					rec := s.record(rng, model, mi, l, sc, rep, n)
					if rep <= s.reps {
						n++
					}
					add(rec)
				}
			}
		}
	}
	man.Trials, man.Grid = n, n
	if s.noConfig {
		man.Config = nil
	}
	if err := os.WriteFile(filepath.Join(dir, results.TrialsFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// record is one trial of the set.
func (s trialSet) record(rng *rand.Rand, model string, mi int, l level.Level, sc, rep, index int) results.Record {
	scenario, diff := fmt.Sprintf("d1-%03d", sc+1), []string{"easy", "medium", "hard"}[sc%3]
	id := results.TrialID(model, scenario, string(l), rep)
	rec := results.Record{TrialID: id, Index: index, Experiment: "edge", Model: model, Agent: "ollama", Domain: "d1",
		Level: l, Scenario: scenario, Difficulty: diff, Repetition: rep, StopReason: "answer"}
	if s.artifacts {
		// An artifact trial's scenario is the artifact's id, as the
		// runner records it.
		rec.Scenario = fmt.Sprintf("x-%d", sc)
		rec.TrialID = results.ArtifactTrialID(model, rec.Scenario, rep)
		rec.Domain, rec.Difficulty, rec.Artifacts = "tools:x.json", []string{"simple", "complex"}[sc%2], "x.jsonl"
	}
	wall := s.wall * float64(mi+1) * (0.9 + 0.2*rng.Float64())
	m := &results.Metrics{WallS: wall, ToolCalls: 1 + rng.IntN(4), F1: rng.Float64(), ActionF1: rng.Float64(), ArgAcc: rng.Float64()}
	if rng.Float64() < 0.6 {
		m.TC = 1
	}
	if s.failed {
		rec.StopReason, rec.ErrorClass = "error", results.ErrTransport
		m = &results.Metrics{WallS: wall, ZeroToolCall: true}
	}
	if e := wall * 50; s.energy && !math.IsInf(e, 0) {
		m.EnergyJ = &e
		rec.Energy = &results.Reading{Meter: meter.NVML, EnergyJ: &e, Telemetry: &results.Telemetry{Samples: 1, MeanGPUUtil: 40}}
	}
	rec.Metrics = m
	return rec
}

// degenerate are the sets the report must survive, named.
var degenerate = []struct {
	name string
	set  trialSet
}{
	{"oracle alone: one model, sub-second walls", trialSet{models: 1, levels: 4, scenarios: 3, reps: 1, wall: 0.002}},
	{"one model at one level", trialSet{models: 1, levels: 1, scenarios: 1, reps: 1, wall: 3}},
	{"zero wall times", trialSet{models: 2, levels: 2, scenarios: 3, reps: 2, wall: 0}},
	{"equal walls below a second", trialSet{models: 3, levels: 1, scenarios: 2, reps: 1, wall: 0.5, sized: true}},
	{"every trial failed", trialSet{models: 3, levels: 4, scenarios: 3, reps: 2, wall: 1, failed: true, sized: true, energy: true}},
	{"every trial failed in zero time", trialSet{models: 1, levels: 1, scenarios: 2, reps: 1, wall: 0, failed: true, energy: true}},
	{"energy metered, walls zero", trialSet{models: 2, levels: 2, scenarios: 3, reps: 1, wall: 0, energy: true}},
	{"sized models, no L4", trialSet{models: 4, levels: 2, scenarios: 3, reps: 3, wall: 20, sized: true}},
	{"artifacts: no level", trialSet{models: 2, scenarios: 4, reps: 1, wall: 0.1, artifacts: true}},
	{"no trials", trialSet{models: 0, levels: 4, scenarios: 3, reps: 1, wall: 1}},
	{"huge walls", trialSet{models: 2, levels: 2, scenarios: 2, reps: 1, wall: 1e300, energy: true}},
	{"run.json without its config", trialSet{models: 2, levels: 2, scenarios: 2, reps: 1, wall: 1, noConfig: true}},
}

// TestReportOnDegenerateSets renders the report, plots included, of each
// edge case and checks that it writes report.md, every table's CSV and,
// when there are trials, the Pareto plot.
func TestReportOnDegenerateSets(t *testing.T) {
	for _, c := range degenerate {
		t.Run(c.name, func(t *testing.T) {
			r, out, files := writeReport(t, c.set.write(t))
			want := []string{"report.md", "trials.csv"}
			for _, tb := range r.Tables {
				want = append(want, tb.Name+".csv")
			}
			if c.set.models > 0 {
				want = append(want, "tc_model_domain.svg", "tc_model_domain.png")
				if !c.set.artifacts {
					want = append(want, "pareto_tc_wall.svg", "pareto_tc_wall.png", "tc_model_level.svg")
				}
			}
			for _, w := range want {
				if !slices.Contains(files, filepath.Join(out, w)) {
					t.Errorf("%s not among the files written", w)
				}
			}
			for _, f := range files {
				if st, err := os.Stat(f); err != nil || st.Size() == 0 {
					t.Errorf("%s: empty or missing (%v)", f, err)
				}
			}
			md, _ := os.ReadFile(filepath.Join(out, "report.md"))
			if strings.Contains(string(md), "could not be drawn") || strings.Contains(string(md), "Not available: .") {
				t.Errorf("a figure panicked, or an empty table says nothing:\n%s", md)
			}
		})
	}
}

// TestWallAxis pins when the Pareto plot's wall-time axis is logarithmic,
// and that its range is one the scale can draw.
func TestWallAxis(t *testing.T) {
	for _, c := range []struct {
		walls    []float64
		label    string
		min, max float64
	}{
		{[]float64{0.002}, "mean wall time per trial (s)", 0, 0.0022},
		{[]float64{0, 0}, "mean wall time per trial (s)", 0, 1},
		{[]float64{0.5, 0.5, 0.5}, "mean wall time per trial (s)", 0, 0.55},
		{[]float64{3, 20}, "mean wall time per trial (s)", 0, 22},
		{[]float64{0, 2, 200}, "mean wall time per trial (s)", 0, 220},
		{[]float64{2, 200}, "mean wall time per trial (s, log scale)", 2 / 1.5, 300},
		{[]float64{0.001, 0.01}, "mean wall time per trial (s, log scale)", 0.001 / 1.5, 0.015},
	} {
		p := plot.New()
		label := wallAxis(&p.X, c.walls)
		_, log := p.X.Scale.(plot.LogScale)
		if label != c.label || log != strings.Contains(c.label, "log") || !near(p.X.Min, c.min, 1e-12) || !near(p.X.Max, c.max, 1e-9) {
			t.Errorf("%v: %q [%v, %v] (log %v), want %q [%v, %v]", c.walls, label, p.X.Min, p.X.Max, log, c.label, c.min, c.max)
		}
	}
}

// FuzzReport builds and writes the report of generated trial sets: no
// set may panic it or make it fail. The seeds are the degenerate sets.
func FuzzReport(f *testing.F) {
	for _, c := range degenerate {
		s := c.set
		var flags uint8
		for i, b := range []bool{s.sized, s.failed, s.energy, s.artifacts, s.noConfig} {
			if b {
				flags |= 1 << i
			}
		}
		f.Add(uint8(s.models), uint8(s.levels), uint8(s.scenarios), uint8(s.reps), flags, s.wall, uint8(s.extra))
	}
	f.Fuzz(func(t *testing.T, models, levels, scenarios, reps, flags uint8, wall float64, extra uint8) {
		if math.IsNaN(wall) || math.IsInf(wall, 0) {
			t.Skip("JSON has no NaN or infinity")
		}
		s := trialSet{models: int(models % 5), levels: 1 + int(levels%4), scenarios: 1 + int(scenarios%4), reps: 1 + int(reps%3),
			sized: flags&1 != 0, failed: flags&2 != 0, energy: flags&4 != 0, artifacts: flags&8 != 0, noConfig: flags&16 != 0, wall: math.Abs(wall), extra: int(extra % 3)}
		res, err := Load(s.write(t))
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		if _, err := Build(res, 0).Write(out); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(md), "could not be drawn"); i >= 0 {
			t.Errorf("%+v: a figure panicked: %.200s", s, md[max(0, i-100):])
		}
	})
}
