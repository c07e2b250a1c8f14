package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegroupCLI: --suggest writes a groups file that --groups reads back
// to the same levels, and a broken one is reported at its position.
func TestRegroupCLI(t *testing.T) {
	tools := "../../harness/testdata/server-memory.tools.json"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"regroup", "--tools", tools, "--suggest"}, &out, &errb); code != 0 {
		t.Fatalf("--suggest: exit %d: %s", code, errb.String())
	}
	path := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var derived, fromFile bytes.Buffer
	if code := run(context.Background(), []string{"regroup", "--tools", tools}, &derived, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if code := run(context.Background(), []string{"regroup", "--tools", tools, "--groups", path}, &fromFile, &errb); code != 0 || derived.String() != fromFile.String() || !strings.Contains(derived.String(), "action: read_graph, search_nodes, open_nodes") {
		t.Errorf("exit %d; derived\n%s\nfrom the suggested file\n%s", code, derived.String(), fromFile.String())
	}
	broken := strings.Replace(out.String(), "      - open_nodes\n", "      - open_nodez\n", 1)
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	code := run(context.Background(), []string{"regroup", "--tools", tools, "--groups", path}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), path+":") || !strings.Contains(errb.String(), `found tool "open_nodez", which the server does not list`) || !strings.Contains(errb.String(), `tool "open_nodes" is in no group at L3`) {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
