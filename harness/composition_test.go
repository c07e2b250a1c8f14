package harness

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// TestOracleOnAtomicInterfaces: at composition atomic no composite
// operation is listed, the gold's composite calls are expanded into the
// atomic calls they perform (a list, then an update per row changed), and
// the oracle playing that gold completes every scenario with F1 and
// ArgAcc 1 against it, at every level. A domain whose composites have no
// atomic form fails the plan saying which operation it lacks.
func TestOracleOnAtomicInterfaces(t *testing.T) {
	spec := loadSpec(t)
	var played, expanded int
	for _, d := range spec.Domains {
		cfg := testConfig("atomic-"+d.Name, "http://127.0.0.1:1", agent.Oracle)
		cfg.Domains, cfg.Granularities = []string{d.Name}, nil
		for _, lv := range level.Levels {
			s, err := surface.Parse(string(lv) + "-atomic")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Interfaces = append(cfg.Interfaces, s)
		}
		grid, err := Plan(cfg, spec, gen.Lookup)
		if err != nil {
			if !strings.Contains(err.Error(), "no update operation of") && !strings.Contains(err.Error(), "no list operation of") {
				t.Errorf("%s: %v; want a plan, or the operation an atomic form lacks", d.Name, err)
			}
			continue
		}
		for _, tr := range grid {
			task := tr.Task.(*scenarioTask)
			written := task.scenario.Gold[task.level()]
			if len(task.calls) > len(written) {
				expanded++
			}
			for _, c := range task.calls {
				if i := slices.IndexFunc(d.Operations, func(o *speclang.Operation) bool { return o.Name == c.Op }); i < 0 || d.Operations[i].Kind == opkind.Preset {
					t.Errorf("%s: gold calls %s; want atomic calls only", tr.ID, c.Op)
				}
			}
		}
		recs, _, _ := runIsolated(t, cfg, spec, "")
		for _, r := range recs {
			played++
			if m := r.Metrics; m.TC != 1 || m.F1 != 1 || m.ArgAcc != 1 || r.ErrorClass != "" {
				t.Errorf("%s: TC %v F1 %v ArgAcc %v %s; want the oracle scored full on the atomic gold", r.TrialID, m.TC, m.F1, m.ArgAcc, r.ErrorClass)
			}
			if !strings.HasSuffix(r.Interface, "-atomic") {
				t.Errorf("%s: interface %q", r.TrialID, r.Interface)
			}
		}
	}
	if played == 0 || expanded == 0 {
		t.Fatalf("%d trials played, %d with expanded gold; want both", played, expanded)
	}
}

// BenchmarkAtomicGold expands every scenario's gold at every level into
// its atomic form (gold.Composed at each L<n>-atomic), proving each
// expansion on the store; us/scenario is the cost per scenario and level.
// Target: within 2x of reading the gold as written, per trial a
// negligible share of its time.
func BenchmarkAtomicGold(b *testing.B) {
	spec := loadSpec(b)
	var n int
	for b.Loop() {
		n = 0
		for _, d := range spec.Domains {
			dom, _ := gen.Lookup(d.Name)
			for _, lv := range level.Levels {
				s, _ := surface.Parse(string(lv) + "-atomic")
				for _, sc := range d.Scenarios {
					if _, err := gold.Composed(d, dom, s, sc); err == nil {
						n++
					}
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(max(n, 1)), "us/scenario")
}

// BenchmarkOracleAtomic runs the oracle over every scenario of the domains
// whose composites have an atomic form, at the four atomic interfaces,
// one repetition each, journaled and scored: beside BenchmarkOracleGrid
// (the levels as written, three repetitions), trials/s says what the
// expanded gold costs. Target: within 2x of the levels as written per
// trial.
func BenchmarkOracleAtomic(b *testing.B) {
	spec := loadSpec(b)
	cfg := testConfig("oracle-atomic", "http://127.0.0.1:1", agent.Oracle)
	cfg.Granularities = nil
	for _, lv := range level.Levels {
		s, _ := surface.Parse(string(lv) + "-atomic")
		cfg.Interfaces = append(cfg.Interfaces, s)
	}
	for _, d := range spec.Domains {
		if _, err := Plan(&results.Config{Name: "probe", Domains: []string{d.Name}, Interfaces: cfg.Interfaces, Models: cfg.Models, Repetitions: 1}, spec, gen.Lookup); err == nil {
			cfg.Domains = append(cfg.Domains, d.Name)
		}
	}
	var trials int
	for b.Loop() {
		sum, err := Run(context.Background(), cfg, spec, Options{Out: b.TempDir(), Lookup: gen.Lookup})
		if err != nil {
			b.Fatal(err)
		}
		if sum.TC[agent.Oracle] != 1 {
			b.Fatalf("%+v", sum)
		}
		trials = sum.Ran
	}
	b.ReportMetric(float64(trials), "trials/op")
	b.ReportMetric(float64(trials)*float64(b.N)/b.Elapsed().Seconds(), "trials/s")
}
