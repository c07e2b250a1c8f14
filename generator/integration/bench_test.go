package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// BenchmarkToolsCallRoundTrip is one tools/call through the in-process
// mcp-go client and a generated server: JSON-RPC encode and decode, schema
// validation, the operation, and the result. Target: under 100 µs.
func BenchmarkToolsCallRoundTrip(b *testing.B) {
	d := tiny.Domain
	for _, c := range []struct {
		level level.Level
		tool  string
		args  string
	}{
		{level.L4, "get_lamp", `{"lamp_id":"LP01"}`},
		{level.L4, "list_lamps", `{"room":"hall"}`},
		{level.L1, "tiny", `{"action":"set_lamp","lamp_id":"LP01","level":40}`},
	} {
		b.Run(string(c.level)+"/"+c.tool, func(b *testing.B) {
			s := newSession(b, d, c.level)
			req := mcp.CallToolRequest{}
			req.Params.Name = c.tool
			req.Params.RawArguments = []byte(c.args)
			ctx := context.Background()
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				res, err := s.c.CallTool(ctx, req)
				took = append(took, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkStoreReset restores a domain's seed data. Target: under 50 µs.
func BenchmarkStoreReset(b *testing.B) {
	for _, d := range gen.Domains {
		b.Run(d.Name, func(b *testing.B) {
			st := d.NewStore()
			b.ReportAllocs()
			for b.Loop() {
				st.Reset()
			}
		})
	}
}
