package serve

import (
	"context"
	"encoding/json"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// Caller reaches a source server's tools: an mcp-go client of the live
// server, a Relay, or anything answering as one (a replay server).
type Caller interface {
	CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// CallerFunc adapts a function to Caller.
type CallerFunc func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// CallTool calls f.
func (f CallerFunc) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return f(ctx, req)
}

// Route turns a client's call of one of a proxy's tools into the
// source's: the source tool and its arguments, or refused, the text of a
// tool error the client gets instead (the call never reaches the
// source). An error is the proxy's own failure.
type Route func(args json.RawMessage) (tool string, toArgs json.RawMessage, refused string, err error)

// Proxy is an MCP server of its own tools in front of a source server: a
// call of a tool is routed, then forwarded to the source, whose result,
// or protocol error, comes back unchanged. scenarios/regroup's coarse
// tools are served this way.
type Proxy struct {
	// Name is the server's name in initialize.
	Name  string
	Tools []mcp.Tool
	// Routes holds a route for every tool of Tools, by name; a nil route
	// forwards its tool's calls as they came, byte for byte (the source
	// judges its own arguments, as a server as published).
	Routes map[string]Route
	// Source is the live server ServeStdio and Handler connect to.
	Source Source
	// Faults, when it injects any, are drawn afresh for each connection
	// to the source and injected into the calls that reach it
	// (FaultCaller), whose tools SourceTools lists.
	Faults      *faults.Schedule
	SourceTools []toolsrc.Tool
}

// faulted reports whether the proxy injects faults.
func (p *Proxy) faulted() bool { return p.Faults != nil && !p.Faults.Setting.None() }

// NewServer is the proxy's MCP server forwarding to up.
func (p *Proxy) NewServer(up Caller) *server.MCPServer {
	s := server.NewMCPServer(p.Name, "1", server.WithToolCapabilities(false))
	for _, t := range p.Tools {
		s.AddTool(t, handler(p.Routes[t.Name], up))
	}
	return s
}

func handler(route Route, up Caller) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if route == nil {
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
		name, args, refused, err := route(raw)
		switch {
		case refused != "":
			return mcp.NewToolResultError(refused), nil
		case err != nil:
			return nil, err
		}
		fwd := mcp.CallToolRequest{}
		fwd.Params.Name = name
		fwd.Params.Arguments = args
		fwd.Params.Meta = req.Params.Meta
		return up.CallTool(ctx, fwd)
	}
}

// ServeStdio serves the proxy over stdio (see Stdio) on one
// connection to the source for the process; a command's calls cross
// through a Relay, without mcp-go in the way, unless the proxy injects
// faults.
func (p *Proxy) ServeStdio(ctx context.Context, in io.Reader, out, stderr io.Writer) error {
	up, fwd, closeUp, err := p.Source.open(ctx, p.Routes, stderr)
	if err != nil {
		return err
	}
	defer closeUp()
	if p.faulted() {
		// Every call goes through the proxy's server, where the faults
		// are injected, rather than past it through the relay.
		return Stdio(ctx, p.NewServer(FaultCaller(up, p.SourceTools, p.Faults)), in, out, nil)
	}
	return Stdio(ctx, p.NewServer(up), in, out, fwd)
}

// Handler serves the proxy over streamable HTTP with o's checks, each
// session on a fresh connection to the source: for a command, a fresh
// process of it.
func (p *Proxy) Handler(o Options, stderr io.Writer) (*Handler, error) {
	return NewHandler(func() (*server.MCPServer, func(), error) {
		up, _, closeUp, err := p.Source.open(context.Background(), p.Routes, stderr)
		if err != nil {
			return nil, nil, err
		}
		return p.NewServer(FaultCaller(up, p.SourceTools, p.Faults)), closeUp, nil
	}, o)
}

// Source is the live server a proxy forwards to: a command speaking stdio
// (Cmd) or a streamable HTTP endpoint (URL), reached with Options.
type Source struct {
	Cmd, URL string
	Options  []toolsrc.Option
}

// open makes a fresh connection to the source for the tools routes
// names: for a command, a relay on a fresh process of it, which also
// forwards a stdio client's calls; for a URL, an mcp-go client (and no
// forwarder).
func (s Source) open(ctx context.Context, routes map[string]Route, stderr io.Writer) (Caller, Forwarder, func(), error) {
	if s.Cmd != "" {
		relay, err := StartRelay(ctx, routes, s.Cmd, "", stderr)
		if err != nil {
			return nil, nil, nil, err
		}
		return relay, relay, func() { relay.Close() }, nil
	}
	c, _, err := toolsrc.Connect(ctx, "", s.URL, s.Options...)
	if err != nil {
		return nil, nil, nil, err
	}
	return c, nil, func() { c.Close() }, nil
}
