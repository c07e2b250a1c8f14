package regroup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

// TestConnectCloseEndsWrappedSource: a live server started through sh
// (as npx and uvx start theirs), with a child of its own, is gone with
// that child once the client is closed. run --mcp-cmd, regroup and synth
// start their sources through toolsrc.Connect.
func TestConnectCloseEndsWrappedSource(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := fmt.Sprintf("sleep 300 & echo $! > %s; exec env GRANITE_FAKE_SOURCE=tools %s", pidFile, exe)
	c, _, err := toolsrc.Connect(context.Background(), "sh -c '"+script+"'", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !alive(pid) {
		c.Close()
		t.Fatalf("child pid %q (%v): not running before Close", b, err)
	}
	c.Close()
	waitGone(t, pid)
}
