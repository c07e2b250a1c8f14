package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// BenchmarkVersusTypeScriptSDK drives a generated server and an equivalent
// server written with the TypeScript SDK (testdata/npm/sdk-server.mjs: the
// same tool, schema-validated with Ajv, answering the same row) with the
// same mcp-go client: (a) 2,000 sequential tools/call round trips over
// stdio, (b) 16 concurrent streamable HTTP sessions calling for 10 s. It
// reports both rates and their ratios. Run by make bench.
func BenchmarkVersusTypeScriptSDK(b *testing.B) {
	node, dir, granite := interopTools(b)
	d := gen.Domains[0]
	var tool *mcpdomain.Tool
	var op *mcpdomain.Operation
	for _, t := range d.Tools[level.L4] {
		if o := t.Operations[0]; o.Kind == "get" {
			tool, op = t, o
			break
		}
	}
	row, err := d.NewStore().Call(op.Name, []byte(op.Example))
	if err != nil {
		b.Fatal(err)
	}
	result, _ := json.Marshal(row)
	env := []string{"GRANITE_TOOL=" + tool.Name, "GRANITE_SCHEMA=" + tool.InputSchema, "GRANITE_RESULT=" + string(result)}
	script := filepath.Join(dir, "sdk-server.mjs")
	args := json.RawMessage(op.Example)

	var goStdio, tsStdio, goHTTP, tsHTTP float64
	goServe := []string{"serve", "--domain", d.Name, "--level", "L4"}
	for b.Loop() {
		// Stdio runs are short: take the better of two runs of each,
		// interleaved, so neither server always meets a warmer machine.
		goStdio = stdioRate(b, nil, granite, goServe, tool.Name, args)
		tsStdio = stdioRate(b, env, node, []string{script, "stdio"}, tool.Name, args)
		goStdio = max(goStdio, stdioRate(b, nil, granite, goServe, tool.Name, args))
		tsStdio = max(tsStdio, stdioRate(b, env, node, []string{script, "stdio"}, tool.Name, args))
		goHTTP = httpRate(b, serveHTTP(b, granite, d.Name, level.L4), tool.Name, args)
		tsHTTP = httpRate(b, sdkHTTP(b, node, script, env), tool.Name, args)
	}

	b.ReportMetric(goStdio, "go-stdio-calls/s")
	b.ReportMetric(tsStdio, "ts-stdio-calls/s")
	b.ReportMetric(goStdio/tsStdio, "stdio-ratio")
	b.ReportMetric(goHTTP, "go-http16-calls/s")
	b.ReportMetric(tsHTTP, "ts-http16-calls/s")
	b.ReportMetric(goHTTP/tsHTTP, "http16-ratio")
}

func initialize(b testing.TB, c *client.Client) {
	b.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "granite-bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
}

func callOnce(c *client.Client, tool string, args json.RawMessage) error {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return err
}

// stdioRate is 2,000 sequential calls over stdio, in calls per second.
func stdioRate(b testing.TB, env []string, cmd string, args []string, tool string, call json.RawMessage) float64 {
	c, err := client.NewStdioMCPClient(cmd, env, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	initialize(b, c)
	start := time.Now()
	for range 2000 {
		if err := callOnce(c, tool, call); err != nil {
			b.Fatal(err)
		}
	}
	return 2000 / time.Since(start).Seconds()
}

// httpRate is 16 concurrent sessions calling for 10 s, in calls per second.
func httpRate(b testing.TB, url, tool string, call json.RawMessage) float64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(10 * time.Second)
	errs := make(chan error, 16)
	for range 16 {
		c, _, err := toolsrc.Connect(context.Background(), "", url, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for time.Now().Before(deadline) {
				if err := callOnce(c, tool, call); err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(n.Load()) / time.Since(start).Seconds()
}

// sdkHTTP starts the TypeScript SDK server over HTTP on a free port.
func sdkHTTP(b testing.TB, node, script string, env []string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script, "http", fmt.Sprint(port))
	cmd.Env = append(cmd.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "listening on ") {
			go func() {
				for sc.Scan() {
				}
			}()
			return strings.TrimPrefix(sc.Text(), "listening on ")
		}
	}
	b.Fatal("the SDK server did not start")
	return ""
}
