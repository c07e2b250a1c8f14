package regroup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// TestGroupsRefuseHostileYAML: a groups file goes through the bounded
// YAML reader, from reading the file to expanding its aliases.
func TestGroupsRefuseHostileYAML(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("server: files\n"+strings.Repeat("# padding\n", 200_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, "self.yaml")
	if err := os.WriteFile(self, []byte("server: files\nL3: &g [{name: x, tools: *g}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{big, big + ":1:1: found more than 1 MiB of YAML; expected at most 1 MiB"},
		{self, self + ":2:26: $.L3[0].tools: found alias *g inside the value of its own anchor &g (2:5)"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		// Endless: read whole, it fills memory.
		cases = append(cases, struct{ path, want string }{"/dev/zero", "/dev/zero:1:1: found more than 1 MiB of YAML"})
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := LoadGroups(c.path, files()); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("%s: got %v\nwant %s...", c.path, err, c.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still loading after 20 s", c.path)
		}
	}
}

// hostileNames are tool names a server may list that YAML, a terminal or
// a schema URL reads otherwise than as a name: YAML's indicators and
// keywords, quotes, comments, line breaks, escapes and bidirectional
// overrides.
var hostileNames = []string{
	"read#file", "x #y", "#x", "a: b", "ends:", "- dash", "-", "* star", "&anchor", "!tag", "%pct", "@at", "`tick",
	"'single'", `"double"`, `back\slash`, "{brace", "[bracket", "|pipe", ">fold", "? key", ", comma", "<<",
	" lead", "trail ", "null", "Null", "~", "true", "TRUE", "no", "off", "123", "0x1F", "0o17", "0b101", "1_000", "1e3", "+1",
	"-1", ".5", ".inf", "-.inf", ".nan", "inf", "12:30:00", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
	"line\nbreak", "two\n\nblank", "end\n", "\nstart", "indented\n  more", "cr\rx", "crlf\r\nx", "tab\tx",
	"a\x1b[2Jb", "bell\x07", "nul\x00x", "del\x7f", "\u0085nel", "ls\u2028x", "\u202eevil", "iso\u2066x\u2069", "é ü 日本",
}

func hostileTools(names []string) []toolsrc.Tool {
	var out []toolsrc.Tool
	for _, n := range names {
		out = append(out, toolsrc.Tool{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return out
}

// TestSuggestedGroupsReadBack attacks the written groups file with tool
// names YAML reads otherwise (a comment, a mapping, a block, an escape):
// the file LoadGroups reads is the groups written, name for name, and
// none of a name's control or bidirectional characters is in it raw.
func TestSuggestedGroupsReadBack(t *testing.T) {
	for _, n := range hostileNames {
		tools := hostileTools([]string{n, "get_status"})
		g := Derive("hostile", tools)
		out, err := g.YAML([]string{"groups of " + n})
		if err != nil {
			t.Errorf("%q: %v", n, err)
			continue
		}
		if strings.ContainsFunc(strings.ReplaceAll(string(out), "\n", ""), oneline.Unsafe) {
			t.Errorf("%q: a control or bidirectional character is in the file raw:\n%q", n, out)
		}
		path := filepath.Join(t.TempDir(), "groups.yaml")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := LoadGroups(path, tools)
		if err != nil {
			t.Errorf("%q: the written file does not read back: %v\n%s", n, err, out)
			continue
		}
		a, _ := json.Marshal(g)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Errorf("%q: read back otherwise:\nwrote %s\nread  %s\n%s", n, a, b, out)
		}
	}
}

// TestGroupsMessagesEscapeNames: a groups file's problems name the
// server's tools with their line breaks and escapes escaped.
func TestGroupsMessagesEscapeNames(t *testing.T) {
	tools := hostileTools([]string{"a\x1b[2Jb", "c\rd", "e\nf"})
	_, err := ParseGroups("g.yaml", []byte("server: s\nL1:\n  - name: s\n    tools: [nope]\n"), tools)
	if err == nil {
		t.Fatal("a tool the server does not list was accepted")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\r") || strings.Count(msg, "\n") != strings.Count(msg, "g.yaml:")-1 {
		t.Errorf("a name's control characters are in the message raw:\n%q", msg)
	}
	for _, want := range []string{`expected one of a\x1b[2Jb, c\x0dd, e\x0af`, `tools "a\x1b[2Jb", "c\rd", "e\nf" are in no group`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the names are not escaped: want %s in\n%s", want, msg)
		}
	}
}

// TestHostileServerNames: a server's own name (initialize's serverInfo,
// a file name, --name) becomes names the groups schema takes, so that the
// suggested file of any server reads back.
func TestHostileServerNames(t *testing.T) {
	for _, n := range []string{"Ünïcode 日本語 server", "日本語", strings.Repeat("very_long_name ", 20), "\x1b[2J", "-lead", "a: b # c", "", "mcp-server"} {
		g := Derive(ServerName(n), files())
		out, err := g.YAML(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseGroups("groups.yaml", out, files()); err != nil {
			t.Errorf("%q (short name %q): the suggested file does not read back: %v", n, ServerName(n), err)
		}
	}
}

// TestExposableSkipsOneTool: a tool whose name an interface cannot carry
// is skipped with why, the rest kept; the groups of the rest keep the
// file's choices and drop a group left empty.
func TestExposableSkipsOneTool(t *testing.T) {
	tools := append(files(), hostileTools([]string{"read#file", "a\x1b[2Jb"})...)
	kept, skipped := Exposable(tools)
	if len(kept) != len(files()) || len(skipped) != 2 || skipped[0].Tool != "read#file" || skipped[1].Tool != "a\x1b[2Jb" {
		t.Fatalf("kept %d, skipped %+v", len(kept), skipped)
	}
	g := &Groups{Server: "files", L2: []Group{{Name: "odd", Tools: []string{"read#file", "a\x1b[2Jb"}}, {Name: "files_all", Tools: []string{"read_file", "write_file", "file_stats", "set_config"}}}}
	only := g.Only(kept)
	if len(only.L2) != 1 || only.L2[0].Name != "files_all" || only.L3 == nil || only.L1 == nil {
		t.Errorf("groups of the kept tools: %+v", only)
	}
	if _, err := Build(kept, only); err != nil {
		t.Error(err)
	}
}

// TestSuggestReasonsEscapeNames: the reason a model's grouping is sent
// back with, and at last refused with, names the tools escaped.
func TestSuggestReasonsEscapeNames(t *testing.T) {
	msg := onceEach("L3", [][]string{{"x\ny", "x\ny"}}, hostileTools([]string{"a\x1b[2Jb", "x\ny"}))
	if strings.ContainsAny(msg, "\x1b\n") || !strings.Contains(msg, `leaves out a\x1b[2Jb`) || !strings.Contains(msg, `names x\x0ay more than once`) {
		t.Errorf("%q", msg)
	}
}
