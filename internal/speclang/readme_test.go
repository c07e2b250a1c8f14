package speclang

import (
	"os"
	"regexp"
	"testing"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// TestReadmeScenarioExample: the scenario table the README shows has the
// shape the schema wants (a mapping with domain: and scenarios:), so a
// newcomer who copies it gets no "found array; expected object".
func TestReadmeScenarioExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(domain: [^\n]*\nscenarios:\n.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("the README shows no scenario table (a yaml block starting domain: and scenarios:)")
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
		root, errs := parseYAML("README.md", b[1])
		if len(errs) > 0 {
			t.Fatalf("README's scenario table does not parse: %v", errs)
		}
		if errs := validateNode(sch, root); len(errs) > 0 {
			t.Errorf("README's scenario table fails %s:\n%v", ScenarioSchemaFile, errs)
		}
	}
}
