package scenarios_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/specs"
)

// TestPromotedScenariosVerify promotes executed artifacts built from a
// domain's own scenarios at L3 and checks that the scenario table loads
// and granite verify passes every promoted scenario at every level.
func TestPromotedScenariosVerify(t *testing.T) {
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	d := spec.Domains[0]
	dom, _ := gen.Lookup(d.Name)
	exec := scenarios.Executor(dom, level.L3)
	var arts []scenarios.Artifact
	for _, s := range d.Scenarios {
		a := scenarios.Artifact{Version: scenarios.ArtifactVersion, ID: "art-" + s.ID, Source: "domain:" + d.Name + "/L3", Turns: []scenarios.Turn{{Prompt: s.Prompt}}}
		for _, c := range s.Gold[level.L3] {
			a.ExpectedCalls = append(a.ExpectedCalls, scenarios.ExpectedCall{Tool: c.Tool, Arguments: c.JSON()})
		}
		a.MockOutputs = exec(a.ExpectedCalls)
		arts = append(arts, a)
	}
	arts = append(arts, scenarios.Artifact{ID: "foreign", Source: "tools:x"},
		scenarios.Artifact{ID: "named", Source: "domain:" + d.Name + "/L4", Turns: []scenarios.Turn{{Prompt: "call " + d.Operations[0].Name + " now"}}})
	promoted, skipped := scenarios.Promote(d, dom, arts, 101)
	if len(promoted) < len(d.Scenarios)-2 || len(skipped) < 2 {
		t.Fatalf("%d promoted, skipped: %v", len(promoted), skipped)
	}
	if !strings.Contains(strings.Join(skipped, "\n"), "named: its prompt names a tool") {
		t.Errorf("skipped: %v", skipped)
	}
	y, err := scenarios.PromotedYAML(d.Name, promoted)
	if err != nil {
		t.Fatal(err)
	}
	schemaData, _ := fs.ReadFile(specs.FS, speclang.ScenarioSchemaFile)
	sch, err := schemacheck.Compile("granite:"+speclang.ScenarioSchemaFile, string(schemaData))
	if err != nil {
		t.Fatal(err)
	}
	scs, errs := speclang.LoadScenarioTable(d.Name+"/scenarios.yaml", y, sch, d)
	if len(errs) > 0 {
		t.Fatalf("the promoted table does not load:\n%v\n%s", errs, y)
	}
	d.Scenarios = scs
	rep, err := gold.Verify(context.Background(), spec, gen.Lookup, d.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures {
		if f.Scenario != "" { // coverage of the whole domain is not the point here
			t.Errorf("%s", f)
		}
	}
	if rep.Scenarios != len(promoted) {
		t.Errorf("verified %d scenarios, promoted %d", rep.Scenarios, len(promoted))
	}
}
