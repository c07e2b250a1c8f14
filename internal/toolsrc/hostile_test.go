package toolsrc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

// hostileServer speaks just enough MCP over streamable HTTP to be
// listed: initialize, then tools/list answered by page(n, cursor), or
// never when page is nil.
func hostileServer(t *testing.T, page func(cursor string) (tools []map[string]any, next string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "hostile", "version": "1"}}
		case "tools/list":
			if page == nil {
				<-r.Context().Done() // never answers
				return
			}
			tools, next := page(req.Params.Cursor)
			res := map[string]any{"tools": tools}
			if next != "" {
				res["nextCursor"] = next
			}
			result = res
		default:
			result = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
}

// TestToolsListIsBounded attacks listing with servers that never end
// their tool list (a new cursor every page, or the same one again), list
// more tools than granite takes, or never answer: each is refused with
// what it did, instead of taking memory or time without end.
func TestToolsListIsBounded(t *testing.T) {
	oldTimeout := toolsrc.ListTimeout
	toolsrc.ListTimeout = 500 * time.Millisecond
	defer func() { toolsrc.ListTimeout = oldTimeout }()
	n := 0
	cases := []struct {
		name string
		page func(string) ([]map[string]any, string)
		want string
	}{
		{"endless pages", func(string) ([]map[string]any, string) {
			n++
			return []map[string]any{tool(fmt.Sprintf("t%d", n))}, fmt.Sprintf("c%d", n)
		}, "more than 100 pages"},
		{"a cursor in a circle", func(string) ([]map[string]any, string) {
			n++
			return []map[string]any{tool(fmt.Sprintf("t%d", n))}, "again"
		}, "cursor"},
		{"too many tools", func(string) ([]map[string]any, string) {
			var ts []map[string]any
			for i := range toolsrc.MaxListTools + 1 {
				ts = append(ts, tool(fmt.Sprintf("t%d", i)))
			}
			return ts, ""
		}, "over 10000 tools"},
		{"no answer", nil, "no whole answer within"},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := toolsrc.FromMCP(context.Background(), "", hostileServer(t, c.page))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %s", c.name, d)
		}
	}
}

// TestToolsListRefusesSchemasBeyondTheBounds: a server listing the red
// team's schemas (one tool nesting 1,000 objects, one whose enum lists
// 300,000 values, an output schema nested as deep) is refused, naming
// the tool, where in its schema and the bound, before anything compiles
// or regroups them; a tool within the bounds lists.
func TestToolsListRefusesSchemasBeyondTheBounds(t *testing.T) {
	nested := func(n int) map[string]any {
		s := map[string]any{"type": "string"}
		for range n {
			s = map[string]any{"type": "object", "properties": map[string]any{"a": s}}
		}
		return s
	}
	enum := func(n int) map[string]any {
		vals := make([]any, n)
		for i := range vals {
			vals[i] = fmt.Sprintf("value_%d", i)
		}
		return map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string", "enum": vals}}}
	}
	for _, c := range []struct {
		name string
		tool map[string]any
		want string
	}{
		{"1,000 nested objects", map[string]any{"name": "deep", "inputSchema": nested(1000)},
			`tools/list: tool "deep": inputSchema at properties.a.properties.a.…(120 more)….properties.a.properties.a: nested deeper than 128 levels`},
		{"an enum of 300,000 values", map[string]any{"name": "huge", "inputSchema": enum(300_000)},
			`tools/list: tool "huge": inputSchema at properties.v.enum: enum lists more than 100000 values`},
		{"an output schema nested too deep", map[string]any{"name": "out", "inputSchema": nested(1), "outputSchema": nested(1000)},
			`tools/list: tool "out": outputSchema at properties.a.properties.a.`},
		{"within the bounds", map[string]any{"name": "fine", "inputSchema": nested(60)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := hostileServer(t, func(string) ([]map[string]any, string) { return []map[string]any{c.tool}, "" })
			tools, err := toolsrc.FromMCP(context.Background(), "", url)
			if c.want == "" {
				if err != nil || len(tools) != 1 {
					t.Fatalf("got %d tools, %v; want the tool", len(tools), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want %q", err, c.want)
			}
		})
	}
}
