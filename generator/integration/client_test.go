package integration

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// session is a fresh store behind a generated server at one level, with an
// initialised in-process MCP client.
type session struct {
	st mcpdomain.Store
	c  *client.Client
}

func newSession(tb testing.TB, d *mcpdomain.Domain, level level.Level) *session {
	tb.Helper()
	st := d.NewStore()
	srv, err := d.NewServer(level, st)
	if err != nil {
		tb.Fatalf("%s %s: NewServer: %v", d.Name, level, err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "granite-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		tb.Fatalf("initialize: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return &session{st: st, c: c}
}

// call sends tools/call with raw JSON arguments and returns the text of the
// result and whether it is a tool error.
func (s *session) call(tb testing.TB, tool string, args []byte) (string, bool) {
	tb.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	res, err := s.c.CallTool(context.Background(), req)
	if err != nil {
		tb.Fatalf("tools/call %s %s: protocol error: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		tb.Fatalf("tools/call %s: want 1 content item, got %d", tool, len(res.Content))
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		tb.Fatalf("tools/call %s: content is %T, want text", tool, res.Content[0])
	}
	return text.Text, res.IsError
}

// withAction adds "action" to an argument object when the tool has one.
func withAction(tb testing.TB, t *mcpdomain.Tool, op *mcpdomain.Operation, args string) []byte {
	tb.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		tb.Fatal(err)
	}
	if t.HasAction() {
		m["action"] = op.Name
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
