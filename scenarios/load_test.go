package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseToolsErrors: every problem of a tools file at its position,
// naming the tool and what was expected.
func TestParseToolsErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"no schema", `{"tools": [{"name": "a", "inputSchema": {}},
  {"name": "b"}]}`, `f.json:2:3: tool 1 ("b"): found no inputSchema; expected a JSON Schema object`},
		{"schema true", `[{"name": "a", "inputSchema": true}]`, `f.json:1:2: tool 0 ("a"): found inputSchema true; expected a JSON Schema object`},
		{"no name", `[{"inputSchema": {}}]`, `f.json:1:2: tool 0: found no name`},
		{"not an object", `[{"name": "a", "inputSchema": {}}, 3]`, `f.json:1:36: tool 1: found 3; expected a tool object`},
		{"duplicate", "{\"tools\": [\n {\"name\": \"a\", \"inputSchema\": {}},\n {\"name\": \"a\", \"inputSchema\": {}}]}", `f.json:3:2: tool 1 ("a"): found the name again (first at 2:2)`},
		{"rpc error", `{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}`, `f.json:1:1: found a JSON-RPC error response ({"code": -32601, "message": "Method not found"})`},
		{"rpc request", `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`, `found a JSON-RPC request (method "tools/list")`},
		{"no tools", `{"result": 1}`, `found an object without "tools"`},
		{"not json", "{\"tools\": [\n  {\"name\": }]}", `f.json:2:12: not JSON`},
		{"empty", ``, `the file is empty`},
		{"a string", `"tools"`, `found a string "tools"; expected a tools/list result`},
	} {
		_, err := ParseTools("f.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v; want %q", c.name, err, c.want)
		}
	}
}

// TestToolsKeptAsPublished: a JSON-RPC tools/list response loads, and the
// tools written back keep title, execution, $schema and _meta.
func TestToolsKeptAsPublished(t *testing.T) {
	src := `{"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "get_task", "title": "Get task",
  "execution": {"taskSupport": "optional"}, "_meta": {"x": 1},
  "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]}}]}}`
	tools, err := ParseTools("rpc.json", []byte(src))
	if err != nil || len(tools) != 1 {
		t.Fatalf("%v %d", err, len(tools))
	}
	path := filepath.Join(t.TempDir(), "t.tools.json")
	if err := WriteTools(path, tools); err != nil {
		t.Fatal(err)
	}
	back, _ := os.ReadFile(path)
	for _, want := range []string{`"title": "Get task"`, `"taskSupport": "optional"`, `"$schema": "https://json-schema.org/draft/2020-12/schema"`, `"_meta"`} {
		if !bytes.Contains(back, []byte(want)) {
			t.Errorf("written tools lack %s:\n%s", want, back)
		}
	}
	again, err := LoadTools(path)
	if err != nil || again[0].Name != "get_task" {
		t.Fatalf("%v", err)
	}
}

// TestUnsatisfiableToolsSkipped: a tool no valid call fits is skipped with
// why, the others are synthesized; constructs granite can satisfy are.
func TestUnsatisfiableToolsSkipped(t *testing.T) {
	tools, err := LoadTools("testdata/unsatisfiable_tools.json")
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

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`npx -y @modelcontextprotocol/server-filesystem /tmp`, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}},
		{`node "/home/me/My Servers/index.js" --root '/a b'`, []string{"node", "/home/me/My Servers/index.js", "--root", "/a b"}},
		{`server /path/with\ space "q\"uote" 'it''s' ""`, []string{"server", "/path/with space", `q"uote`, "its", ""}},
		{`a "$HOME" '*'`, []string{"a", "$HOME", "*"}},
	} {
		got, err := SplitCommand(c.in)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`a "b`, `a 'b`, `   `} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestInitializeTimeout: a command that never answers initialize fails
// after InitTimeout instead of blocking.
func TestInitializeTimeout(t *testing.T) {
	old := InitTimeout
	InitTimeout = 300 * time.Millisecond
	defer func() { InitTimeout = old }()
	start := time.Now()
	_, err := FromMCP(context.Background(), "sleep 60", "")
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestCheckDuplicates(t *testing.T) {
	tools := []Tool{{Name: "a"}, {Name: "b"}, {Name: "a"}}
	err := CheckDuplicates("tools/list of srv", tools)
	if err == nil || !strings.Contains(err.Error(), `tools 0 and 2 are both named "a"`) {
		t.Errorf("got %v", err)
	}
	if err := CheckDuplicates("x", tools[:2]); err != nil {
		t.Error(err)
	}
}

// TestJudgeChecksAssertions: a tool_call the schema refuses, a not_call it
// accepts and an unknown tool are each reported.
func TestJudgeChecksAssertions(t *testing.T) {
	tools := []Tool{{Name: "get", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}}
	a := Artifact{ID: "x", Assertions: []Assertion{
		{Kind: "tool_call", Tool: "get", Arguments: json.RawMessage(`{"id":3}`)},
		{Kind: "not_call", Tool: "get", Arguments: json.RawMessage(`{"id":"a"}`), Probes: "pattern"},
		{Kind: "tool_call", Tool: "gone"},
		{Kind: "tool_call", Tool: "get", Arguments: json.RawMessage(`{"id":"a"}`)},
	}}
	q := Check(tools, []Artifact{a})
	if len(q.AssertionProblems) != 3 {
		t.Fatalf("%+v", q.AssertionProblems)
	}
	for i, want := range []string{"arguments the tool's schema refuses: at /id:", "probes pattern, but the tool's schema accepts", `names tool "gone"`} {
		if !strings.Contains(q.AssertionProblems[i].Why, want) {
			t.Errorf("problem %d: %q; want %q", i, q.AssertionProblems[i].Why, want)
		}
	}
	if s := Summary(q, nil, 0); !strings.Contains(s, "3 assertions cannot mean what they say") {
		t.Errorf("summary: %s", s)
	}
}
