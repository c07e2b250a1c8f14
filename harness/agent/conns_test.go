package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
)

// The hostile agent of TestTrialConnCap runs as a process of its own, as
// an agent command does, so that its descriptors are not granite's:
// this test binary, run with these variables set, plays it.
const (
	hostileAddrEnv  = "GRANITE_TEST_HOSTILE_ADDR"
	hostileConnsEnv = "GRANITE_TEST_HOSTILE_CONNS"
)

// TestHostileAgentHelper is the hostile agent, when TestTrialConnCap
// starts this binary as one; otherwise it does nothing. It opens the
// connections it is told to, one after another, sends nothing on them,
// says on stdout how many reached the server (held, or reset by it), and
// holds them until its stdin closes.
func TestHostileAgentHelper(t *testing.T) {
	addr := os.Getenv(hostileAddrEnv)
	if addr == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(hostileConnsEnv))
	d := net.Dialer{Timeout: 5 * time.Second}
	var held []net.Conn
	reset := 0
	for range n {
		c, err := d.Dial("tcp", addr)
		switch {
		case err == nil:
			held = append(held, c)
		case errors.Is(err, syscall.ECONNRESET):
			reset++ // accepted and refused before the dial returned
		}
	}
	fmt.Printf("reached %d\n", len(held)+reset)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range held {
		c.Close()
	}
}

// TestTrialConnCap: an agent that opens thousands of idle connections to
// its trial's server gets MaxTrialConns of them, the rest refused; granite
// holds no more descriptors than that for it, and an honest agent on the
// trial server beside it initializes and lists its tools.
func TestTrialConnCap(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of connections")
	}
	n := 5000
	if limit, ok := openFileLimit(); ok && limit < uint64(n)+256 {
		n = int(limit) - 256 // the hostile process must be able to hold them
	}
	if n < 4*MaxTrialConns {
		t.Skipf("the open-file limit leaves room for %d connections; want at least %d", n, 4*MaxTrialConns)
	}
	start := func(id string) *served {
		s, err := serveTrial(simTrial(t, id), func(serve.Observed) {}, nil, results.DefaultMaxCalls, func() {})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.close)
		return s
	}
	hostile, honest := start("hostile"), start("honest")
	before := openFDs(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileAgentHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), hostileAddrEnv+"="+strings.TrimSuffix(strings.TrimPrefix(hostile.url, "http://"), "/mcp"),
		hostileConnsEnv+"="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var reached int
	if _, serr := fmt.Sscanf(line, "reached %d", &reached); err != nil || serr != nil {
		t.Fatalf("the hostile agent said %q (%v); want how many of its connections reached the server", line, err)
	}
	// Every connection that reached the server is accepted in turn; wait
	// until the server has dealt with them all, held or refused.
	for deadline := time.Now().Add(30 * time.Second); int64(hostile.conns.Open())+hostile.conns.Refused() < int64(reached); {
		if time.Now().After(deadline) {
			t.Fatalf("the hostile agent's server dealt with %d of its %d connections (%d open, %d refused)",
				int64(hostile.conns.Open())+hostile.conns.Refused(), reached, hostile.conns.Open(), hostile.conns.Refused())
		}
		time.Sleep(10 * time.Millisecond)
	}
	open, refused := hostile.conns.Open(), hostile.conns.Refused()
	t.Logf("the hostile agent opened %d connections: %d held by its server, %d refused", reached, open, refused)
	if reached < n/2 {
		t.Errorf("only %d of the hostile agent's %d connections reached its server; the attack did not happen", reached, n)
	}
	if open > MaxTrialConns {
		t.Errorf("the hostile agent's server holds %d connections; want at most %d", open, MaxTrialConns)
	}

	// While it holds them, the honest agent's session starts and lists
	// its tools.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	auth := map[string]string{"Authorization": "Bearer " + honest.token}
	status, hdr, body := mcpPost(t, client, honest.url, auth,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"honest","version":"1"}}}`)
	if status != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("honest initialize: %d %s; want 200 with serverInfo", status, body)
	}
	auth["Mcp-Session-Id"] = hdr.Get("Mcp-Session-Id")
	auth["Mcp-Protocol-Version"] = "2025-06-18"
	if status, _, body = mcpPost(t, client, honest.url, auth, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); status != http.StatusOK || !strings.Contains(body, `"set_lamp"`) {
		t.Fatalf("honest tools/list: %d %s; want 200 listing set_lamp", status, body)
	}

	// Granite's descriptors grew by the hostile server's connections, the
	// honest client's and server's, and the hostile process's pipes, not
	// by thousands.
	if before >= 0 {
		after := openFDs(t)
		t.Logf("granite's open descriptors: %d before the attack, %d during it", before, after)
		if after-before > MaxTrialConns+32 {
			t.Errorf("granite's open descriptors grew from %d to %d under the attack; want at most %d more", before, after, MaxTrialConns+32)
		}
	}
}

// mcpPost posts one JSON-RPC message to an MCP endpoint and returns the
// reply's status, headers and body.
func mcpPost(t *testing.T, c *http.Client, url string, headers map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// openFDs counts this process's open descriptors, -1 where /proc does
// not list them.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// TestFitDescriptors: parallel agent commands that could need more
// descriptors than granite may open are refused before the run, naming
// the parallel that fits; one agent at a time always runs.
func TestFitDescriptors(t *testing.T) {
	per := uint64(MaxTrialConns + trialFDs)
	entry := func(parallel int) []results.ModelEntry {
		return []results.ModelEntry{{Name: "claude", Backend: BackendCommand, Parallel: parallel}}
	}
	cases := []struct {
		name     string
		parallel int
		limit    uint64
		err      string
	}{
		{"a common limit", 256, 1 << 20, ""},
		{"just fits", 8, ownFDs + 8*per, ""},
		{"one too many", 9, ownFDs + 8*per, fmt.Sprintf("model claude: parallel 9 needs up to %d open files at once", ownFDs+9*per)},
		{"names what fits", 256, 10240, fmt.Sprintf("lower its parallel to %d, or raise the hard limit", (10240-ownFDs)/per)},
		{"room for one", 2, ownFDs + per, "run it with parallel 1, or raise the hard limit"},
		{"one at a time", 1, 64, ""},
	}
	for _, c := range cases {
		err := fitDescriptors(entry(c.parallel), c.limit)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: parallel %d under %d: %v; want %q", c.name, c.parallel, c.limit, err, c.err)
		}
	}
}
