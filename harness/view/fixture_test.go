package view_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/specs"
)

// fixtures are real results folders, written by harness.Run once per test
// binary: a benchmark run of a scripted model and the oracle, and an
// artifact run of the built-in agents.
type fixtures struct {
	bench, artifacts string
	spec             *speclang.Spec
	// domain is the one domain the runs play: the spec's first, so that
	// no test names a domain (adding a domain is adding spec files).
	domain string
}

var (
	fixOnce sync.Once
	fix     fixtures
	fixErr  error
)

func testFixtures(t testing.TB) fixtures {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = makeFixtures(t) })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

// fixtureRoot holds the fixtures for the whole test binary (t.TempDir
// would vanish with the first test that made them).
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "granite-view-test-")
	if err != nil {
		panic(err)
	}
	fixtureRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func makeFixtures(t testing.TB) (fixtures, error) {
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return fixtures{}, err
	}
	f := fixtures{bench: filepath.Join(fixtureRoot, "bench"), artifacts: filepath.Join(fixtureRoot, "artifacts"), spec: spec, domain: spec.Domains[0].Name}
	model := ollamatest.NewServer(t, []string{"fake:sloppy"}, sloppyModel(spec))
	cfg := config("view-bench", model.URL, "fake:sloppy", agent.Oracle)
	cfg.Domains = []string{f.domain}
	cfg.Granularities = slices.Clone(level.Levels)
	if _, err := harness.Run(context.Background(), cfg, spec, harness.Options{Out: f.bench, Lookup: gen.Lookup}); err != nil {
		return f, err
	}
	dom, _ := gen.Lookup(f.domain)
	source := "domain:" + dom.Name + "/L2"
	// A page of the view holds both folders' records: 8 artifacts, two agents.
	arts, err := scenarios.Offline(source, scenarios.FromDomain(dom, level.L2), 8)
	if err != nil {
		return f, err
	}
	path := filepath.Join(fixtureRoot, "arts.jsonl")
	af, err := os.Create(path)
	if err != nil {
		return f, err
	}
	if err := scenarios.WriteArtifacts(af, arts); err != nil {
		return f, err
	}
	af.Close()
	acfg := config("view-artifacts", "", agent.Oracle, agent.Silent)
	acfg.Artifacts = path
	if _, err := harness.Run(context.Background(), acfg, spec, harness.Options{Out: f.artifacts, Lookup: gen.Lookup}); err != nil {
		return f, err
	}
	return f, nil
}

// config is an experiment with the documented defaults spelled out.
func config(name, host string, models ...string) *results.Config {
	return &results.Config{Name: name, Models: results.Entries(models...), Repetitions: 1, MaxAgentTurns: 10, AgentTimeoutSeconds: 60, MaxTokens: 4096,
		NumCtx: 8192, KeepAlive: "30m", Seed: 42, Meter: "none", Ollama: results.OllamaConfig{Host: host}}
}

// sloppyModel scripts a model that plays the gold at L4 and L3, leaves the
// last gold call out at L2, and at L1 sends the first gold call with one
// argument wrong; it then answers with the tool results. Its L1 and L2
// trials fail for reasons the records must explain.
func sloppyModel(spec *speclang.Spec) func(ollamatest.Request, int) ollamatest.Step {
	byPrompt := map[string]*speclang.Scenario{}
	levelOf := map[string]level.Level{}
	for _, d := range spec.Domains {
		dom, _ := gen.Lookup(d.Name)
		for _, s := range d.Scenarios {
			byPrompt[s.Prompt] = s
		}
		for _, l := range level.Levels {
			var names []string
			for _, tool := range dom.Tools[l] {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			levelOf[strings.Join(names, ",")] = l
		}
	}
	return func(req ollamatest.Request, _ int) ollamatest.Step {
		prompt, done := req.Progress()
		s := byPrompt[prompt]
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Function.Name)
		}
		slices.Sort(names)
		lv := levelOf[strings.Join(names, ",")]
		gold := s.Gold[lv]
		if lv == level.L2 && len(gold) > 0 {
			gold = gold[:len(gold)-1]
		}
		if done >= len(gold) {
			return ollamatest.Step{Content: strings.Join(req.ToolResults(), "\n")}
		}
		args := gold[done].Args
		if lv == level.L1 && done == 0 {
			args = spoil(args)
		}
		b, _ := json.Marshal(args)
		return ollamatest.Step{Calls: []ollamatest.Call{{Name: gold[done].Tool, Args: string(b)}}}
	}
}

// spoil changes one argument: a number by 7, else the last string that is
// not the action.
func spoil(args map[string]any) map[string]any {
	out := map[string]any{}
	keys := make([]string, 0, len(args))
	for k, v := range args {
		out[k] = v
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := args[k].(type) {
		case int64:
			out[k] = v + 7
			return out
		case float64:
			out[k] = v + 7
			return out
		}
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if _, ok := args[keys[i]].(string); ok && keys[i] != "action" {
			out[keys[i]] = "wrong"
			return out
		}
	}
	return out
}
