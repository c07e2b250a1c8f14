package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// checkArtifacts writes artifacts as granite synth does and reads them
// back, which validates every line against specs/artifact.schema.json.
func checkArtifacts(t testing.TB, arts []Artifact) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	var b bytes.Buffer
	if err := WriteArtifacts(&b, arts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadArtifacts(path)
	if err != nil {
		t.Fatalf("the artifacts do not read back: %v", err)
	}
	if len(back) != len(arts) {
		t.Fatalf("read back %d of %d artifacts", len(back), len(arts))
	}
}

// TestOfflineOnEveryGeneratedDomain: every tool of every domain at every
// level is used, every expected call fits its tool's schema, and the
// outputs are the real store's (executed grounding).
func TestOfflineOnEveryGeneratedDomain(t *testing.T) {
	for _, d := range gen.Domains {
		for _, l := range level.Levels {
			tools := FromDomain(d, l)
			arts, err := Offline("domain:"+d.Name+"/"+string(l), tools, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkArtifacts(t, arts)
			cov := Measure(tools, arts)
			if cov.Used != cov.Tools || cov.ValidCalls != cov.Calls || cov.Calls == 0 {
				t.Errorf("%s %s: %+v", d.Name, l, cov)
			}
			names := map[string]bool{}
			for _, tool := range tools {
				names[tool.Name] = true
			}
			notCalls := 0
			for _, a := range arts {
				checkPrompt(t, a, names)
				if len(a.ExpectedCalls) < 2 && !strings.HasPrefix(a.Title, a.Assertions[0].Tool+" with ") {
					t.Errorf("%s: title %q does not say which tool and what kind of call", a.ID, a.Title)
				}
				// Every call, a chain's too, is the store's answer to the
				// calls in order on one fresh store.
				want := Executor(d, l)(a.ExpectedCalls)
				for i, c := range a.ExpectedCalls {
					m := a.MockOutputs[i]
					if m.Grounding != "executed" || m.Output != want[i].Output || m.IsError != want[i].IsError {
						t.Fatalf("%s: mock output of %s %+v, the store says %q", a.ID, c.Tool, m, want[i].Output)
					}
				}
				for _, as := range a.Assertions {
					if as.Kind == "not_call" {
						notCalls++
					}
				}
			}
			if notCalls == 0 {
				t.Errorf("%s %s: no invalid-input scenario", d.Name, l)
			}
		}
	}
}

// checkPrompt: an offline prompt reads as a request: no template text, no
// sentence cut inside a parenthesis or after an abbreviation, no tool
// named.
func checkPrompt(t *testing.T, a Artifact, tools map[string]bool) {
	t.Helper()
	for _, turn := range a.Turns {
		p := turn.Prompt
		for _, bad := range []string{"Use these values", `="`} {
			if strings.Contains(p, bad) {
				t.Errorf("%s: prompt has %q: %s", a.ID, bad, p)
			}
		}
		if cut := regexp.MustCompile(`\b[ei](\.\s|\.$|,)`).FindString(p); cut != "" {
			t.Errorf("%s: prompt cut at an abbreviation (%q): %s", a.ID, cut, p)
		}
		if strings.Count(p, "(") != strings.Count(p, ")") {
			t.Errorf("%s: prompt cut inside a parenthesis: %s", a.ID, p)
		}
		for _, w := range regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`).FindAllString(p, -1) {
			if tools[w] {
				t.Errorf("%s: prompt names tool %s: %s", a.ID, w, p)
			}
		}
	}
}

// seventyTools is a synthetic spec of 70 tools of varied schema shapes.
func seventyTools() []Tool {
	shapes := []string{
		`{"type":"object","properties":{"id":{"type":"string","pattern":"^T[0-9]{4}$"}},"required":["id"]}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":9},"x":{"type":"number","exclusiveMinimum":0}},"required":["n","x"]}`,
		`{"type":"object","properties":{"mode":{"enum":["a","b"]},"when":{"type":"string","format":"date-time"}},"required":["mode","when"]}`,
		`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":3},"minItems":2},"flag":{"type":"boolean"}},"required":["tags"]}`,
		`{"$defs":{"p":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},"lon":{"type":"number"}},"required":["lat","lon"]}},"type":"object","properties":{"at":{"$ref":"#/$defs/p"}},"required":["at"]}`,
		`{"type":"object","properties":{"v":{"anyOf":[{"type":"null"},{"type":"string","format":"email"}]}},"required":["v"]}`,
		`{"type":"object","properties":{"cfg":{"type":"object","properties":{"depth":{"type":"integer","minimum":1},"name":{"type":"string","maxLength":4}},"required":["depth","name"],"additionalProperties":false}},"required":["cfg"],"additionalProperties":false}`,
	}
	var out []Tool
	for i := range 70 {
		out = append(out, Tool{Tool: toolsrc.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: fmt.Sprintf("Tool number %d.", i), InputSchema: json.RawMessage(shapes[i%len(shapes)])}})
	}
	return out
}

