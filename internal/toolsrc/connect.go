package toolsrc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Option adjusts how Connect reaches a server.
type Option func(*options)

type options struct {
	headers map[string]string
	version string
}

// WithProtocolVersion asks for an MCP revision other than the newest in
// initialize: 2025-11-25, say, which has sessions where the newest has
// none, as a client that has shipped speaks it.
func WithProtocolVersion(v string) Option {
	return func(o *options) { o.version = v }
}

// WithHeaders sends headers with every request to a URL source (an
// Authorization: Bearer token, an API key); a command source ignores them,
// as stdio has no headers.
func WithHeaders(h map[string]string) Option {
	return func(o *options) {
		if len(h) == 0 {
			return
		}
		if o.headers == nil {
			o.headers = map[string]string{}
		}
		for k, v := range h {
			o.headers[k] = v
		}
	}
}

// ParseHeader reads a header as curl's -H writes it, "Name: value".
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("header %q: expected \"Name: value\", e.g. \"Authorization: Bearer $TOKEN\"", s)
	}
	return name, value, nil
}

// FromMCP lists the tools of a live MCP server: a command speaking stdio
// (cmd) or a streamable HTTP endpoint (url), through mcp-go's client.
func FromMCP(ctx context.Context, cmd, url string, opts ...Option) ([]Tool, error) {
	c, _, err := Connect(ctx, cmd, url, opts...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := ListTools(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := CheckDuplicates("tools/list of "+cmd+url, tools); err != nil {
		return nil, err
	}
	return tools, nil
}

// FromMCPAfresh lists the tools of a command as ConnectAfresh starts it,
// in an empty folder: a server that works only from granite's folder
// (python -m from a checkout) fails here, as it would at each start.
func FromMCPAfresh(ctx context.Context, cmd string) ([]Tool, error) {
	c, closeUp, err := ConnectAfresh(ctx, cmd, "")
	if err != nil {
		return nil, err
	}
	defer closeUp()
	tools, err := ListTools(ctx, c)
	if err != nil {
		return nil, err
	}
	return tools, CheckDuplicates("tools/list of "+cmd, tools)
}

// ConnectAfresh is Connect with a command started in an empty folder of
// its own, so that nothing it keeps (a memory file, its process's state)
// reaches its next start, as a trial needs; the func returned ends it and
// removes the folder.
func ConnectAfresh(ctx context.Context, cmd, url string) (*client.Client, func(), error) {
	dir, err := os.MkdirTemp("", "granite-trial-")
	if err != nil {
		return nil, nil, err
	}
	c, _, err := ConnectIn(ctx, cmd, url, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return c, func() { c.Close(); os.RemoveAll(dir) }, nil
}

// InitTimeout bounds how long a server may take to answer initialize, so
// that a command that never speaks MCP ("sleep 90", a shell waiting for
// input) fails with a message instead of blocking.
var InitTimeout = 30 * time.Second

// Connect starts an initialised mcp-go client of a live MCP server: a
// command speaking stdio (cmd, split into words like a shell would, see
// SplitCommand, but run without one) or a streamable HTTP endpoint (url).
// Initialization fails after InitTimeout. The caller closes it, which ends a command.
func Connect(ctx context.Context, cmd, url string, opts ...Option) (*client.Client, *mcp.InitializeResult, error) {
	return ConnectIn(ctx, cmd, url, "", opts...)
}

// groupStdio is mcp-go's stdio transport with the server in a process
// group of its own, killed whole on Close: through sh, npx or uvx the real
// server is a grandchild, which closing the pipe and signalling the
// direct child leave running.
type groupStdio struct {
	*transport.Stdio
	cmd *exec.Cmd
}

// Close closes the transport as mcp-go does, then kills what is left of
// the server's process group.
func (g *groupStdio) Close() error {
	err := g.Stdio.Close()
	if g.cmd != nil && g.cmd.Process != nil {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	}
	return err
}

// ConnectIn is Connect with a command started in dir (when not empty), so
// that files it writes by relative paths stay there.
func ConnectIn(ctx context.Context, cmd, url, dir string, opts ...Option) (*client.Client, *mcp.InitializeResult, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var c *client.Client
	var err error
	switch {
	case cmd != "":
		f, serr := SplitCommand(cmd)
		if serr != nil {
			return nil, nil, serr
		}
		// A program named by a relative path is where the user wrote it
		// from, granite's folder, not the folder the command starts in.
		if dir != "" && strings.ContainsRune(f[0], filepath.Separator) && !filepath.IsAbs(f[0]) {
			if abs, err := filepath.Abs(f[0]); err == nil {
				f[0] = abs
			}
		}
		g := &groupStdio{}
		inDir := transport.WithCommandFunc(func(ctx context.Context, name string, env, args []string) (*exec.Cmd, error) {
			x := exec.CommandContext(ctx, name, args...)
			// The allow-listed environment, PWD the folder it runs in, as
			// a relay's source gets.
			x.Dir, x.Env = dir, append(SourceEnv(dir), env...)
			x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			g.cmd = x
			return x, nil
		})
		g.Stdio = transport.NewStdioWithOptions(f[0], nil, f[1:], inDir)
		if err = g.Start(context.Background()); err == nil {
			c = client.NewClient(g)
		}
	case url != "":
		var hopts []transport.StreamableHTTPCOption
		if len(o.headers) > 0 {
			hopts = append(hopts, transport.WithHTTPHeaders(o.headers))
		}
		c, err = client.NewStreamableHttpClient(url, hopts...)
		if err == nil {
			err = c.Start(ctx)
		}
	default:
		return nil, nil, fmt.Errorf("no MCP server given")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = cmp.Or(o.version, mcp.LATEST_PROTOCOL_VERSION)
	init.Params.ClientInfo = mcp.Implementation{Name: "granite", Version: "1"}
	ictx, cancel := context.WithTimeout(ctx, InitTimeout)
	defer cancel()
	res, err := c.Initialize(ictx, init)
	if err != nil {
		c.Close()
		if errors.Is(ictx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("initialize: no answer within %s; is %s an MCP server?", InitTimeout, cmd+url)
		}
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	return c, res, nil
}

// The bounds on what one server's tools/list may cost: a hostile or
// broken server that pages forever, lists a million tools or never
// answers is refused with what it passed, instead of taking the memory or
// the time of whatever lists it (list, regroup, advise, run, serve). A
// page's own size is the transport's to bound.
var (
	ListTimeout  = 60 * time.Second
	MaxListPages = 100
	MaxListTools = 10000
	MaxListBytes = 32 << 20
)

// ListTools lists a connected server's tools, every page of them, within
// ListTimeout, MaxListPages, MaxListTools and MaxListBytes, and each
// tool's schemas within schemacheck's bounds (MaxSchemaDepth,
// MaxEnumValues, MaxSchemaBytes).
func ListTools(ctx context.Context, c *client.Client) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	var out []Tool
	req := mcp.ListToolsRequest{}
	seen := map[mcp.Cursor]bool{}
	size := 0
	for page := 1; ; page++ {
		res, err := c.ListToolsByPage(ctx, req) // one page: the pages are counted here
		switch {
		case err != nil && ctx.Err() == context.DeadlineExceeded:
			return nil, fmt.Errorf("tools/list: no whole answer within %s (%d pages, %d tools so far); the server is stuck or too slow", ListTimeout, page-1, len(out))
		case err != nil:
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range res.Tools {
			// Re-decode the tool as the wire carried it, keeping every
			// schema keyword (mcp-go's typed schema drops some at the top
			// level).
			b, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			size += len(b)
			var tool Tool
			if err := json.Unmarshal(b, &tool); err != nil {
				return nil, err
			}
			// One tool beyond the bounds refuses the list, as every
			// other problem of a listing does: a caller gets the
			// server's tools whole or not at all.
			if err := checkBounds(tool.InputSchema, tool.OutputSchema); err != nil {
				return nil, fmt.Errorf("tools/list: tool %q: %w", tool.Name, err)
			}
			out = append(out, tool)
		}
		switch {
		case len(out) > MaxListTools:
			return nil, fmt.Errorf("tools/list: over %d tools (%d by page %d); granite lists at most %d", MaxListTools, len(out), page, MaxListTools)
		case size > MaxListBytes:
			return nil, fmt.Errorf("tools/list: over %d bytes of tools by page %d; granite lists at most %d", MaxListBytes, page, MaxListBytes)
		case res.NextCursor == "":
			return out, nil
		case seen[res.NextCursor]:
			return nil, fmt.Errorf("tools/list: page %d gives cursor %q again; the server pages in a circle", page, mcpdomain.Clip(string(res.NextCursor)))
		case page == MaxListPages:
			return nil, fmt.Errorf("tools/list: more than %d pages (%d tools so far); granite reads at most %d", MaxListPages, len(out), MaxListPages)
		}
		seen[res.NextCursor] = true
		req.Params.Cursor = res.NextCursor
	}
}

// MCP returns the tool as mcp-go lists it, its schemas raw as published.
func (t *Tool) MCP() mcp.Tool {
	mt := mcp.Tool{Name: t.Name, Description: t.Description, RawInputSchema: t.InputSchema}
	if len(t.OutputSchema) > 0 {
		mt.RawOutputSchema = t.OutputSchema
	}
	if len(t.Annotations) > 0 {
		b, _ := json.Marshal(t.Annotations)
		_ = json.Unmarshal(b, &mt.Annotations)
	}
	return mt
}
