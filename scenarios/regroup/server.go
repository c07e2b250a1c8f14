package regroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// MCP returns the coarse tool as mcp-go lists it.
func (c *Coarse) MCP() mcp.Tool {
	t := toolsrc.Tool{Name: c.Name, Description: c.Description, InputSchema: c.InputSchema, OutputSchema: c.OutputSchema, Annotations: c.Annotations}
	return t.MCP()
}

// route prepares a call of the coarse tool for the source (see Prepare);
// a Refusal is the client's tool error.
func (c *Coarse) route(args json.RawMessage) (string, json.RawMessage, string, error) {
	tool, out, err := c.Prepare(args)
	var refusal *Refusal
	if errors.As(err, &refusal) {
		return "", nil, refusal.Msg, nil
	}
	return tool, out, "", err
}

// Proxy is the level's tools served in front of the source, named after
// the source with the level appended; its Source is the caller's to set.
// At L4 a call is forwarded as it came: the server as published judges
// its own arguments. At coarser levels a call is prepared first (see
// Prepare); a refused call never reaches the source and is answered with
// a tool error.
func (gr *Grouping) Proxy(name string, lv level.Level) (*serve.Proxy, error) {
	tools := gr.Levels[lv]
	if tools == nil {
		return nil, fmt.Errorf("no tools at level %q", lv)
	}
	p := &serve.Proxy{Name: name + "-" + string(lv), Routes: map[string]serve.Route{}}
	for _, c := range tools {
		p.Tools = append(p.Tools, c.MCP())
		p.Routes[c.Name] = nil
		if lv != level.L4 {
			p.Routes[c.Name] = c.route
		}
	}
	return p, nil
}

// NewServer is an MCP server offering the level's tools over up (see
// Proxy).
func (gr *Grouping) NewServer(name string, lv level.Level, up serve.Caller) (*server.MCPServer, error) {
	p, err := gr.Proxy(name, lv)
	if err != nil {
		return nil, err
	}
	return p.NewServer(up), nil
}

// StartRelay starts a relay of the level's tools to the source command
// (see serve.StartRelay).
func (gr *Grouping) StartRelay(ctx context.Context, lv level.Level, command, dir string, stderr io.Writer) (*serve.Relay, error) {
	p, err := gr.Proxy("", lv)
	if err != nil {
		return nil, err
	}
	return serve.StartRelay(ctx, p.Routes, command, dir, stderr)
}
