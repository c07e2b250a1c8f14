package integration

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// memoryCmd starts the pinned reference memory server on a graph file in
// a test folder.
func memoryCmd(t *testing.T, node, dir string) string {
	return "env MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl") + " " + node + " " +
		filepath.Join(dir, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

// TestRegroupedServerInterop serves the reference memory server regrouped
// at L2 and checks it as the generated servers are checked: the official
// Inspector lists its tools and calls one validly and invalidly over
// stdio and HTTP, and the conformance scenarios pass over HTTP.
func TestRegroupedServerInterop(t *testing.T) {
	node, dir, granite := interopTools(t)
	cmd := memoryCmd(t, node, dir)
	tools, err := toolsrc.FromMCP(context.Background(), cmd, "")
	if err != nil {
		t.Fatal(err)
	}
	iface, err := regroup.Build(tools, regroup.Derive("memory", tools))
	if err != nil {
		t.Fatal(err)
	}
	lv := level.L2
	query := iface.Levels[lv][0]
	cli := filepath.Join(dir, "node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js")
	targets := map[string][]string{
		"stdio": {granite, "serve", "--mcp-cmd", cmd, "--level", string(lv)},
		"http":  {serveOverHTTP(t, granite, "--mcp-cmd", memoryCmd(t, node, dir), "--level", string(lv))},
	}
	for name, target := range targets {
		out, code := runNode(t, node, nil, append(append([]string{cli}, target...), "--method", "tools/list")...)
		var list struct{ Tools []struct{ Name string } }
		firstJSON(t, out, &list)
		listed := map[string]bool{}
		for _, tl := range list.Tools {
			listed[tl.Name] = true
		}
		for _, want := range iface.Levels[lv] {
			if !listed[want.Name] {
				t.Errorf("%s tools/list: %s missing", name, want.Name)
			}
		}
		if code != 0 || len(list.Tools) != len(iface.Levels[lv]) {
			t.Errorf("%s tools/list: exit %d, %+v; want %d tools\n%s", name, code, list.Tools, len(iface.Levels[lv]), out)
		}
		call := func(args ...string) (string, bool) {
			argv := append(append([]string{cli}, target...), "--method", "tools/call", "--tool-name", query.Name, "--tool-arg")
			out, _ := runNode(t, node, nil, append(argv, args...)...)
			var res struct {
				Content []struct{ Text string }
				IsError bool
			}
			firstJSON(t, out, &res)
			if len(res.Content) == 0 {
				t.Fatalf("%s: no content\n%s", name, out)
			}
			return res.Content[0].Text, res.IsError
		}
		if text, isErr := call("action=read_graph"); isErr || !strings.Contains(text, "entities") {
			t.Errorf("%s read_graph: %v %q", name, isErr, text)
		}
		if text, isErr := call("action=search_nodes"); !isErr || !strings.HasPrefix(text, "invalid arguments for search_nodes: at /: missing property 'query'") {
			t.Errorf("%s search_nodes without query: %v %q; want the source schema's reason", name, isErr, text)
		}
	}
	suite := filepath.Join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
	url := serveOverHTTP(t, granite, "--mcp-cmd", memoryCmd(t, node, dir), "--level", string(level.L3))
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, s := range conformanceScenarios {
		out, code := runNode(t, node, nil, suite, "server", "--url", url, "--scenario", s)
		m := passed.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] != m[2] || m[1] == "0" {
			t.Errorf("conformance %s on the regrouped server: exit %d\n%s", s, code, out)
		}
	}
}
