package regroup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/npmtest"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// reference returns the command that starts a pinned reference server
// (installed with the interoperability tests' clients, see npmtest).
func reference(t testing.TB, server string, args ...string) string {
	t.Helper()
	dir := npmtest.Dir(t, "the reference server tests")
	nm := filepath.Join(dir, "node_modules")
	return strings.Join(append([]string{npmtest.Node(dir), filepath.Join(nm, "@modelcontextprotocol", "server-"+server, "dist/index.js")}, args...), " ")
}

// referenceServers are the servers the tests regroup, each with its
// command for a fresh state in dir: the memory server keeps its graph in
// a file there, the filesystem server serves dir.
var referenceServers = []struct {
	name string
	cmd  func(t testing.TB, dir string) string
}{
	{"memory", func(t testing.TB, dir string) string {
		return "env MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl") + " " + reference(t, "memory")
	}},
	{"filesystem", func(t testing.TB, dir string) string { return reference(t, "filesystem", dir) }},
	{"everything", func(t testing.TB, dir string) string { return reference(t, "everything", "stdio") }},
}

// counting counts the calls that reach the source.
type counting struct {
	c *client.Client
	n atomic.Int64
}

func (c *counting) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c.n.Add(1)
	return c.c.CallTool(ctx, req)
}

func open(t *testing.T, cmd, dir string) *client.Client {
	t.Helper()
	c, _, err := toolsrc.ConnectIn(context.Background(), cmd, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// inProcess serves a level over the source behind an in-process client.
func inProcess(t *testing.T, iface *regroup.Grouping, lv level.Level, up serve.Caller) *client.Client {
	t.Helper()
	srv, err := iface.NewServer("ref", lv, up)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clock matches the times of day the everything server puts in texts.
var clock = regexp.MustCompile(`\d{1,2}:\d{2}:\d{2}( [AP]M)?`)

// skipped are calls the tests leave out: they wait for seconds by design,
// or need a client that answers sampling or elicitation.
func skipped(tool string) bool {
	return strings.Contains(tool, "long-running") || strings.Contains(tool, "research")
}

// validCalls is one call per tool with arguments its schema accepts, from
// the offline synthesizer (the same values for every run).
func validCalls(t *testing.T, tools []toolsrc.Tool) map[string]json.RawMessage {
	t.Helper()
	arts, err := scenarios.Offline("ref", scenarios.Listed(tools), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, a := range arts {
		for _, c := range a.ExpectedCalls {
			for i := range tools {
				if tools[i].Name == c.Tool && out[c.Tool] == nil && tools[i].Valid(c.Arguments) {
					out[c.Tool] = c.Arguments
				}
			}
		}
	}
	return out
}

func call(t *testing.T, c *client.Client, tool string, args json.RawMessage) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "protocol error: " + err.Error()
	}
	// What the tool answered: its content, structured content and
	// isError (the envelope's _meta is each server's own).
	b, _ := json.Marshal(struct {
		Content           []mcp.Content `json:"content"`
		StructuredContent any           `json:"structuredContent,omitempty"`
		IsError           bool          `json:"isError,omitempty"`
	}{res.Content, res.StructuredContent, res.IsError})
	return string(b)
}

// ways are the two ways a regrouped server reaches its source: mcp-go's
// server over an mcp-go client (HTTP sessions, replay servers), and
// granite serve's stdio relay. Each returns a client of the regrouped
// server and the count of calls that reached the source.
var ways = []struct {
	name  string
	serve func(t *testing.T, iface *regroup.Grouping, lv level.Level, cmd, dir string) (*client.Client, func() int64)
}{
	{"in-process", func(t *testing.T, iface *regroup.Grouping, lv level.Level, cmd, dir string) (*client.Client, func() int64) {
		up := &counting{c: open(t, cmd, dir)}
		return inProcess(t, iface, lv, up), up.n.Load
	}},
	{"stdio relay", func(t *testing.T, iface *regroup.Grouping, lv level.Level, cmd, dir string) (*client.Client, func() int64) {
		relay, err := iface.StartRelay(context.Background(), lv, cmd, dir, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := iface.NewServer("ref", lv, relay)
		if err != nil {
			t.Fatal(err)
		}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go serve.Stdio(context.Background(), srv, inR, outW, relay)
		c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
		t.Cleanup(func() {
			c.Close()
			relay.Close()
		})
		ctx := context.Background()
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		return c, relay.Sent
	}},
}

// TestReferenceServersRegrouped: for each reference server, coarse level
// and way of serving it (see ways), every action of every coarse tool gives the result (text,
// structured content, isError) that calling the source tool directly
// gives on the same fresh state; bad arguments are refused with the
// source schema's reasons and never reach the source.
func TestReferenceServersRegrouped(t *testing.T) {
	for _, ref := range referenceServers {
		t.Run(ref.name, func(t *testing.T) {
			probe := open(t, ref.cmd(t, t.TempDir()), "")
			tools, err := toolsrc.ListTools(context.Background(), probe)
			if err != nil {
				t.Fatal(err)
			}
			iface, err := regroup.Build(tools, regroup.Derive(ref.name, tools))
			if err != nil {
				t.Fatal(err)
			}
			calls := validCalls(t, tools)
			for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
				for _, way := range ways {
					// Two fresh states made alike: one called directly, one
					// through the regrouped server, in the same order.
					dDir, rDir := t.TempDir(), t.TempDir()
					direct := open(t, ref.cmd(t, dDir), dDir)
					rg, reached := way.serve(t, iface, lv, ref.cmd(t, rDir), rDir)
					checked := 0
					for _, tl := range tools {
						args, ok := calls[tl.Name]
						if !ok || skipped(tl.Name) {
							continue
						}
						coarse, cargs, err := iface.MapCall(lv, tl.Name, args)
						if err != nil {
							t.Fatal(err)
						}
						want := clock.ReplaceAllString(strings.ReplaceAll(call(t, direct, tl.Name, args), dDir, "DIR"), "TIME")
						got := clock.ReplaceAllString(strings.ReplaceAll(call(t, rg, coarse, cargs), rDir, "DIR"), "TIME")
						if got != want {
							t.Errorf("%s %s %s action %s: regrouped\n%s\ndirect\n%s", way.name, lv, coarse, tl.Name, got, want)
						}
						checked++
					}
					if checked == 0 {
						t.Fatalf("%s %s: no call compared", way.name, lv)
					}
					// Bad arguments: a value of the wrong type for every
					// tool with a required argument.
					before := reached()
					refused := 0
					for _, tl := range tools {
						var s struct {
							Required []string `json:"required"`
						}
						_ = json.Unmarshal(tl.InputSchema, &s)
						if len(s.Required) == 0 {
							continue
						}
						coarse, cargs, _ := iface.MapCall(lv, tl.Name, json.RawMessage(`{}`))
						res := call(t, rg, coarse, cargs)
						var r struct {
							IsError bool
							Content []struct{ Text string }
						}
						_ = json.Unmarshal([]byte(res), &r)
						direct := tl.Validate(json.RawMessage(`{}`))
						if !r.IsError || len(r.Content) == 0 || direct == nil || r.Content[0].Text != fmt.Sprintf("invalid arguments for %s: %v", tl.Name, direct) {
							t.Errorf("%s %s %s without %v: %s; want the source schema's reasons %v", way.name, lv, tl.Name, s.Required, res, direct)
						}
						refused++
					}
					if n := reached() - before; n != 0 {
						t.Errorf("%s %s: %d refused calls reached the source", way.name, lv, n)
					}
					t.Logf("%s %s: %d actions match direct calls, %d bad calls refused before the source", way.name, lv, checked, refused)
				}
			}
		})
	}
}

// TestMemoryToolsSnapshot: the server-memory tools file the harness tests
// play artifacts of is what the pinned server lists.
func TestMemoryToolsSnapshot(t *testing.T) {
	c := open(t, referenceServers[0].cmd(t, t.TempDir()), "")
	tools, err := toolsrc.ListTools(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := toolsrc.LoadTools("../../harness/testdata/server-memory.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(tools)
	b, _ := json.Marshal(snap)
	if string(a) != string(b) {
		path := filepath.Join(t.TempDir(), "server-memory.tools.json")
		_ = toolsrc.WriteTools(path, tools)
		data, _ := os.ReadFile(path)
		t.Errorf("harness/testdata/server-memory.tools.json is not what the pinned server lists; replace it with:\n%s", data)
	}
}
