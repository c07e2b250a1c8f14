package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/specs"
)

// TestServeInterface: granite serve --interface serves a domain's level
// through the interface over HTTP: tools/list shows the interface's tools
// (opaque names tool_1, …), and a scenario's gold, encoded into the
// interface's calls, answers as the level's server answers the gold
// itself on a store of its own.
func TestServeInterface(t *testing.T) {
	d := gen.Domains[0]
	spec, err := speclang.LoadAll(specs.FS)
	must(t, err)
	scenario := spec.Domain(d.Name).Scenarios[0]
	for _, name := range []string{"L2-nested-opaque", "L3-grouped-camel", "L1-nested-prefixed"} {
		t.Run(name, func(t *testing.T) {
			sp, err := surface.Parse(name)
			must(t, err)
			iface, err := serve.DomainInterface(d, sp)
			must(t, err)
			ctx := t.Context()
			c := serveClient(t, []string{"--domain", d.Name, "--interface", name}, d.Name+" at interface "+name)
			listed, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			must(t, err)
			var got, want []string
			for _, tl := range listed.Tools {
				got = append(got, tl.Name)
			}
			for _, tl := range iface.Tools {
				want = append(want, tl.Name)
			}
			// tools/list lists tools by name, the interface in the level's
			// order.
			slices.Sort(want)
			if !slices.Equal(got, want) || len(got) == 0 {
				t.Fatalf("tools %v; want the interface's %v", got, want)
			}
			if sp.Names == "opaque" && got[0] != "tool_1" {
				t.Errorf("opaque names %v; want tool_1 first", got)
			}

			level, err := serve.Open(ctx, d, servetest.Level(t, d, sp.Level))
			must(t, err)
			defer level.Close()
			changed := 0
			for i, g := range scenario.Gold[sp.Level] {
				tool, args, err := iface.Encode(g.Tool, g.Args)
				must(t, err)
				if tool != g.Tool || !jsonEqual(t, args, g.Args) {
					changed++
				}
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = tool, args
				res, err := c.CallTool(ctx, req)
				must(t, err)
				raw, err := json.Marshal(g.Args)
				must(t, err)
				direct, err := level.Call(ctx, g.Tool, raw)
				must(t, err)
				if text := resultText(res); res.IsError || direct.IsError || text != direct.Text {
					t.Errorf("gold call %d, %s as %s: got (error %v) %s\nwant the level's (error %v) %s", i, g.Tool, tool, res.IsError, text, direct.IsError, direct.Text)
				}
			}
			if changed == 0 {
				t.Errorf("%s changes none of %s's gold calls; the check shows nothing", name, scenario.ID)
			}
		})
	}
}

// TestServeInterfaceFlags: --interface is checked before anything is
// served, each mistake with what to do.
func TestServeInterfaceFlags(t *testing.T) {
	first := gen.Domains[0].Name
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--domain", first, "--interface", "L3-fancy"}, `--interface: interface "L3-fancy": unknown transform "fancy"; expected presets among terse,`},
		{[]string{"--domain", first, "--interface", "L5-terse"}, `--interface: interface "L5-terse": unknown level "L5"`},
		{[]string{"--domain", first, "--interface", "L3-terse-nodesc"}, `nodesc sets descriptions twice (terse, then none)`},
		{[]string{"--domain", first, "--interface", "L3-terse", "--level", "L3"}, "--interface L3-terse and --level L3 exclude each other"},
		{[]string{"--scenario", "x-001", "--interface", "L3-terse"}, "--interface serves a generated domain: give it with --domain"},
		{[]string{"--domain", "kitchen", "--interface", "L3-terse"}, `unknown domain "kitchen"`},
		{[]string{"--domain", first, "--interface", "L3-terse", "--transport", "smoke"}, `unknown --transport "smoke"`},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"serve"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("granite serve %s: exit %d, stderr %s\nwant exit 2, stderr ∋ %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}

// serveClient runs granite serve with args over HTTP on a free loopback
// port until the test ends (when it must exit 0), and returns a client
// initialised on the URL it says it serves what at.
func serveClient(t *testing.T, args []string, what string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(append([]string{"serve"}, args...), "--transport", "http", "--addr", "127.0.0.1:0"), &out, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	})
	c, err := client.NewStreamableHttpClient(servedURL(t, &errb, what))
	must(t, err)
	t.Cleanup(func() { c.Close() })
	must(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	_, err = c.Initialize(ctx, init)
	must(t, err)
	return c
}

// servedURL waits for serve to say where it serves what, and returns the
// URL.
func servedURL(t *testing.T, errb *lockedBuffer, what string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "/mcp") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	line := errb.String()
	prefix := "granite: serving " + what + " on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("stderr %q; want %q then the URL", line, prefix)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// resultText is a tool result's text content.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// jsonEqual reports whether a and b are the same JSON.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	must(t, err)
	jb, err := json.Marshal(b)
	must(t, err)
	return bytes.Equal(ja, jb)
}

// TestServeFaults: granite serve --faults injects a setting's faults into
// a domain's server over HTTP (at a rate of 1 of transient errors, every
// call fails and applies nothing), and refuses a setting it cannot read.
func TestServeFaults(t *testing.T) {
	d := gen.Domains[0]
	ctx := t.Context()
	c := serveClient(t, []string{"--domain", d.Name, "--level", "L1", "--faults", "down:1:transient"}, d.Name+" at L1")
	op := d.Tools["L1"][0].Operations[0]
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = d.Tools["L1"][0].Name, json.RawMessage(`{"action":"`+op.Name+`",`+strings.TrimPrefix(op.Example, "{"))
	if op.Example == "{}" {
		req.Params.Arguments = json.RawMessage(`{"action":"` + op.Name + `"}`)
	}
	res, err := c.CallTool(ctx, req)
	must(t, err)
	if !res.IsError || resultText(res) != faults.TransientText {
		t.Errorf("%s at a rate of 1 of transient errors: (error %v) %s; want the transient error", op.Name, res.IsError, resultText(res))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--domain", d.Name, "--faults", "flaky:2"}, `--faults: fault setting "flaky:2": found rate "2"; expected a number from 0 to 1`},
		{[]string{"--domain", d.Name, "--faults", "flaky:0.2:cosmic"}, `found kind "cosmic"`},
		{[]string{"--mcp-url", "http://127.0.0.1:1/mcp", "--faults", "flaky:0.2:cosmic"}, `found kind "cosmic"`},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"serve"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("granite serve %s: exit %d, stderr %s\nwant exit 2, stderr ∋ %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}
