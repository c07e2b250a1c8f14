package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
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

// TestRegroupShowsAGroupOfOne: a group holding one tool serves that tool
// under the group's name, and the listing says which tool it is rather
// than printing the name with nothing after it.
func TestRegroupShowsAGroupOfOne(t *testing.T) {
	tools := "../../harness/testdata/server-memory.tools.json"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"regroup", "--tools", tools, "--suggest"}, &out, &errb); code != 0 {
		t.Fatalf("--suggest: exit %d: %s", code, errb.String())
	}
	one := strings.Replace(out.String(), "      - open_nodes\n  - name: memory_action_execution\n",
		"  - name: memory_open\n    category: status_query\n    description: Open nodes.\n    tools:\n      - open_nodes\n  - name: memory_action_execution\n", 1)
	one = strings.Replace(one, "      - search_nodes\n      - open_nodes\n  - name: memory_open", "      - search_nodes\n  - name: memory_open", 1)
	path := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(path, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"regroup", "--tools", tools, "--groups", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), one)
	}
	if !strings.Contains(out.String(), "memory_open") || !regexp.MustCompile(`memory_open +open_nodes, as it is`).MatchString(out.String()) {
		t.Errorf("the group of one does not say its tool:\n%s", out.String())
	}
}
