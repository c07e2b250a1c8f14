package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/oneline"
)

// hostileNames are tool names as a red team lists them: a terminal
// escape, a carriage return, a line break, a bidirectional override, and
// names that YAML reads as a comment, a mapping or a sequence.
var hostileNames = []string{"clear\x1b[2Jscreen", "over\rwrite", "two\nlines", "\u202eevil", "read#file", "get: it", "- dash", "*star", `say "hi"`}

// hostileToolsFile writes the memory server's tools with the hostile
// names beside them, as a tools/list result.
func hostileToolsFile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../harness/testdata/server-memory.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	for _, n := range hostileNames {
		list.Tools = append(list.Tools, map[string]any{"name": n, "description": "Hostile " + n + "\x1b]0;title\x07.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}})
	}
	out, _ := json.Marshal(list)
	path := filepath.Join(t.TempDir(), "hostile.tools.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// noRawEscapes fails when output holds a character of a name that a
// terminal acts on (ESC, CR, a bidirectional override), or a line that
// starts with what came after a line break inside a name.
func noRawEscapes(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsFunc(strings.ReplaceAll(out, "\n", ""), oneline.Unsafe) {
		t.Errorf("%s: a control or bidirectional character of a name is printed raw:\n%q", what, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "lines") {
			t.Errorf("%s: a line break in a name starts a line:\n%s", what, out)
		}
	}
}

// TestHostileToolNamesRegroup attacks granite regroup with the hostile
// names: every tool is kept ('#' included: the MCP specification only
// recommends a name's characters), each printed escaped on its line, and
// the --suggest groups file reads back through --groups to the same
// levels.
func TestHostileToolNamesRegroup(t *testing.T) {
	tools := hostileToolsFile(t)
	ctx := context.Background()
	var derived, errb bytes.Buffer
	if code := run(ctx, []string{"regroup", "--tools", tools}, &derived, &errb); code != 0 {
		t.Fatalf("regroup: exit %d: %s", code, errb.String())
	}
	noRawEscapes(t, "regroup", derived.String())
	for _, want := range []string{"L4 (18 tools)", `  clear\x1b[2Jscreen` + "\n", `  over\x0dwrite` + "\n", `  two\x0alines` + "\n", `  \u202eevil` + "\n", "  read#file\n"} {
		if !strings.Contains(derived.String(), want) {
			t.Errorf("regroup output lacks %q:\n%s", want, derived.String())
		}
	}
	var suggested bytes.Buffer
	if code := run(ctx, []string{"regroup", "--tools", tools, "--suggest"}, &suggested, &errb); code != 0 {
		t.Fatalf("--suggest: exit %d: %s", code, errb.String())
	}
	// A name of two lines is a literal block in YAML, which reads back as
	// it is; nothing else of a name is raw.
	if strings.ContainsFunc(strings.ReplaceAll(suggested.String(), "\n", ""), oneline.Unsafe) {
		t.Errorf("--suggest: a control or bidirectional character of a name is written raw:\n%q", suggested.String())
	}
	path := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(path, suggested.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var fromFile bytes.Buffer
	if code := run(ctx, []string{"regroup", "--tools", tools, "--groups", path}, &fromFile, &errb); code != 0 || fromFile.String() != derived.String() {
		t.Errorf("--groups of the suggested file: exit %d: %s\nderived\n%s\nfrom the file\n%s\nthe file\n%s", code, errb.String(), derived.String(), fromFile.String(), suggested.String())
	}
}

// TestHostileToolNamesList attacks granite list --interfaces: the tools
// whose names an interface cannot carry are skipped, each with a warning
// that names it escaped, and the rest of the server is listed, with a
// groups file that names the skipped tools too.
func TestHostileToolNamesList(t *testing.T) {
	tools := hostileToolsFile(t)
	ctx := context.Background()
	var suggested, errb bytes.Buffer
	if code := run(ctx, []string{"regroup", "--tools", tools, "--suggest"}, &suggested, &errb); code != 0 {
		t.Fatalf("--suggest: exit %d: %s", code, errb.String())
	}
	path := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(path, suggested.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{}, {"--groups", path}} {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"list", "--interfaces", "--tools", tools}, args...), &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "interfaces of server hostile") {
			t.Fatalf("list %v: exit %d\n%s\n%s", args, code, out.String(), errb.String())
		}
		noRawEscapes(t, "list stderr", errb.String())
		noRawEscapes(t, "list stdout", out.String())
		for _, n := range hostileNames {
			if want := "granite list: warning: skipping tool " + quote(n) + ": "; !strings.Contains(errb.String(), want) {
				t.Errorf("list %v: no warning %q:\n%s", args, want, errb.String())
			}
		}
		if n := strings.Count(errb.String(), "\n"); n != len(hostileNames) {
			t.Errorf("list %v: %d lines on stderr for %d skipped tools:\n%s", args, n, len(hostileNames), errb.String())
		}
	}
}

// TestHostileToolNamesAdvise: granite advise skips the same tools and
// races the rest; with a groups file naming them, the run reads the
// groups without them.
func TestHostileToolNamesAdvise(t *testing.T) {
	tools := hostileToolsFile(t)
	ctx := context.Background()
	var suggested, errb bytes.Buffer
	if code := run(ctx, []string{"regroup", "--tools", tools, "--suggest"}, &suggested, &errb); code != 0 {
		t.Fatalf("--suggest: exit %d: %s", code, errb.String())
	}
	groups := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(groups, suggested.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"advise", "--out", out, "--tools", tools, "--groups", groups, "--models", "builtin:sim", "--candidates", "levels", "--max-rounds", "5"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("advise: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	noRawEscapes(t, "advise stderr", stderr.String())
	if !strings.Contains(stderr.String(), "granite advise: warning: skipping tool "+quote("clear\x1b[2Jscreen")) {
		t.Errorf("no warning for the skipped tool:\n%s", stderr.String())
	}
	written, err := os.ReadFile(filepath.Join(out, "groups.yaml"))
	if err != nil || strings.Contains(string(written), `- "read#file"`) || !strings.Contains(string(written), "- open_nodes") {
		t.Errorf("the groups the run read: %v\n%s", err, written)
	}
}

// TestErrorsEscapeWhatTheyQuote: an error that quotes a file's text
// reaches the terminal escaped: a tool listed twice under a name holding
// a terminal escape and a line break, and a JSON-RPC method name holding
// bidirectional characters raw, as a tools file can.
func TestErrorsEscapeWhatTheyQuote(t *testing.T) {
	dup := `{"tools": [{"name": "a\u001b[2J\nb", "inputSchema": {"type": "object"}}, {"name": "a\u001b[2J\nb", "inputSchema": {"type": "object"}}]}`
	rpc := "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\u202eevil\u2066\"}"
	for _, c := range []struct{ file, want string }{
		{dup, `tool 1 ("a\x1b[2J\nb"): found the name again (first at 1:12)`},
		{rpc, `found a JSON-RPC request (method "\u202eevil\u2066")`},
	} {
		path := filepath.Join(t.TempDir(), "tools.json")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"regroup", "list"} {
			var out, errb bytes.Buffer
			args := []string{cmd, "--tools", path}
			if cmd == "list" {
				args = append(args, "--interfaces")
			}
			if code := run(context.Background(), args, &out, &errb); code != 1 {
				t.Fatalf("%s: exit %d: %s", cmd, code, errb.String())
			}
			noRawEscapes(t, cmd, errb.String())
			if !strings.Contains(errb.String(), c.want) || strings.Count(errb.String(), "\n") > 2 {
				t.Errorf("%s: want one error saying %s:\n%s", cmd, c.want, errb.String())
			}
		}
	}
}

// quote is how a warning quotes a name.
func quote(s string) string { return fmt.Sprintf("%q", s) }
