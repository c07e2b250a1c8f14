package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// referenceArtifacts are the reference-scenario fixture's artifacts (see
// cmd/granite's TestRunReferenceScenarios, which plays them).
func referenceArtifacts(t *testing.T) []scenarios.Artifact {
	t.Helper()
	arts, err := scenarios.ReadArtifacts("testdata/reference-smarthome.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return arts
}

// TestReferenceArtifactsRefused, before any server starts: reference
// scenarios' levels need their servers' command (a URL cannot give a
// fresh server per trial), and no tools file, groups or interface, which
// would replace, regroup or transform their servers' tools; levels must
// keep some; they come one per scenario and level, and do not share a
// file with other artifacts; a command with fields needs them.
func TestReferenceArtifactsRefused(t *testing.T) {
	spec, lookup := tinySpec(t)
	arts := referenceArtifacts(t)
	external, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	synthesized, err := scenarios.Offline("tools:x.json", scenarios.Listed(external), 1)
	if err != nil {
		t.Fatal(err)
	}
	dup := append([]scenarios.Artifact{}, arts[0], arts[0])
	dup[1].ID = "again"
	l4 := func(cfg *results.Config) { cfg.Granularities = []level.Level{level.L4} }
	for _, c := range []struct {
		name string
		path string
		cmd  string
		set  func(*results.Config)
		want string
	}{
		{"no command", writeArtifacts(t, arts, nil), "", nil, "give that server's command, e.g. --mcp-cmd 'python -m mcp_granite.mcp_servers.{{.Domain}}.{{.Granularity}}_server'"},
		{"a URL", writeArtifacts(t, arts, nil), "x", func(cfg *results.Config) { cfg.ArtifactURL = "http://127.0.0.1:1/mcp" }, "give its command (--mcp-cmd), not a URL"},
		{"a tools file", writeArtifacts(t, arts, nil), "x", func(cfg *results.Config) { cfg.ArtifactTools = "t.json" }, "tools t.json: artifacts of reference scenarios take each level's tools from its server"},
		{"groups", writeArtifacts(t, arts, nil), "x", func(cfg *results.Config) { cfg.Groups = "g.yaml" }, "groups g.yaml: artifacts of reference scenarios are not regrouped"},
		{"an interface", writeArtifacts(t, arts, nil), "x", func(cfg *results.Config) { cfg.Interfaces = []surface.Spec{{Name: "L3-terse", Level: level.L3}} }, "interfaces L3-terse: artifacts of reference scenarios are played at their own levels"},
		{"faults", writeArtifacts(t, arts, nil), "x", func(cfg *results.Config) { cfg.Faults = []faults.Setting{{Name: "flaky", Rate: 0.2}} }, "faults flaky: artifacts of reference scenarios are played on their level's own server"},
		{"no artifact at the levels", writeArtifacts(t, arts[1:2], nil), "x", l4, "no artifact is at the levels asked for ([L4])"},
		{"twice at a level", writeArtifacts(t, dup, nil), "x", nil, "artifacts " + arts[0].ID + " and again are both scenario " + arts[0].Scenario + " at L4"},
		{"mixed", writeArtifacts(t, append(synthesized[:1:1], arts[0]), external), "x", nil, "1 of 2 artifacts are levels of reference scenarios"},
		{"fields for synthesized artifacts", writeArtifacts(t, synthesized, external), "server --level {{.Level}}", nil, "names fields, which only artifacts of reference scenarios"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := artifactConfig(c.path, "", agent.Oracle)
			cfg.ArtifactCmd = c.cmd
			if c.set != nil {
				c.set(cfg)
			}
			_, err := Plan(context.Background(), cfg, spec, lookup)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want one saying %q", err, c.want)
			}
		})
	}
}
