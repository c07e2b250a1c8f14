package regroup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// answers reads lines until each id has its answer, and returns them by
// id; notifications and other ids are skipped.
func (l *lines) answers(ids ...string) map[string]string {
	l.t.Helper()
	got := map[string]string{}
	for len(got) < len(ids) {
		line := l.next()
		for _, id := range ids {
			if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`+id+`,`) {
				got[id] = line
			}
		}
	}
	return got
}

// TestRelayNeverBlocksOnASourceThatDoesNotRead: a source that asks for
// sampling thousands of times without reading its input is refused
// without the relay waiting on it. Its call is answered, and so are the
// client's ping and tools/list and a call sent meanwhile; what the
// source does not read beyond the backlog is dropped, and stderr says so.
func TestRelayNeverBlocksOnASourceThatDoesNotRead(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		n       int
		dropped bool
	}{
		{"within the backlog", 2000, false},
		{"beyond the backlog", 20000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr syncBuffer
			l, _ := serveRelayTo(t, iface, level.L4, fakeCmd(t, "tools"), &stderr)
			// Sent from a goroutine: a blocked relay blocks its client's
			// writes too, and the answers' guard must still fire.
			go io.WriteString(l.in, strings.Join([]string{
				fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"v":%d}}}`, c.n),
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"v":2}}}`,
				`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			}, "\n")+"\n")
			got := l.answers("1", "2", "3", "4")
			if want := fmt.Sprintf("flooded %d", c.n); !strings.Contains(got["1"], want) {
				t.Errorf("flood: %s; want %q", got["1"], want)
			}
			if !strings.Contains(got["3"], `"result":{}`) || !strings.Contains(got["4"], `"name":"echo"`) {
				t.Errorf("ping: %s\ntools/list: %.200s", got["3"], got["4"])
			}
			said := strings.Contains(stderr.String(), "not reading its input")
			switch {
			case !c.dropped && !strings.Contains(got["2"], `"structuredContent":{"got":{"v":2}}`):
				t.Errorf("echo after the flood: %s", got["2"])
			case said != c.dropped:
				t.Errorf("stderr says %q; want a word on dropped answers: %v", stderr.String(), c.dropped)
			}
		})
	}
}

// TestRelayBoundsSourceLines: an answer over MaxSourceLine fails its call
// with an error naming the limit, whether its id comes first or last or
// the line never ends, and the relay reads on.
func TestRelayBoundsSourceLines(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool    string
		readsOn bool
	}{
		{"huge", true},
		{"endless", false},
	} {
		t.Run(c.tool, func(t *testing.T) {
			l, _ := serveRelay(t, iface, level.L4, fakeCmd(t, "tools"))
			got := l.call(`1`, c.tool, `{}`)
			want := `"id":1,"error":{"code":-32603,"message":"the source server's answer is a line over ` + strconv.Itoa(serve.MaxSourceLine) + ` bytes`
			if !strings.Contains(got, want) || len(got) > 1000 {
				t.Errorf("%s: %.300s; want %s", c.tool, got, want)
			}
			if c.readsOn {
				if got := l.call(`2`, "echo", `{"v":3}`); !strings.Contains(got, `"got":{"v":3}`) {
					t.Errorf("echo after %s: %s", c.tool, got)
				}
			}
		})
	}
}

// TestRelayCloseEndsWrappedSource: a source started through sh, with a
// child of its own that keeps the source's output open, is gone with
// that child once Close returns.
func TestRelayCloseEndsWrappedSource(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := fmt.Sprintf("sleep 300 & echo $! > %s; exec env GRANITE_FAKE_SOURCE=tools %s", pidFile, exe)
	relay, err := iface.StartRelay(context.Background(), level.L4, "sh -c '"+script+"'", "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		relay.Close()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !alive(pid) {
		relay.Close()
		t.Fatalf("child pid %q (%v): not running before Close", b, err)
	}
	relay.Close()
	waitGone(t, pid)
}

// waitGone fails the test unless a source's child pid is gone within
// 10 s of its Close.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("the source's child %d still runs 10 s after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid runs (a zombie no one reaped does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
