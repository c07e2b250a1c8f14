package regroup

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// Caller reaches the source server's tools: an mcp-go client of the live
// server, or anything answering as one (a replay server).
type Caller interface {
	CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// CallerFunc adapts a function to Caller.
type CallerFunc func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// CallTool calls f.
func (f CallerFunc) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return f(ctx, req)
}

// MCP returns the coarse tool as mcp-go lists it.
func (c *Coarse) MCP() mcp.Tool {
	t := toolsrc.Tool{Name: c.Name, Description: c.Description, InputSchema: c.InputSchema, OutputSchema: c.OutputSchema, Annotations: c.Annotations}
	return t.MCP()
}

// Register adds a level's tools to s, each forwarding to up. At L4 a
// call is forwarded as it came: the server as published judges its own
// arguments. At coarser levels a call is prepared first (see Prepare);
// a refused call never reaches the source and is answered with a tool
// error. The source's result, or its protocol error, comes back
// unchanged.
func (iface *Interface) Register(s *server.MCPServer, lv level.Level, up Caller) error {
	tools := iface.Levels[lv]
	if tools == nil {
		return fmt.Errorf("no tools at level %q", lv)
	}
	for _, c := range tools {
		s.AddTool(c.MCP(), iface.handler(lv, c, up))
	}
	return nil
}

func (iface *Interface) handler(lv level.Level, c *Coarse, up Caller) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if lv == level.L4 {
			return up.CallTool(ctx, req)
		}
		raw := req.Params.RawArguments
		if len(raw) == 0 && req.Params.Arguments != nil {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return mcp.NewToolResultError("arguments are not valid JSON: " + err.Error()), nil
			}
			raw = b
		}
		name, args, err := c.Prepare(raw)
		if err != nil {
			if r, ok := err.(*Refusal); ok {
				return mcp.NewToolResultError(r.Msg), nil
			}
			return nil, err
		}
		fwd := mcp.CallToolRequest{}
		fwd.Params.Name = name
		fwd.Params.Arguments = args
		fwd.Params.Meta = req.Params.Meta
		return up.CallTool(ctx, fwd)
	}
}

// NewServer is an MCP server offering the level's tools over up, named
// after the source with the level appended.
func (iface *Interface) NewServer(name string, lv level.Level, up Caller) (*server.MCPServer, error) {
	s := server.NewMCPServer(name+"-"+string(lv), "1", server.WithToolCapabilities(false))
	if err := iface.Register(s, lv, up); err != nil {
		return nil, err
	}
	return s, nil
}
