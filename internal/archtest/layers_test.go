// Package archtest holds tests of the module's shape: which package may
// import which.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpgranite/granite"

// layers lists the module's packages from the ground up, by path prefix:
// the spec language, the runtime generated code links against and the
// small shared packages (tool sources among them, below the synthesizer,
// the regrouper and the harness, which read tools through them); the
// generator, the generated code, serving and the scorer (which stands on
// the results and the spec language alone); gold execution (on the scorer
// and the in-process session, below agents and the runner); the agents
// (the subjects behind their registry, below the runner that asks it);
// the harness and the synthesizer; the commands. The longest prefix
// decides.
var layers = []struct {
	prefix string
	layer  int
}{
	{"internal/", 0}, {"internal/toolsrc", 0}, {"specs", 0}, {"templates", 0}, {"harness/results", 0}, {"harness/recorded", 0},
	{"generator", 1}, {"gen", 1}, {"internal/serve", 1}, {"internal/testdomain", 1}, {"harness/score", 1}, {"harness/paper", 1},
	{"harness/gold", 2},
	{"harness/agent", 3},
	{"harness", 4}, {"scenarios", 4},
	{"cmd/", 5},
}

func layerOf(pkg string) (int, bool) {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return 0, false
	}
	best, layer := -1, 0
	for _, l := range layers {
		if (rel == strings.TrimSuffix(l.prefix, "/") || strings.HasPrefix(rel, l.prefix)) && len(l.prefix) > best {
			best, layer = len(l.prefix), l.layer
		}
	}
	return layer, best >= 0
}

// TestNoPackageImportsALayerAbove: the spec language and the runtime stand
// on nothing of granite's above them, the generator and generated code
// not on the harness or the synthesizer, gold execution not on agents or
// the runner, agents not on the runner, and nothing on the commands.
func TestNoPackageImportsALayerAbove(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(goBin, "list", "-json=ImportPath,Imports", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, ok := layerOf(p.ImportPath)
		if !ok {
			t.Errorf("%s is in no layer; add its folder to layers", p.ImportPath)
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if to, ok := layerOf(imp); ok && to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d), a layer above it", p.ImportPath, from, imp, to)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("checked only %d packages", seen)
	}
}

func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]int{
		"internal/speclang": 0, "internal/level": 0, "internal/opkind": 0, "internal/schemacheck": 0, "internal/combine": 0, "internal/stats": 0, "internal/toolsrc": 0, "internal/serve": 1, "harness/results": 0, "harness/report": 4,
		"harness": 4, "harness/score": 1, "harness/gold": 2, "harness/agent": 3, "gen/fleet": 1, "gen": 1, "generator": 1, "cmd/granite": 5, "specs": 0,
	} {
		if got, ok := layerOf(module + "/" + pkg); !ok || got != want {
			t.Errorf("layerOf(%s) = %d, %v; want %d", pkg, got, ok, want)
		}
	}
	if _, ok := layerOf("github.com/other/module"); ok {
		t.Error("a package of another module has a layer")
	}
}

// TestScorerLinksNoAgent: a re-scorer links the scorer and the results
// and nothing of agents, models, serving or the runner, whatever their
// layers (the model clients sit in layer 0 with the small shared
// packages).
func TestScorerLinksNoAgent(t *testing.T) {
	linksNone(t, "harness/score", []string{"harness/score", "harness/paper", "harness/results"},
		[]string{"harness", "internal/models", "internal/serve", "scenarios", "cmd", "gen"},
		"the scorer must stand on the results and the spec language alone")
}

// TestAgentsLinkNoRunner: the subjects stand on the results, the model
// clients and serving, and link nothing of the runner, the scorer, gold
// execution, the synthesizer or generated code: a backend is its own
// file and the registry, whatever the runner does with it.
func TestAgentsLinkNoRunner(t *testing.T) {
	linksNone(t, "harness/agent", []string{"harness/results"},
		[]string{"harness", "scenarios", "cmd", "gen"},
		"the agents must stand below the runner and beside the scorer")
}

// TestToolSourcesLinkNoSynthesizer: reading tools from a file or a live
// server links nothing of the synthesizer, the harness or a model
// client, so that the synthesizer, the regrouper and the harness can all
// stand on it.
func TestToolSourcesLinkNoSynthesizer(t *testing.T) {
	linksNone(t, "internal/toolsrc", nil,
		[]string{"harness", "internal/models", "scenarios", "cmd", "gen"},
		"tool sources must stand below the synthesizer, the regrouper and the harness")
}

// TestSpecLanguageLinksNoMCPRuntime: the spec IR names levels, operation
// kinds and schemas through leaf packages, so that reading and checking a
// spec links neither the runtime generated code links against nor
// mcp-go's server.
func TestSpecLanguageLinksNoMCPRuntime(t *testing.T) {
	linksNone(t, "internal/speclang", nil,
		[]string{"internal/mcpdomain", "internal/serve", "gen", "github.com/mark3labs/mcp-go/server"},
		"the spec language must stand on the leaf packages level, opkind and schemacheck alone")
}

// TestServingLinksNoRegrouper: serving, the relay and the proxy among it,
// links nothing of the regrouper, the harness or a model client: a
// regrouped level reaches it as routes, so that every MCP server granite
// runs is served by the one package.
func TestServingLinksNoRegrouper(t *testing.T) {
	linksNone(t, "internal/serve", nil,
		[]string{"harness", "internal/models", "scenarios", "cmd", "gen"},
		"serving must stand below the regrouper, the harness and the commands")
}

// TestCommandsLinkNoTestSupport: the binaries link none of the packages
// that exist for tests (the model doubles and what they share, the real
// Ollama server starter and its tiny models, the GGUF writer, the fixture
// domain), so no granite binary carries a test server or a test model.
func TestCommandsLinkNoTestSupport(t *testing.T) {
	for _, cmd := range []string{"cmd/granite", "cmd/granite-gen"} {
		linksNone(t, cmd, nil, []string{"internal/models/chattest", "internal/models/ollama/ollamatest", "internal/models/openai/openaitest",
			"internal/models/ollama/ollamaserver", "internal/models/ollama/tinymodel", "internal/gguf", "internal/testdomain", "internal/spectest", "internal/serve/servetest", "internal/npmtest", "internal/scriptedmodel"},
			"test-support packages are for _test.go files alone")
	}
}

// TestStatsLinkNothingOfGranite: the statistics the report and the
// advisor share stand on the standard library and gonum, so that both
// can use them and neither pulls in the other.
func TestStatsLinkNothingOfGranite(t *testing.T) {
	linksNone(t, "internal/stats", nil,
		[]string{"internal", "harness", "scenarios", "cmd", "gen", "generator", "specs", "templates"},
		"the statistics must stand on the standard library and gonum alone")
}

// linksNone fails when pkg links, directly or not, a package of the
// module under one of the forbidden folders other than those allowed. A
// forbidden entry whose first element has a dot (github.com/...) names a
// package of another module by its full path.
func linksNone(t *testing.T, pkg string, allowed, forbidden []string, why string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-deps", module+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(dep, module+"/")
		if !ok {
			if first, _, _ := strings.Cut(dep, "/"); !strings.Contains(first, ".") {
				continue // the standard library
			}
			rel = dep
		}
		if rel == pkg || slices.Contains(allowed, rel) {
			continue
		}
		for _, f := range forbidden {
			if rel == f || strings.HasPrefix(rel, f+"/") {
				t.Errorf("%s links %s; %s", pkg, rel, why)
			}
		}
	}
}
