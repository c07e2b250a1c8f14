package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

func TestEmbeddedConfigs(t *testing.T) {
	spec := loadSpec(t)
	smoke, err := LoadConfig("smoke", spec)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(smoke.ModelNames(), []string{agent.Oracle, agent.Silent}) || smoke.Repetitions != 1 || smoke.Meter != "none" {
		t.Errorf("smoke: %+v", smoke)
	}
	paper, err := LoadConfig("paper.yaml", spec)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := Plan(context.Background(), paper, spec, gen.Lookup)
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

// TestModelEntries: a model is a plain Ollama tag or an object naming its
// backend; both load, a plain tag stays a plain tag in run.json (so that
// configs of tags keep their hash), and per-entry sampling overrides the
// experiment's.
func TestModelEntries(t *testing.T) {
	spec := loadSpec(t)
	path := filepath.Join(t.TempDir(), "x.yaml")
	yaml := `name: x
temperature: 0.2
models:
  - qwen2.5:3b
  - name: qwen3-4b-vllm
    backend: openai
    base_url: http://gpu-node:8000/v1
    model: Qwen/Qwen3-4B
    api_key_env: VLLM_KEY
    params_b: 4.0
    quantization: bf16
    parallel: 4
    temperature: 0.6
    seed: 7
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path, spec)
	if err != nil {
		t.Fatal(err)
	}
	seven, six := 7, 0.6
	want := []results.ModelEntry{{Name: "qwen2.5:3b"}, {Name: "qwen3-4b-vllm", Backend: "openai", BaseURL: "http://gpu-node:8000/v1",
		Model: "Qwen/Qwen3-4B", APIKeyEnv: "VLLM_KEY", ParamsB: 4, Quantization: "bf16", Parallel: 4, Temperature: &six, Seed: &seven}}
	if diff := cmp.Diff(want, c.Models); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	temp, maxTokens, seed := c.Sampling(c.Models[1])
	if temp != 0.6 || maxTokens != c.MaxTokens || seed != 7 || c.Models[1].Workers() != 4 || c.Models[0].Workers() != 1 {
		t.Errorf("sampling %v %v %v, workers %d %d", temp, maxTokens, seed, c.Models[1].Workers(), c.Models[0].Workers())
	}
	if temp, _, seed := c.Sampling(c.Models[0]); temp != 0.2 || seed != c.Seed {
		t.Errorf("a plain tag's sampling: %v %v", temp, seed)
	}
	b, err := json.Marshal(c.Models)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `["qwen2.5:3b",{"name":"qwen3-4b-vllm","backend":"openai"`) {
		t.Errorf("run.json models: %s", b)
	}
	var back []results.ModelEntry
	if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(back, c.Models) {
		t.Errorf("run.json models read back: %+v, %v", back, err)
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
		{"name: x\nmodels:\n  - {name: q, backend: vllm}\n", []string{
			`x.yaml:3:24: $.models[0].backend: found "vllm"; expected one of ollama, openai`}},
		{"name: x\nmodels:\n  - name: q\n    backend: openai\n    model: Qwen/Qwen3-4B\n", []string{
			`x.yaml:3:9: $.models[0]: found backend openai without base_url; expected the endpoint's URL, like http://gpu-node:8000/v1`}},
		{"name: x\nmodels:\n  - {name: q, backend: openai, base_url: gpu-node:8000}\n", []string{
			`x.yaml:3:42: $.models[0].base_url: found base_url "gpu-node:8000"; expected an http(s) URL like http://gpu-node:8000/v1`}},
		{"name: x\nmodels:\n  - {name: q, base_url: http://h/v1, api_key_env: K}\n", []string{
			`x.yaml:3:25: $.models[0].base_url: found base_url on an Ollama model; expected it only with backend: openai`,
			`x.yaml:3:51: $.models[0].api_key_env: found api_key_env on an Ollama model; expected it only with backend: openai`}},
		{"name: x\nmodels:\n  - q\n  - {name: q, parallel: 2}\n", []string{
			`x.yaml:4:12: $.models[1].name: found model name "q" again; expected each name once`}},
		{"name: x\nmodels:\n  - {name: q, parallel: 0, api_key: sk-1}\n", []string{
			`$.models[0].parallel: found 0; expected at least 1`,
			`$.models[0].api_key: found unknown key "api_key"`}},
		{"name: x\nmodels:\n  - {backend: openai}\n", []string{
			`x.yaml:3:5: $.models[0]: missing required key "name"`}},
		{"name: x\nmodels: [{name: builtin:oracle, parallel: 4}]\n", []string{
			`x.yaml:2:10: $.models[0]: found built-in agent builtin:oracle with model settings; expected it as a plain name`}},
	}
	for _, c := range cases {
		got, refused := refusal(t, spec, c.yaml)
		if !refused {
			t.Errorf("%q: loaded", c.yaml)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, w)
			}
		}
	}
	if _, err := LoadConfig("no-such-config", spec); err == nil || !strings.Contains(err.Error(), "no embedded config of that name (embedded: ") || !strings.Contains(err.Error(), "paper, smoke)") {
		t.Errorf("missing config: %v", err)
	}
}

// TestKubernetesVLLMConfig: the experiment config that the vLLM variant of
// docs/kubernetes.md ships in its ConfigMap loads.
func TestKubernetesVLLMConfig(t *testing.T) {
	data, err := os.ReadFile("../docs/k8s/granite-indexed-job-vllm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfgYAML string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind == "ConfigMap" {
			cfgYAML = m.Data["vllm.yaml"]
		}
	}
	path := filepath.Join(t.TempDir(), "vllm.yaml")
	if err := os.WriteFile(path, []byte(cfgYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path, loadSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Models[0]; e.Backend != agent.BackendOpenAI || e.APIKeyEnv != "VLLM_KEY" || e.Workers() != 4 {
		t.Errorf("entry %+v", e)
	}
}

// refusal loads a config file x.yaml of the given text and returns its
// error, with the file's folder left out so that positions read
// x.yaml:line:col; false when the config loaded.
func refusal(t *testing.T, spec *speclang.Spec, text string) (string, bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path, spec); err != nil {
		return strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), ""), true
	}
	return "", false
}
