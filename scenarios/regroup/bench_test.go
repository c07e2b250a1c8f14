package regroup_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

// BenchmarkRegroupedCallOverStdio measures what regrouping adds to a call:
// each iteration calls read_graph of the reference memory server once
// directly over stdio and once through granite serve --level L1 over
// stdio (which checks the call against the source schema and forwards it
// over its own stdio connection), and reports both medians and the
// median of the added time (the figure the issue bounds at 200 µs).
func BenchmarkRegroupedCallOverStdio(b *testing.B) {
	src := referenceServers[0].cmd(b, b.TempDir())
	bin := filepath.Join(b.TempDir(), "granite")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/granite").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	direct, _, err := toolsrc.Connect(ctx, src, "")
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	f := []string{"serve", "--level", "L1", "--mcp-cmd", src}
	grouped, err := client.NewStdioMCPClient(bin, os.Environ(), f...)
	if err != nil {
		b.Fatal(err)
	}
	defer grouped.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := grouped.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	d, g := mcp.CallToolRequest{}, mcp.CallToolRequest{}
	d.Params.Name, d.Params.Arguments = "read_graph", map[string]any{}
	g.Params.Name, g.Params.Arguments = "memory", map[string]any{"action": "read_graph"}
	timed := func(c *client.Client, req mcp.CallToolRequest) time.Duration {
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", req.Params.Name, err, res)
		}
		return time.Since(start)
	}
	for range 50 { // warm both paths (JIT, connections)
		timed(direct, d)
		timed(grouped, g)
	}
	var ds, gs, added []float64
	b.ResetTimer()
	for b.Loop() {
		dt, gt := timed(direct, d), timed(grouped, g)
		ds, gs = append(ds, us(dt)), append(gs, us(gt))
		added = append(added, us(gt-dt))
	}
	b.ReportMetric(median(ds), "direct-median-µs")
	b.ReportMetric(median(gs), "regrouped-median-µs")
	b.ReportMetric(median(added), "added-median-µs")
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
