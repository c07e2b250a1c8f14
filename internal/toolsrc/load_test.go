package toolsrc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestParseToolsRefusesSchemasBeyondTheBounds: a tools file holding the
// red team's schemas (one tool nesting 1,000 objects, one whose enum
// lists 300,000 values) is refused, each at its tool, naming where in
// the schema and the bound; the same schemas within the bounds load.
func TestParseToolsRefusesSchemasBeyondTheBounds(t *testing.T) {
	nested := func(n int) string {
		return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
	}
	enum := func(n int) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprintf(`"value_%d"`, i)
		}
		return `{"type":"object","properties":{"v":{"type":"string","enum":[` + strings.Join(vals, ",") + `]}}}`
	}
	file := func(deep, values int) []byte {
		return []byte(`{"tools": [` + "\n" + `{"name": "deep", "inputSchema": ` + nested(deep) + `},` + "\n" +
			`{"name": "huge", "inputSchema": ` + enum(values) + `, "outputSchema": ` + nested(2) + `}]}`)
	}
	_, err := ParseTools("f.json", file(1000, 300_000))
	for _, want := range []string{
		`f.json:2:1: tool 0 ("deep"): inputSchema at properties.a.properties.a.…(120 more)….properties.a.properties.a: nested deeper than 128 levels of objects and arrays; expected at most 128`,
		`f.json:3:1: tool 1 ("huge"): inputSchema at properties.v.enum: enum lists more than 100000 values; expected at most 100000`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %q", err, want)
		}
	}
	tools, err := ParseTools("f.json", file(60, 100_000))
	if err != nil || len(tools) != 2 {
		t.Errorf("within the bounds: got %d tools, %v", len(tools), err)
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
