package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
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