func TestOfflineOnSeventyTools(t *testing.T) {
	tools := seventyTools()
	// Fewer scenarios than variants: least-used tools first still covers
	// every tool once there are at least as many scenarios as tools.
	arts, err := Offline("tools:synthetic", tools, 70)
	if err != nil {
		t.Fatal(err)
	}
	checkArtifacts(t, arts)
	if cov := Measure(tools, arts); cov.Used != 70 || cov.ValidCalls != cov.Calls || len(arts) != 70 {
		t.Fatalf("%+v over %d artifacts", cov, len(arts))
	}
}

// TestPublicStyleSchemasLoad: tools/list fixtures written in the style of
// popular public MCP servers ($schema, $defs/$ref, anyOf, oneOf, allOf,
// enums, formats, patterns, nested objects and arrays, outputSchema,
// annotations) load and yield schema-valid scenarios.
func TestPublicStyleSchemasLoad(t *testing.T) {
	tools, err := loadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := Offline("tools:public_style", tools, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkArtifacts(t, arts)
	cov := Measure(tools, arts)
	if cov.Used != len(tools) || cov.ValidCalls != cov.Calls {
		t.Fatalf("%+v", cov)
	}
	outputChecks := 0
	for _, a := range arts {
		for _, as := range a.Assertions {
			if as.Kind == "output_schema" {
				outputChecks++
			}
		}
	}
	if outputChecks == 0 {
		t.Error("no output_schema assertion for the tool with an outputSchema")
	}
	if _, err := loadTools("testdata/missing.json"); err == nil {
		t.Error("missing file loaded")
	}
}

func TestFromPattern(t *testing.T) {
	for _, p := range []string{`^DV[0-9]{3,}$`, `^C[A-Z0-9]{8,}$`, `^[0-9]+\.[0-9]+$`, `^climate\.[a-z_]+$`, `^(ab|cd)x?$`} {
		s, err := fromPattern(p)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(p).MatchString(s) {
			t.Errorf("%q does not match %s", s, p)
		}
	}
}

// BenchmarkOffline100 synthesizes 100 scenarios from the 70-tool spec.
// Target: under 1 s per 100.
func BenchmarkOffline100(b *testing.B) {
	for b.Loop() {
		if _, err := Offline("tools:synthetic", seventyTools(), 100); err != nil {
			b.Fatal(err)
		}
	}
}

// TestToolsFromALiveServer lists a running server's tools over streamable
// HTTP and synthesizes from them.
func TestToolsFromALiveServer(t *testing.T) {
	d := gen.Domains[0]
	h, err := serve.NewHandler(serve.DomainFactory(d, servetest.Level(t, d, level.L3)), serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close(context.Background())
	listed, err := toolsrc.FromMCP(context.Background(), "", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tools := Listed(listed)
	if len(tools) != len(d.Tools[level.L3]) {
		t.Fatalf("%d tools, want %d", len(tools), len(d.Tools[level.L3]))
	}
	arts, err := Offline("mcp:test", tools, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cov := Measure(tools, arts); cov.Used != cov.Tools || cov.ValidCalls != cov.Calls {
		t.Errorf("%+v", cov)
	}
	if _, err := toolsrc.FromMCP(context.Background(), "", ""); err == nil {
		t.Error("no server: no error")
	}
}

// TestUnsatisfiableToolsSkipped: a tool no valid call fits is skipped with
// why, the others are synthesized; constructs granite can satisfy are.
func TestUnsatisfiableToolsSkipped(t *testing.T) {
	tools, err := loadTools("testdata/unsatisfiable_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := OfflineReport("tools:unsat", tools, 0)
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.Tool] = s.Why
	}
	for name, why := range map[string]string{"not_anything": "no valid call", "lookbehind": "does not compile", "required_undeclared_closed": "no valid call"} {
		if !strings.Contains(skipped[name], why) {
			t.Errorf("%s: skipped for %q; want %q", name, skipped[name], why)
		}
	}
	if len(res.Skipped) != 3 {
		t.Errorf("skipped %v; want only the three unsatisfiable tools", res.Skipped)
	}
	cov := Measure(tools, res.Artifacts)
	if cov.Used != len(tools)-len(res.Skipped) || cov.ValidCalls != cov.Calls {
		t.Errorf("%+v", cov)
	}
	usable, sk := Usable("tools:unsat", tools)
	if len(usable)+len(sk) != len(tools) || len(sk) != len(res.Skipped) {
		t.Errorf("Usable: %d usable, %v", len(usable), sk)
	}
	if _, err := OfflineReport("x", tools[1:3], 0); err == nil || !strings.Contains(err.Error(), "no tool is usable") {
		t.Errorf("all unusable: %v", err)
	}
}

// loadTools reads a tools file as the synthesizer takes it.
func loadTools(path string) ([]Tool, error) {
	tools, err := toolsrc.LoadTools(path)
	return Listed(tools), err
}
