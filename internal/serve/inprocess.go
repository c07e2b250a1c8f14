package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Session is a fresh store behind a domain's MCP server at one level (or
// any other server, such as an artifact's replay server, without a store),
// with an initialised in-process MCP client: every call goes through the
// same tools/call path a remote client uses. A gold run and a trial both
// play on one.
type Session struct {
	Domain *mcpdomain.Domain
	Level  level.Level
	Store  mcpdomain.Store
	client *client.Client
	// closers end what the session's server stands on (a live source).
	closers []func()
	// server is the MCP server the client is connected to, which an
	// agent command is served too, so that both see one state.
	server *server.MCPServer
}

// Connect starts an initialised in-process client of a server; name
// says which server in errors.
func Connect(ctx context.Context, srv *server.MCPServer, name string) (*Session, error) {
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		return nil, fmt.Errorf("%s: in-process client: %w", name, err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("%s: start client: %w", name, err)
	}
	init := mcp.InitializeRequest{}
	// In process there is no HTTP: the modern protocol's request headers,
	// which its client computes per call from the tool's schema, would be
	// work for nobody, so sessions speak the latest legacy revision.
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "granite", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: initialize: %w", name, err)
	}
	return &Session{client: c, server: srv}, nil
}

// Server is the MCP server the session's client is connected to: serve
// it to an agent command too and both see one state.
func (s *Session) Server() *server.MCPServer { return s.server }

// OnClose adds what Close ends after the client: what the session's
// server stands on, such as a live source.
func (s *Session) OnClose(f ...func()) { s.closers = append(s.closers, f...) }

// Close ends the session.
func (s *Session) Close() error {
	err := s.client.Close()
	for _, c := range s.closers {
		c()
	}
	return err
}

// Tools returns the tools the server lists.
func (s *Session) Tools(ctx context.Context) ([]mcp.Tool, error) {
	res, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	// mcp-go's client decodes an input schema into a typed struct that
	// keeps only type, properties, required, additionalProperties and
	// $defs at the top, so a oneOf there (surface's actions: oneof) would
	// never reach a model; the wire carries the whole schema, as a remote
	// client reads it, and so does the session: as its server lists it.
	for i, t := range res.Tools {
		if st := s.server.GetTool(t.Name); st != nil && st.Tool.RawInputSchema != nil {
			res.Tools[i].RawInputSchema = st.Tool.RawInputSchema
		}
	}
	return res.Tools, nil
}

// Result is the outcome of one tools/call.
type Result struct {
	// Text is the result's text content.
	Text string
	// IsError is set for tool errors (bad arguments, unknown IDs): the
	// model sees them and may retry.
	IsError bool
	// Fault is the fault the server injected into the call (package
	// faults), "" for none.
	Fault faults.Kind
}

// Call sends tools/call with raw JSON arguments. An error means the call
// never produced a tool result (a protocol failure), not a tool error.
func (s *Session) Call(ctx context.Context, tool string, args json.RawMessage) (Result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	ctx, fault := noting(ctx)
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return Result{Text: b.String(), IsError: res.IsError, Fault: *fault}, nil
}
