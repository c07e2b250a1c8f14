package speclang

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
)

// tinyFiles returns the golden tiny domain and its scenario table.
func tinyFiles(t *testing.T) map[string]string {
	t.Helper()
	d, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile("../../generator/testdata/golden/tiny/scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"tiny/domain.yaml": string(d), "tiny/scenarios.yaml": string(s)}
}

func TestTinyScenariosLoad(t *testing.T) {
	spec, err := LoadAll(specFS(t, tinyFiles(t)))
	if err != nil {
		t.Fatal(err)
	}
	scs := spec.Domain("tiny").Scenarios
	if len(scs) != 4 {
		t.Fatalf("got %d scenarios, want 4", len(scs))
	}
	// Gold written at L4 only is derived for the coarser levels: same
	// operations, the tool that offers each, and the action where the tool
	// has several.
	hard := scs[3]
	for _, l := range level.Levels[1:] {
		if !hard.Derived[l] || len(hard.Gold[l]) != len(hard.Gold[level.L4]) {
			t.Fatalf("%s: derived %v, %d calls", l, hard.Derived[l], len(hard.Gold[l]))
		}
	}
	got := string(hard.Gold[level.L1][0].JSON())
	if want := `{"action":"scene","room":"den","scene":"bright"}`; got != want {
		t.Errorf("L1 call 1: got %s, want %s", got, want)
	}
	if got := hard.Gold[level.L1][0].Tool; got != "tiny" {
		t.Errorf("L1 tool: got %q", got)
	}
	if got := string(hard.Gold[level.L4][0].JSON()); got != `{"room":"den","scene":"bright"}` {
		t.Errorf("L4 call 1: got %s", got)
	}
	// A workflow is an action of its category's tool like any operation.
	wf := scs[2].Gold[level.L3][2]
	if got, want := wf.Tool+" "+string(wf.JSON()), `tiny_action_execution {"action":"dim_room","at":"2026-01-01T23:00:00Z","lamp":"LP02","level":10,"room":"hall"}`; got != want {
		t.Errorf("L3 workflow call: got %s, want %s", got, want)
	}
}

// The broken-table cases are folders under testdata/errors/scenarios-*,
// each with its expected stderr.txt: see TestErrorCases.

// A scenario may list the strings the reference implementation's
// completion asks the answer to contain; a number among them is refused
// with its position.
func TestScenarioContains(t *testing.T) {
	files := tinyFiles(t)
	spec, err := LoadAll(specFS(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Domain("tiny").Scenarios[0].Contains; got != nil {
		t.Errorf("unwritten: got %q, want none", got)
	}
	files["tiny/scenarios.yaml"] = strings.Replace(files["tiny/scenarios.yaml"], "      answer:\n        - {value: 80, what: hall lamp brightness in percent}\n",
		"      answer:\n        - {value: 80, what: hall lamp brightness in percent}\n      contains: [hall, \"80\"]\n", 1)
	spec, err = LoadAll(specFS(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Domain("tiny").Scenarios[0].Contains; !slices.Equal(got, []string{"hall", "80"}) {
		t.Errorf("written: got %q, want [hall 80]", got)
	}
	files["tiny/scenarios.yaml"] = strings.Replace(files["tiny/scenarios.yaml"], `contains: [hall, "80"]`, "contains: [hall, 80]", 1)
	if _, err := LoadAll(specFS(t, files)); err == nil || !strings.Contains(err.Error(), "contains[1]") {
		t.Errorf("a number in contains: got %v, want a positioned error naming contains[1]", err)
	}
}
