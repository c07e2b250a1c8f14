// Package spectest loads the spec fixtures that tests of several packages
// share (the harness and the scorer): the golden tiny domain with its
// scenarios, and the repository's own specs.
package spectest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// Tiny is the golden tiny domain with its scenarios: a fixture no
// benchmark change can move. Its generated code is
// internal/testdomain/tiny.
func Tiny(t testing.TB) *speclang.Spec {
	t.Helper()
	return TinyWith(t, "")
}

// TinyWith is the tiny domain with scenarios, a scenario file's text,
// in place of its own ("": its own).
func TinyWith(t testing.TB, scenarios string) *speclang.Spec {
	t.Helper()
	// The files are read from the module's tree, wherever the test runs.
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	fsys := fstest.MapFS{}
	for name, from := range map[string]string{
		speclang.SchemaFile:         "specs/" + speclang.SchemaFile,
		speclang.ScenarioSchemaFile: "specs/" + speclang.ScenarioSchemaFile,
		"tiny/domain.yaml":          "generator/testdata/golden/tiny/domain.yaml",
		"tiny/scenarios.yaml":       "generator/testdata/golden/tiny/scenarios.yaml",
	} {
		data, err := os.ReadFile(filepath.Join(root, from))
		if err != nil {
			t.Fatal(err)
		}
		if name == "tiny/scenarios.yaml" && scenarios != "" {
			data = []byte(scenarios)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	spec, err := speclang.LoadAll(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// All is every domain of the repository's specs, as the binary embeds
// them.
func All(t testing.TB) *speclang.Spec {
	t.Helper()
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TwoLamps is a tiny scenario file of one task on two rows, each by ID,
// with a fact about each: the scenario where one part of a task can fail
// alone (the fault tests play it).
const TwoLamps = `domain: tiny
scenarios:
  - id: tiny-901
    difficulty: easy
    prompt: Set the hall lamp LP01 to 30 percent and turn the den lamp LP02 on at 40 percent, then tell me both levels.
    gold:
      L4:
        - {tool: set_lamp, arguments: {lamp_id: LP01, level: 30}}
        - {tool: set_lamp, arguments: {lamp_id: LP02, "on": true, level: 40}}
    expect:
      state:
        - {entity: lamp, id: LP01, fields: {level: 30}}
        - {entity: lamp, id: LP02, fields: {"on": true, level: 40}}
      answer:
        - {value: 30, what: hall lamp level in percent}
        - {value: 40, what: den lamp level in percent}
`
