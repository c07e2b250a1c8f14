package integration

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// FuzzTools feeds arbitrary JSON arguments to every tool of every generated
// domain at every level through the generated handlers: no panic may
// escape, and a call that returns an error must leave the store
// byte-identical.
//
//	go test ./generator/integration -fuzz FuzzTools -fuzztime 30s
func FuzzTools(f *testing.F) {
	type target struct {
		st   mcpdomain.Store
		tool func(mcp.CallToolRequest) (*mcp.CallToolResult, error)
		name string
	}
	var targets []target
	for _, d := range gen.Domains {
		for _, level := range level.Levels {
			for _, tool := range d.Tools[level] {
				st := d.NewStore()
				srv, err := d.NewServer(level, st)
				if err != nil {
					f.Fatal(err)
				}
				h := srv.GetTool(tool.Name).Handler
				targets = append(targets, target{st: st, name: tool.Name, tool: func(r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return h(context.Background(), r)
				}})
				for _, op := range tool.Operations {
					f.Add(uint16(len(targets)-1), string(withAction(f, tool, op, op.Example)))
				}
			}
		}
	}
	for _, s := range []string{``, `null`, `[]`, `"x"`, `{"action":null}`, `{"limit":1e400}`, `{"id":{"$ref":"#"}}`, `{"level":-0.0}`, `{`} {
		f.Add(uint16(0), s)
	}
	f.Fuzz(func(t *testing.T, which uint16, args string) {
		tg := targets[int(which)%len(targets)]
		tg.st.Reset()
		before := tg.st.Snapshot()
		req := mcp.CallToolRequest{}
		req.Params.Name = tg.name
		req.Params.RawArguments = []byte(args)
		res, err := tg.tool(req)
		if err != nil {
			t.Fatalf("%s %q: handler returned a protocol error: %v", tg.name, args, err)
		}
		if res == nil || len(res.Content) == 0 {
			t.Fatalf("%s %q: empty result", tg.name, args)
		}
		if res.IsError && string(before) != string(tg.st.Snapshot()) {
			t.Fatalf("%s %q: store changed by a call that failed: %v", tg.name, args, res.Content)
		}
	})
}
