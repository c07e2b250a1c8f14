package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/surface"
)

// DomainTools are a generated domain's tools at a level as package
// surface takes them: each tool with its operations' own schemas.
func DomainTools(d *mcpdomain.Domain, lv level.Level) []surface.Tool {
	var out []surface.Tool
	for _, t := range d.Tools[lv] {
		st := surface.Tool{Name: t.Name, Description: t.Description, InputSchema: []byte(t.InputSchema)}
		if t.HasAction() {
			for _, o := range t.Operations {
				st.Actions = append(st.Actions, surface.Action{Name: o.Name, Description: o.Description, Schema: []byte(o.Schema), Composite: compositeKind(o.Kind)})
			}
		} else {
			st.Composite = compositeKind(t.Operations[0].Kind)
		}
		out = append(out, st)
	}
	return out
}

// compositeKind is what surface calls the kind of an operation that does
// several things in one call (a preset, a workflow); "" for an atomic one.
func compositeKind(k opkind.Kind) string {
	if k == opkind.Preset || k == opkind.Workflow {
		return string(k)
	}
	return ""
}

// Composes reports whether level lv of d offers a composite operation of
// kind (opkind.Preset, opkind.Workflow; "" for either): a tool of one, or
// an action of one.
func Composes(d *mcpdomain.Domain, lv level.Level, kind opkind.Kind) bool {
	is := func(c string) bool { return c != "" && (kind == "" || c == string(kind)) }
	return slices.ContainsFunc(DomainTools(d, lv), func(t surface.Tool) bool {
		return is(t.Composite) || slices.ContainsFunc(t.Actions, func(a surface.Action) bool { return is(a.Composite) })
	})
}

// Compositions are the compositions of d's levels the catalogue leaves
// out, finest level first: each level atomic where it offers a composite
// operation, composite where it offers a workflow.
func Compositions(d *mcpdomain.Domain) ([]*surface.Interface, error) {
	var out []*surface.Interface
	for _, lv := range level.Levels {
		for _, c := range []struct {
			name string
			kind opkind.Kind
		}{{"atomic", ""}, {"composite", opkind.Workflow}} {
			if !Composes(d, lv, c.kind) {
				continue
			}
			iface, err := DomainInterface(d, surface.Spec{Name: string(lv) + "-" + c.name, Level: lv, Transforms: surface.Transforms{Composition: c.name}})
			if err != nil {
				return nil, err
			}
			out = append(out, iface)
		}
	}
	return out, nil
}

// DomainInterfaces is the standard catalogue of a generated domain's
// interfaces (surface.Catalogue over its four levels).
func DomainInterfaces(d *mcpdomain.Domain) ([]*surface.Interface, error) {
	levels := map[level.Level][]surface.Tool{}
	for _, lv := range level.Levels {
		if _, ok := d.Tools[lv]; ok {
			levels[lv] = DomainTools(d, lv)
		}
	}
	return surface.Catalogue(d.Name, levels)
}

// DomainInterface builds one interface of a generated domain.
func DomainInterface(d *mcpdomain.Domain, spec surface.Spec) (*surface.Interface, error) {
	if _, ok := d.Tools[spec.Level]; !ok {
		return nil, fmt.Errorf("domain %s: unknown level %q: want one of L4, L3, L2, L1", d.Name, spec.Level)
	}
	return surface.Build(spec, d.Name, DomainTools(d, spec.Level))
}

// InterfaceProxy is an interface's tools in front of its level's server:
// each call is decoded into the level's (surface.Interface.Decode) and
// forwarded; a call the interface refuses is answered with its tool error.
// listed are the level's tools as its server lists them, whose annotations
// the interface's tools keep.
func InterfaceProxy(iface *surface.Interface, name string, listed []mcp.Tool) *Proxy {
	annotations := map[string]mcp.ToolAnnotation{}
	for _, t := range listed {
		annotations[t.Name] = t.Annotations
	}
	p := &Proxy{Name: name, Routes: map[string]Route{}}
	for _, t := range iface.Tools {
		tool := mcp.NewToolWithRawSchema(t.Name, t.Description, json.RawMessage(t.InputSchema))
		tool.Annotations = annotations[iface.Source(t.Name)]
		p.Tools = append(p.Tools, tool)
		p.Routes[t.Name] = func(args json.RawMessage) (string, json.RawMessage, string, error) {
			src, out, err := iface.Decode(t.Name, args)
			var refusal *surface.Refusal
			if errors.As(err, &refusal) {
				return "", nil, refusal.Msg, nil
			}
			return src, out, "", err
		}
	}
	return p
}

// Identity is a level of d as an interface: its own tools, as written
// (surface.Spec.Plain). Open, NewServer and the handlers serve it with
// the level's own server, so a level played as its identity interface
// answers exactly as the level does. Built once per domain and level.
func Identity(d *mcpdomain.Domain, lv level.Level) (*surface.Interface, error) {
	key := identityKey{d, lv}
	if iface, ok := identities.Load(key); ok {
		return iface.(*surface.Interface), nil
	}
	iface, err := DomainInterface(d, surface.Identity(lv))
	if err != nil {
		return nil, err
	}
	kept, _ := identities.LoadOrStore(key, iface)
	return kept.(*surface.Interface), nil
}

// identities holds each domain's levels as interfaces, built once.
var identities sync.Map

type identityKey struct {
	d  *mcpdomain.Domain
	lv level.Level
}

