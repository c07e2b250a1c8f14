package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// memoryArtifacts are the reference memory server's tools and the
// artifacts synthesized offline from them.
func memoryArtifacts(t *testing.T) ([]toolsrc.Tool, []scenarios.Artifact) {
	t.Helper()
	tools, err := toolsrc.LoadTools("testdata/server-memory.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := scenarios.Offline("mcp:server-memory", scenarios.Listed(tools), 0)
	if err != nil {
		t.Fatal(err)
	}
	return tools, arts
}

// TestArtifactsAtEveryLevel plays offline artifacts synthesized from the
// reference memory server's tools (testdata/server-memory.tools.json, the
// pinned server's tools/list, checked by scenarios/regroup's tests) at L4,
// L3, L2 and L1 on regrouped replay servers. At every level the oracle
// completes every artifact with the recorded outputs through the coarse
// tools and actions, and the silent agent completes exactly the
// refusals.
func TestArtifactsAtEveryLevel(t *testing.T) {
	spec, lookup := tinySpec(t)
	tools, arts := memoryArtifacts(t)
	path := writeArtifacts(t, arts, tools)
	cfg := artifactConfig(path, "", agent.Oracle, agent.Silent)
	cfg.Granularities = level.Levels
	recs, err := runTrials(t, cfg, spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*len(arts)*len(level.Levels) {
		t.Fatalf("%d records for %d artifacts, 2 agents and %d levels", len(recs), len(arts), len(level.Levels))
	}
	byID := map[string]scenarios.Artifact{}
	for _, a := range arts {
		byID[a.ID] = a
	}
	refusals := map[level.Level]int{}
	coarse := map[level.Level]map[string]bool{}
	for _, r := range recs {
		a := byID[r.Scenario]
		if r.TrialID != results.TrialID(r.Model, a.ID, string(r.Level), r.Repetition) || r.Domain != a.Source {
			t.Fatalf("record %s: level %q domain %q", r.TrialID, r.Level, r.Domain)
		}
		wantTC := 1.0
		if r.Model == agent.Silent && len(a.ExpectedCalls) > 0 {
			wantTC = 0
		}
		if r.Metrics.TC != wantTC || r.Model == agent.Oracle && (r.Metrics.F1 != 1 || r.Metrics.ActionF1 != 1 || r.Metrics.ArgAcc != 1) {
			t.Errorf("%s: metrics %+v, verdicts %+v; want tc %v", r.TrialID, r.Metrics, r.Assertions, wantTC)
		}
		if r.Model != agent.Oracle {
			if len(a.ExpectedCalls) == 0 {
				refusals[r.Level]++
			}
			continue
		}
		for i, c := range r.Calls {
			if c.Result != a.MockOutputs[i].Output || c.IsError != a.MockOutputs[i].IsError {
				t.Errorf("%s: call %d answered %q, recorded %q", r.TrialID, i, c.Result, a.MockOutputs[i].Output)
			}
			if coarse[r.Level] == nil {
				coarse[r.Level] = map[string]bool{}
			}
			coarse[r.Level][c.Tool] = true
			if r.Level != level.L4 && len(tools) > 1 && r.Level == level.L1 && !strings.Contains(string(c.Arguments), `"action"`) {
				t.Errorf("%s: L1 call %s %s has no action", r.TrialID, c.Tool, c.Arguments)
			}
		}
	}
	for _, lv := range level.Levels {
		if refusals[lv] == 0 {
			t.Errorf("%s: no refusal artifact played", lv)
		}
	}
	// Coarser levels call fewer distinct tools.
	if !(len(coarse[level.L4]) > len(coarse[level.L2]) && len(coarse[level.L2]) >= len(coarse[level.L1]) && len(coarse[level.L1]) == 1) {
		t.Errorf("distinct tools called per level: L4 %d, L2 %d, L1 %d", len(coarse[level.L4]), len(coarse[level.L2]), len(coarse[level.L1]))
	}
}

// TestArtifactsOnEveryInterface plays the reference memory server's
// artifacts on every interface of its regrouped levels' catalogue: the
// oracle's expected calls, mapped onto each interface, complete every
// artifact and score full, and the silent agent only the refusals.
func TestArtifactsOnEveryInterface(t *testing.T) {
	spec, lookup := tinySpec(t)
	tools, arts := memoryArtifacts(t)
	iface, err := regroup.Build(tools, regroup.Derive("server-memory", tools))
	if err != nil {
		t.Fatal(err)
	}
	catalogue, err := iface.Catalogue("server-memory")
	if err != nil {
		t.Fatal(err)
	}
	cfg := artifactConfig(writeArtifacts(t, arts, tools), "", agent.Oracle, agent.Silent)
	for _, si := range catalogue {
		if !si.Spec.Plain() {
			cfg.Interfaces = append(cfg.Interfaces, si.Spec)
		}
	}
	if len(cfg.Interfaces) < 12 {
		t.Fatalf("%d transformed interfaces of the regrouped server; want the catalogue's presets at every level", len(cfg.Interfaces))
	}
	recs, err := runTrials(t, cfg, spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*len(arts)*len(cfg.Interfaces) {
		t.Fatalf("%d records for %d artifacts, 2 agents and %d interfaces", len(recs), len(arts), len(cfg.Interfaces))
	}
	for _, r := range recs {
		a := arts[slices.IndexFunc(arts, func(a scenarios.Artifact) bool { return a.ID == r.Scenario })]
		wantTC := 1.0
		if r.Model == agent.Silent && len(a.ExpectedCalls) > 0 {
			wantTC = 0
		}
		if r.Interface == "" || r.TrialID != results.TrialID(r.Model, a.ID, r.Interface, r.Repetition) {
			t.Fatalf("record %s: interface %q", r.TrialID, r.Interface)
		}
		if r.Metrics.TC != wantTC || r.Model == agent.Oracle && (r.Metrics.F1 != 1 || r.Metrics.ArgAcc != 1) {
			t.Errorf("%s: metrics %+v, verdicts %+v; want tc %v", r.TrialID, r.Metrics, r.Assertions, wantTC)
		}
	}
}
