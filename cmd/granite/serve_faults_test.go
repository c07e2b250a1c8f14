package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
)

// TestServeRegroupedFaults: granite serve --mcp-url --level L1 --faults
// injects the setting's faults at the relay to the source, by the source
// tool a call of the one L1 tool reaches: at a rate of 1 of transient
// errors, no call reaches the source and each is answered with the
// transient error; at a rate of 1 of timeouts, each reaches it and is
// answered with the timeout error.
func TestServeRegroupedFaults(t *testing.T) {
	var reached atomic.Int64
	src := server.NewMCPServer("shelf", "1", server.WithToolCapabilities(false))
	for _, name := range []string{"stow_crate", "list_crates"} {
		src.AddTool(mcp.NewTool(name, mcp.WithDescription("invented"), mcp.WithString("crate_id")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			reached.Add(1)
			return mcp.NewToolResultText(`{"ok":true}`), nil
		})
	}
	hs := httptest.NewServer(server.NewStreamableHTTPServer(src))
	defer hs.Close()
	for _, c := range []struct {
		setting string
		reached int64
		want    string
	}{
		{"down:1:transient", 0, faults.TransientText},
		{"slow:1:timeout", 1, faults.TimeoutText},
	} {
		t.Run(c.setting, func(t *testing.T) {
			reached.Store(0)
			ctx := t.Context()
			cl := serveClient(t, []string{"--mcp-url", hs.URL, "--level", "L1", "--faults", c.setting}, "shelf (regrouped) at L1")
			listed, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
			must(t, err)
			if len(listed.Tools) != 1 {
				t.Fatalf("L1 lists %d tools; want one", len(listed.Tools))
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = listed.Tools[0].Name
			req.Params.Arguments = map[string]any{"action": actionOf(t, listed.Tools[0], "stow_crate"), "crate_id": "I1"}
			res, err := cl.CallTool(ctx, req)
			must(t, err)
			if !res.IsError || resultText(res) != c.want || reached.Load() != c.reached {
				t.Errorf("stow_crate through L1: (error %v) %q, the source reached %d times; want %q, reached %d", res.IsError, resultText(res), reached.Load(), c.want, c.reached)
			}
		})
	}
}

// actionOf is the action of an L1 tool that reaches the source tool
// named like name.
func actionOf(t *testing.T, tool mcp.Tool, name string) string {
	t.Helper()
	action, _ := tool.InputSchema.Properties["action"].(map[string]any)
	enum, _ := action["enum"].([]any)
	for _, a := range enum {
		if s, _ := a.(string); strings.Contains(s, strings.TrimSuffix(name, "_crate")) {
			return s
		}
	}
	t.Fatalf("tool %s: no action like %s among %v", tool.Name, name, enum)
	return ""
}
