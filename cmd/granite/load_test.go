package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// TestServeHTTPUnderLoad is opt-in (GRANITE_LOAD=1): it runs granite serve
// as its own process, drives 64 concurrent sessions on loopback for 10 s
// (each call bounded by count and time), and checks that no request errs
// and that the server's resident memory stays under 100 MB.
//
//	GRANITE_LOAD=1 go test -count=1 -run TestServeHTTPUnderLoad -v ./cmd/granite/
func TestServeHTTPUnderLoad(t *testing.T) {
	if os.Getenv("GRANITE_LOAD") == "" {
		t.Skip("set GRANITE_LOAD=1 to run the 10 s load figure")
	}
	const (
		sessions = 64
		duration = 10 * time.Second
		maxCalls = 50000 // per session, whatever the speed
		maxRSSKB = 100 << 10
	)
	bin := filepath.Join(t.TempDir(), "granite")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	d := gen.Domains[0]
	ctx, cancel := context.WithTimeout(context.Background(), duration+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--domain", d.Name, "--transport", "http", "--addr", "127.0.0.1:0", "--max-sessions", strconv.Itoa(sessions))
	stderr, _ := cmd.StderrPipe()
	must(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	must(t, err)
	_, url, _ := strings.Cut(strings.TrimSpace(line), " on ")

	// One read and one repeatable write, with their example arguments.
	var read, write *mcpdomain.Operation
	for _, o := range d.Operations {
		switch {
		case read == nil && o.Kind == opkind.Get:
			read = o
		case write == nil && o.Kind == opkind.Update:
			write = o
		}
	}
	if read == nil || write == nil {
		t.Fatalf("domain %s has no get or update operation", d.Name)
	}

	var calls, failures atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		failures.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	stopRSS := watchRSS(cmd.Process.Pid)
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := toolsrc.Connect(ctx, "", url, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
			if err != nil {
				fail(err)
				return
			}
			defer c.Close()
			for i := 0; i < maxCalls && time.Now().Before(stop); i++ {
				op := read
				if i%2 == 1 {
					op = write
				}
				req := mcp.CallToolRequest{}
				req.Params.Name = op.Name
				req.Params.Arguments = json.RawMessage(op.Example)
				callCtx, done := context.WithTimeout(ctx, 5*time.Second)
				res, err := c.CallTool(callCtx, req)
				done()
				calls.Add(1)
				switch {
				case err != nil:
					fail(err)
				case res.IsError:
					fail(fmt.Errorf("%s: %v", op.Name, res.Content))
				}
			}
		}()
	}
	wg.Wait()
	peakKB := stopRSS()
	t.Logf("%d sessions, %s: %d calls (%.0f/s), %d failed; server peak RSS %.1f MB (now %.1f MB)",
		sessions, duration, calls.Load(), float64(calls.Load())/duration.Seconds(), failures.Load(),
		float64(peakKB)/1024, float64(rssKB(cmd.Process.Pid))/1024)
	if n := failures.Load(); n > 0 {
		t.Errorf("%d calls failed, first: %v", n, firstErr.Load())
	}
	if peakKB >= maxRSSKB {
		t.Errorf("peak RSS %d kB, want under %d kB", peakKB, maxRSSKB)
	}
}

// watchRSS samples a process's resident memory until stopped; stop returns
// the peak in kB.
func watchRSS(pid int) func() int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb := rssKB(pid); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// rssKB reads VmRSS from /proc; 0 where there is none.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}
