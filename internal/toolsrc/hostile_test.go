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
