//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/specs"
)

// TestServeInterfaceStdio: over stdio, granite serve --interface answers
// tools/list with the interface's tools and a call by an opaque name with
// the level tool's answer.
func TestServeInterfaceStdio(t *testing.T) {
	d := gen.Domains[0]
	sp, err := surface.Parse("L4-opaque")
	must(t, err)
	iface, err := serve.DomainInterface(d, sp)
	must(t, err)
	spec, err := speclang.LoadAll(specs.FS)
	must(t, err)
	g := spec.Domain(d.Name).Scenarios[0].Gold[sp.Level][0]
	tool, args, err := iface.Encode(g.Tool, g.Args)
	must(t, err)
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	must(t, err)
	// A pipe as a shell gives one: descriptors not yet on Go's poller
	// (os.Pipe's are), which serve.Pollable puts there.
	var fds [2]int
	must(t, syscall.Pipe(fds[:]))
	in, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "stdin-writer")
	stdin := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = stdin; in.Close() }()
	go func() {
		defer w.Close()
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			string(call),
		} {
			if _, err := w.WriteString(line + "\n"); err != nil {
				return
			}
		}
	}()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--domain", d.Name, "--interface", sp.Name}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	replies := map[float64]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		must(t, json.Unmarshal([]byte(line), &m))
		replies[m.ID] = m.Result
	}
	var listed mcp.ListToolsResult
	must(t, json.Unmarshal(replies[2], &listed))
	if len(listed.Tools) != len(iface.Tools) || !slices.ContainsFunc(listed.Tools, func(x mcp.Tool) bool { return x.Name == "tool_1" }) ||
		slices.ContainsFunc(listed.Tools, func(x mcp.Tool) bool { return x.Name == g.Tool }) {
		t.Fatalf("tools/list %s; want %d tools named tool_1, …, none by its level name %s", replies[2], len(iface.Tools), g.Tool)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	must(t, json.Unmarshal(replies[3], &res))
	level, err := serve.Open(context.Background(), d, servetest.Level(t, d, sp.Level))
	must(t, err)
	defer level.Close()
	raw, err := json.Marshal(g.Args)
	must(t, err)
	direct, err := level.Call(context.Background(), g.Tool, raw)
	must(t, err)
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != direct.Text {
		t.Errorf("%s as %s: %s\nwant the level's answer %s", g.Tool, tool, replies[3], direct.Text)
	}
}
