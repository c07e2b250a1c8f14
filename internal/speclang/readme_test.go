package speclang

import (
	"os"
	"regexp"
	"testing"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// scenarioGuide is the page, from the module's root, that documents
// scenario tables.
const scenarioGuide = "docs/scenarios.md"

// TestReadmeScenarioExample: the scenario table the benchmark's guide
// (docs/scenarios.md, moved there from the README) shows has the shape the
// schema wants (a mapping with domain: and scenarios:), so a newcomer who
// copies it gets no "found array; expected object".
func TestReadmeScenarioExample(t *testing.T) {
	readme, err := os.ReadFile("../../" + scenarioGuide)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(domain: [^\n]*\nscenarios:\n.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatalf("%s shows no scenario table (a yaml block starting domain: and scenarios:)", scenarioGuide)
	}
	data, err := os.ReadFile("../../specs/" + ScenarioSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemacheck.Compile("granite:"+ScenarioSchemaFile, string(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		root, errs := parseYAML(scenarioGuide, b[1])
		if len(errs) > 0 {
			t.Fatalf("%s's scenario table does not parse: %v", scenarioGuide, errs)
		}
		if errs := validateNode(sch, root); len(errs) > 0 {
			t.Errorf("%s's scenario table fails %s:\n%v", scenarioGuide, ScenarioSchemaFile, errs)
		}
	}
}
