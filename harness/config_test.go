package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
)

func TestEmbeddedConfigs(t *testing.T) {
	spec := loadSpec(t)
	smoke, err := LoadConfig("smoke", spec)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(smoke.Models, []string{Oracle, Silent}) || smoke.Repetitions != 1 || smoke.Meter != "none" {
		t.Errorf("smoke: %+v", smoke)
	}
	paper, err := LoadConfig("paper.yaml", spec)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := Plan(paper, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	// The paper's grid: models x the scenarios of its domains x levels x
	// repetitions (8,748 in the paper), counted from the specs so that a new
	// domain changes no test.
	if len(paper.Domains) == 0 {
		t.Errorf("paper: no domains named; expected the paper's domains listed, so that a new domain leaves its grid alone")
	}
	scenarios := 0
	for _, name := range paper.Domains {
		scenarios += len(spec.Domain(name).Scenarios)
	}
	if want := len(paper.Models) * scenarios * len(paper.Granularities) * paper.Repetitions; len(paper.Models) != 9 || len(grid) != want {
		t.Errorf("paper: %d models, %d trials; want 9 models, %d trials", len(paper.Models), len(grid), want)
	}
	if paper.NumCtx != 8192 || paper.MaxAgentTurns != 10 || paper.AgentTimeoutSeconds != 360 || paper.Temperature != 0 || paper.MaxTokens != 4096 {
		t.Errorf("paper: %+v", paper)
	}
	seen := map[string]bool{}
	for i, tr := range grid {
		if tr.Index != i || seen[tr.ID] {
			t.Fatalf("trial %d: index %d, id %s seen before: %v", i, tr.Index, tr.ID, seen[tr.ID])
		}
		seen[tr.ID] = true
	}
}

// TestConfigErrors pins the positioned error of each kind of bad config.
func TestConfigErrors(t *testing.T) {
	spec := loadSpec(t)
	first := spec.Domains[0].Name
	cases := []struct {
		yaml string
		want []string
	}{
		{"name: x\nmodels: [a]\nrepetitons: 3\n", []string{
			`x.yaml:3:1: $.repetitons: found unknown key "repetitons"; expected only the keys the schema defines here`}},
		{"name: x\nmodels: [a]\ngranularities: [L5]\n", []string{
			`x.yaml:3:17: $.granularities[0]: found "L5"; expected one of L4, L3, L2, L1`}},
		{"name: x\nmodels: []\n", []string{
			`x.yaml:2:9: $.models: found [], which has 0 items; expected at least 1`}},
		{"name: x\nmodels: [a]\ndomains: [" + first + ", atlantis]\n", []string{
			`x.yaml:3:` + strconv.Itoa(13+len(first)) + `: $.domains[1]: found domain "atlantis"; expected one of `}},
		{"name: x\nmodels: [builtin:genius]\nscenarios: [atlantis-001]\n", []string{
			`x.yaml:2:10: $.models[0]: found built-in agent "builtin:genius"; expected builtin:oracle or builtin:silent`,
			`x.yaml:3:13: $.scenarios[0]: found scenario "atlantis-001", which no scenario table has`}},
		{"name: x\nmodels: [a]\nollama: {host: localhost}\n", []string{
			`x.yaml:3:16: $.ollama.host: found host "localhost"; expected a URL like http://127.0.0.1:11434`}},
		{"name: x\nmodels: [a]\nkeep_alive: forever\n", []string{
			`x.yaml:3:13: $.keep_alive: found "forever"; expected a string matching`}},
		{"name: x\nmodels: [a\n", []string{`x.yaml:2:9: invalid YAML`}},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "x.yaml")
		if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(path, spec)
		if err == nil {
			t.Errorf("%q: loaded", c.yaml)
			continue
		}
		got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, w)
			}
		}
	}
	if _, err := LoadConfig("no-such-config", spec); err == nil || !strings.Contains(err.Error(), "embedded: paper, smoke") {
		t.Errorf("missing config: %v", err)
	}
}
