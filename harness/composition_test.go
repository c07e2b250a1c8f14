package harness

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// TestOracleOnEveryComposition: at composition atomic no composite
// operation is listed and the gold's composite calls are expanded into
// the atomic calls they perform; at composite the gold calls a workflow
// wherever a run of its calls is one. The oracle playing either gold
// completes every scenario of every domain with F1 and ArgAcc 1 against
// it, at every level, the paper's family (L4-atomic, L3/L2/L1-composite)
// among them; atomic gold is never shorter than as written, composite
// never longer, and each is shorter or longer somewhere.
func TestOracleOnEveryComposition(t *testing.T) {
	spec := loadSpec(t)
	var played, longer, shorter int
	for _, d := range spec.Domains {
		cfg := testConfig("compositions-"+d.Name, "http://127.0.0.1:1", agent.Oracle)
		cfg.Domains, cfg.Granularities = []string{d.Name}, nil
		for _, lv := range level.Levels {
			for _, c := range []string{"atomic", "composite"} {
				s, err := surface.Parse(string(lv) + "-" + c)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Interfaces = append(cfg.Interfaces, s)
			}
		}
		grid, err := Plan(context.Background(), cfg, spec, gen.Lookup)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		for _, tr := range grid {
			task := tr.Task.(*scenarioTask)
			written := task.scenario.Gold[task.level()]
			switch task.iface.Spec.Get("composition") {
			case "atomic":
				if len(task.calls) < len(written) {
					t.Errorf("%s: %d atomic calls, %d as written; want no fewer", tr.ID, len(task.calls), len(written))
				}
				longer += b2i(len(task.calls) > len(written))
				for _, c := range task.calls {
					if i := slices.IndexFunc(d.Operations, func(o *speclang.Operation) bool { return o.Name == c.Op }); i < 0 || d.Operations[i].Kind == opkind.Preset || d.Operations[i].Kind == opkind.Workflow {
						t.Errorf("%s: gold calls %s; want atomic calls only", tr.ID, c.Op)
					}
				}
			case "composite":
				if len(task.calls) > len(written) {
					t.Errorf("%s: %d composite calls, %d as written; want no more", tr.ID, len(task.calls), len(written))
				}
				shorter += b2i(len(task.calls) < len(written))
			}
		}
		recs, _, _ := runIsolated(t, cfg, spec, "")
		for _, r := range recs {
			played++
			if m := r.Metrics; m.TC != 1 || m.F1 != 1 || m.ArgAcc != 1 || r.ErrorClass != "" || m.GoldCalls == 0 {
				t.Errorf("%s: TC %v F1 %v ArgAcc %v gold calls %d %s; want the oracle scored full on the composed gold", r.TrialID, m.TC, m.F1, m.ArgAcc, m.GoldCalls, r.ErrorClass)
			}
		}
	}
	if played == 0 || longer == 0 || shorter == 0 {
		t.Fatalf("%d trials played, %d with longer atomic gold, %d with shorter composite gold; want all three", played, longer, shorter)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkAtomicGold derives every scenario's gold at every level atomic
// and composite (gold.Composed), proving each on the store; us/scenario is
// the cost per scenario, level and composition.
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
				for _, c := range []string{"atomic", "composite"} {
					s, _ := surface.Parse(string(lv) + "-" + c)
					for _, sc := range d.Scenarios {
						if _, err := gold.Composed(d, dom, s, sc); err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(max(n, 1)), "us/scenario")
}

// BenchmarkOraclePaperFamily runs the oracle over every scenario at the
// paper's family (L4-atomic, L3/L2/L1-composite), one repetition each,
// journaled and scored: beside BenchmarkOracleGrid (the levels as written,
// three repetitions), trials/s says what composed gold costs. Target:
// within 2x of the levels as written per trial.
func BenchmarkOraclePaperFamily(b *testing.B) {
	spec := loadSpec(b)
	cfg := testConfig("oracle-paper", "http://127.0.0.1:1", agent.Oracle)
	cfg.Granularities = nil
	family, err := surface.ParseList("paper")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Interfaces = family
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
