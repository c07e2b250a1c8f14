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
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
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
	for _, d := range spec.Domains {
		t.Run(d.Name, func(t *testing.T) { promoteAndVerify(t, spec, d) })
	}
}

func promoteAndVerify(t *testing.T, spec *speclang.Spec, d *speclang.Domain) {
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

// TestPromoteWritesAsVerifyReads: integers are written as integers (YAML
// would write 40.0, which an integer field refuses), and writes that leave
// the store as it was are left out with the reason, since no state
// condition could tell doing them from not.
func TestPromoteWritesAsVerifyReads(t *testing.T) {
	spec := spectest.Tiny(t)
	d := spec.Domain("tiny")
	call := func(args string) scenarios.Artifact {
		a := scenarios.Artifact{Version: scenarios.ArtifactVersion, ID: "art-" + args, Source: "domain:tiny/L4",
			Turns:         []scenarios.Turn{{Prompt: "Set the hall lamp LP01 as I say."}},
			ExpectedCalls: []scenarios.ExpectedCall{{Tool: "set_lamp", Arguments: []byte(args)}}}
		a.MockOutputs = scenarios.Executor(tiny.Domain, level.L4)(a.ExpectedCalls)
		return a
	}
	changes := call(`{"lamp_id": "LP01", "level": 40}`)
	same := call(`{"lamp_id": "LP01", "on": true, "level": 80}`)
	promoted, skipped := scenarios.Promote(d, tiny.Domain, []scenarios.Artifact{changes, same}, 101)
	if len(promoted) != 1 || promoted[0].Title != changes.ID {
		t.Fatalf("promoted %+v; want only %s", promoted, changes.ID)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], same.ID+": its writes leave the store as it was") {
		t.Errorf("skipped %q; want %s left out for writing nothing new", skipped, same.ID)
	}
	y, err := scenarios.PromotedYAML(d.Name, promoted)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "level: 40\n") || strings.Contains(string(y), "40.0") {
		t.Errorf("the level is not written as an integer:\n%s", y)
	}
}