// NewServer is an MCP server of d behind iface on a fresh store, and the
// store. The identity interface of a level (surface.Spec.Plain) is the
// level's own server; any other is the interface's tools in front of the
// level tools' own handlers: each call is decoded and handed to the level
// tool's handler, which validates and runs it as the level's server
// would. Options add faults (WithFaults).
func NewServer(d *mcpdomain.Domain, iface *surface.Interface, opts ...Option) (*server.MCPServer, mcpdomain.Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tools := d.Tools[iface.Spec.Level]
	if tools == nil {
		return nil, nil, fmt.Errorf("domain %s: unknown level %q: want one of L4, L3, L2, L1", d.Name, iface.Spec.Level)
	}
	st := d.NewStore()
	inj := newInjector(o)
	call := func(op *mcpdomain.Operation, args []byte) (any, error) { return st.Call(op.Name, args) }
	handler := func(t *mcpdomain.Tool) server.ToolHandlerFunc { return t.Handler(call) }
	if inj != nil {
		handler = func(t *mcpdomain.Tool) server.ToolHandlerFunc { return inj.handler(t, call) }
	}
	if iface.Spec.Plain() {
		if inj == nil {
			srv, err := d.NewServer(iface.Spec.Level, st)
			return srv, st, err
		}
		// The level's server as generated code makes it, each handler
		// running its calls through the injector. mcp-go checks a tool's
		// schema as it is added, the largest part of opening a session,
		// so the injected handlers are added once rather than over the
		// generated server's own (TestFaultedServerIsTheLevelsServer holds
		// the two alike).
		srv := levelServer(d)
		for _, t := range tools {
			srv.AddTool(t.MCP(), handler(t))
		}
		return srv, st, nil
	}
	listed := make([]mcp.Tool, len(tools))
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for i, t := range tools {
		listed[i] = t.MCP()
		handlers[t.Name] = handler(t)
	}
	level := CallerFunc(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h := handlers[req.Params.Name]
		if h == nil {
			return mcp.NewToolResultError(fmt.Sprintf("unknown tool %q", req.Params.Name)), nil
		}
		return h(ctx, req)
	})
	return InterfaceProxy(iface, serverName(d, iface), listed).NewServer(level), st, nil
}

// levelServer is an empty server announcing itself as the generated
// server of d's levels does (granite-<domain>, its description as the
// instructions, recovering from a handler's panic).
func levelServer(d *mcpdomain.Domain) *server.MCPServer {
	return server.NewMCPServer("granite-"+d.Name, "1.0.0", server.WithToolCapabilities(false), server.WithRecovery(), server.WithInstructions(d.Description))
}

// serverName names d's server behind iface: the domain and the level for
// a level as written, else the domain and the interface.
func serverName(d *mcpdomain.Domain, iface *surface.Interface) string {
	if iface.Spec.Plain() {
		return d.Name + " " + string(iface.Spec.Level)
	}
	return d.Name + " " + iface.Spec.Name
}

// Open starts a session on a fresh store of d behind iface (NewServer),
// through an in-process client. The session's Level is the interface's
// level. Options add faults (WithFaults), which the session's results
// name (Result.Fault).
func Open(ctx context.Context, d *mcpdomain.Domain, iface *surface.Interface, opts ...Option) (*Session, error) {
	srv, st, err := NewServer(d, iface, opts...)
	if err != nil {
		return nil, err
	}
	s, err := Connect(ctx, srv, serverName(d, iface))
	if err != nil {
		return nil, err
	}
	s.Domain, s.Level, s.Store = d, iface.Spec.Level, st
	return s, nil
}

// Front puts an interface in front of an open session of its level: a new
// session whose calls are decoded, then played on under, which it closes
// when it closes.
func Front(ctx context.Context, under *Session, iface *surface.Interface, name string) (*Session, error) {
	listed, err := under.Tools(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: list the level's tools: %w", name, err)
	}
	// The decoded call is a new request for under's server, which no HTTP
	// header of the interface's call describes.
	level := CallerFunc(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return under.CallTool(withoutHTTPHeaders{ctx}, req)
	})
	s, err := Connect(ctx, InterfaceProxy(iface, name, listed).NewServer(level), name)
	if err != nil {
		return nil, err
	}
	s.OnClose(func() { under.Close() })
	return s, nil
}

// withoutHTTPHeaders is a call's context with the HTTP request's headers
// hidden. mcp-go keeps them in the context and checks a modern request's
// Mcp-Name header against the tool it calls: a level's server reached in
// process would find the interface's tool name (tool_1) in the header and
// the level's in the body, and refuse the call.
type withoutHTTPHeaders struct{ context.Context }

// Value is the context's value for key, nil where that is the headers.
func (c withoutHTTPHeaders) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(http.Header); ok {
		return nil
	}
	return v
}

// CallTool forwards a call to the session's server, so that a session is
// a Caller another server can stand in front of.
func (s *Session) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.client.CallTool(ctx, req)
}

// DomainFactory makes, for each session, d's server behind iface on a
// fresh store (NewServer): what NewHandler serves a domain with.
func DomainFactory(d *mcpdomain.Domain, iface *surface.Interface, opts ...Option) Factory {
	return func() (*server.MCPServer, func(), error) {
		srv, _, err := NewServer(d, iface, opts...)
		return srv, func() {}, err
	}
}
