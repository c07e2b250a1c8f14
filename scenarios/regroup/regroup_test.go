package regroup

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// files is a small file server: path means the same in read and write;
// mode is an enum in one and a number in the other; read has no
// readOnlyHint, so the verb of its name classes it.
func files() []toolsrc.Tool {
	return []toolsrc.Tool{
		{Name: "read_file", Description: "Read a file. Returns its text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to read"},"mode":{"type":"string","enum":["text","binary"]}},"required":["path"],"additionalProperties":false}`)},
		{Name: "write_file", Description: "Write a file.", Annotations: map[string]any{"readOnlyHint": false}, InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to write"},"content":{"type":"string"},"mode":{"type":"integer","minimum":0,"maximum":511}},"required":["path","content"],"additionalProperties":false}`)},
		{Name: "file_stats", Description: "Count files.", Annotations: map[string]any{"readOnlyHint": true}, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "set_config", Description: "Change a setting.", Annotations: map[string]any{"readOnlyHint": false}, InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"action":{"type":"string"}},"required":["key"]}`)},
	}
}

func build(t *testing.T, tools []toolsrc.Tool) *Grouping {
	t.Helper()
	iface, err := Build(tools, Derive("files", tools))
	if err != nil {
		t.Fatal(err)
	}
	return iface
}

// TestDerive: L2 by readOnlyHint, else the verb (and the description says
// so); L3 by category; L1 one tool.
func TestDerive(t *testing.T) {
	g := Derive("files", files())
	got := map[string][]string{}
	for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
		for _, grp := range g.Level(lv) {
			got[grp.Name] = grp.Tools
		}
	}
	want := map[string][]string{
		"files_status_query": {"read_file"}, "files_action_execution": {"write_file"}, "files_configuration": {"set_config"}, "files_analysis": {"file_stats"},
		"files_query": {"read_file", "file_stats"}, "files_control": {"write_file", "set_config"},
		"files": {"read_file", "write_file", "file_stats", "set_config"},
	}
	if len(got) != len(want) {
		t.Fatalf("groups %v; want %v", got, want)
	}
	for k, v := range want {
		if strings.Join(got[k], ",") != strings.Join(v, ",") {
			t.Errorf("%s: %v; want %v", k, got[k], v)
		}
	}
	if d := g.L2[0].Description; !strings.Contains(d, "read_file: no readOnlyHint, classed by the verb of the name") {
		t.Errorf("query description does not say read_file was classed by its verb: %q", d)
	}
	if d := g.L2[1].Description; strings.Contains(d, "verb") {
		t.Errorf("control description mentions a verb though every tool has a readOnlyHint: %q", d)
	}
}

// TestUnion: a shared argument with one shape is one argument; one with
// two shapes is split per tool and the description says how; each action
// documents what it requires; "action" of a source tool is renamed too.
func TestUnion(t *testing.T) {
	iface := build(t, files())
	l1 := iface.Find(level.L1, "files")
	var s struct {
		Properties map[string]struct {
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(l1.InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"action", "path", "content", "key", "read_file_mode", "write_file_mode", "set_config_action"} {
		if _, ok := s.Properties[name]; !ok {
			t.Errorf("L1 schema lacks %q: %s", name, l1.InputSchema)
		}
	}
	if _, ok := s.Properties["mode"]; ok {
		t.Errorf("conflicting mode kept under its own name: %s", l1.InputSchema)
	}
	if d := s.Properties["path"].Description; d != "File to read / File to write. (Used by: read_file, write_file.)" {
		t.Errorf("path description %q", d)
	}
	if d := s.Properties["action"].Description; !strings.Contains(d, "write_file: Write a file (requires path, content; optional write_file_mode).") {
		t.Errorf("action description %q", d)
	}
	for _, want := range []string{"read_file_mode is read_file's mode", "write_file_mode is write_file's mode", "set_config_action is set_config's action"} {
		if !strings.Contains(l1.Description, want) {
			t.Errorf("L1 description does not say %q: %q", want, l1.Description)
		}
	}
	if len(s.Required) != 1 || s.Required[0] != "action" {
		t.Errorf("required %v", s.Required)
	}
}

// TestPrepare: the action picks the tool, arguments get their source
// names, and what the source schema refuses is refused with its reasons.
func TestPrepare(t *testing.T) {
	iface := build(t, files())
	l1 := iface.Find(level.L1, "files")
	for _, c := range []struct{ args, tool, sent, refusal string }{
		{`{"action":"write_file","path":"a","content":"x","write_file_mode":420}`, "write_file", `{"content":"x","mode":420,"path":"a"}`, ""},
		{`{"action":"set_config","key":"k","set_config_action":"on"}`, "set_config", `{"action":"on","key":"k"}`, ""},
		{`{"path":"a"}`, "", "", `missing required argument "action": one of read_file, write_file, file_stats, set_config`},
		{`{"action":"delete_file"}`, "", "", `argument "action": "delete_file" is not one of read_file, write_file, file_stats, set_config`},
		{`{"action":"read_file","path":"a","content":"x"}`, "", "", `argument "content" is not used by action read_file (it is used by: write_file); leave it out or choose that action`},
		{`{"action":"write_file","path":"a","content":"x","write_file_mode":9999}`, "", "", "invalid arguments for write_file: at /mode: "},
		{`{"action":"write_file","path":"a"}`, "", "", "invalid arguments for write_file: at /: missing property 'content'"},
	} {
		tool, sent, err := l1.Prepare(json.RawMessage(c.args))
		if c.refusal != "" {
			r, ok := err.(*Refusal)
			if !ok || !strings.HasPrefix(r.Msg, c.refusal) {
				t.Errorf("%s: %v; want a refusal starting %q", c.args, err, c.refusal)
			}
			continue
		}
		if err != nil || tool != c.tool || string(sent) != c.sent {
			t.Errorf("%s: %s %s %v; want %s %s", c.args, tool, sent, err, c.tool, c.sent)
		}
	}
}

// TestMapCall: an expected call maps onto every level as spec gold does,
// and back.
func TestMapCall(t *testing.T) {
	iface := build(t, files())
	call := json.RawMessage(`{"path":"a","mode":"text"}`)
	for _, c := range []struct {
		lv         level.Level
		tool, args string
	}{
		{level.L4, "read_file", `{"path":"a","mode":"text"}`},
		{level.L3, "files_status_query", `{"path":"a","mode":"text"}`},
		{level.L2, "files_query", `{"action":"read_file","mode":"text","path":"a"}`},
		{level.L1, "files", `{"action":"read_file","path":"a","read_file_mode":"text"}`},
	} {
		tool, args, err := iface.MapCall(c.lv, "read_file", call)
		if err != nil || tool != c.tool || string(args) != c.args {
			t.Errorf("%s: %s %s %v; want %s %s", c.lv, tool, args, err, c.tool, c.args)
			continue
		}
		back, src, ok := iface.Unmap(c.lv, tool, args)
		if !ok || back != "read_file" || string(src) != `{"mode":"text","path":"a"}` && string(src) != string(call) {
			t.Errorf("%s: back to %s %s %v", c.lv, back, src, ok)
		}
		if !iface.Valid(c.lv, tool, args) {
			t.Errorf("%s: mapped call %s %s is not valid", c.lv, tool, args)
		}
	}
	if _, _, ok := iface.Unmap(level.L1, "files", json.RawMessage(`{"action":"nope"}`)); ok {
		t.Error("an unknown action unmapped")
	}
}

// TestGroupsFileErrors: a tool left out, a tool named twice and an unknown
// tool are each an error at their place in the file, all reported at once.
func TestGroupsFileErrors(t *testing.T) {
	yaml := `server: files
L3:
  - name: files_read
    tools: [read_file, file_stats]
  - name: files_write
    tools: [write_file, read_file, delete_file]
L2:
  - name: files_query
    tools: [read_file, file_stats, write_file, set_config]
  - name: files_query
    tools: [set_config]
`
	_, err := ParseGroups("groups.yaml", []byte(yaml), files())
	want := []string{
		`groups.yaml:3:3: $.L3: tool "set_config" is in no group at L3; expected every tool of the server in one group per level`,
		`groups.yaml:6:25: $.L3[1].tools[1]: found tool "read_file" in groups "files_read" and "files_write" at L3; expected each tool in one group per level`,
		`groups.yaml:6:36: $.L3[1].tools[2]: found tool "delete_file", which the server does not list; expected one of read_file, write_file, file_stats, set_config`,
		`groups.yaml:10:11: $.L2[1].name: found group "files_query" a second time at L2; expected unique tool names per level`,
		`groups.yaml:11:13: $.L2[1].tools[0]: found tool "set_config" in groups "files_query" and "files_query" at L2; expected each tool in one group per level`,
	}
	list, ok := err.(speclang.ErrorList)
	if !ok {
		t.Fatalf("got %v; want a positioned error list", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := ParseGroups("groups.yaml", []byte("server: files\nL3:\n  - name: x\n    tool: [read_file]\n"), files()); err == nil || !strings.Contains(err.Error(), "groups.yaml:") {
		t.Errorf("schema violation: %v; want a positioned error", err)
	}
}

// TestSuggestRoundTrip: the derivation written as a groups file reads back
// as the same groups, a header from a server's own words included (a line
// break and a terminal escape in its name stay inside the comment).
func TestSuggestRoundTrip(t *testing.T) {
	g := Derive("files", files())
	out, err := g.YAML([]string{"header", "server \"evil\nL3: [oops]\x1b[2J\""})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseGroups("suggested.yaml", out, files())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Errorf("round trip:\n%s\n%s", a, b)
	}
}

// BenchmarkPrepare is the regrouped tool's own work on a call (action,
// argument names, the source schema's check), apart from transport.
func BenchmarkPrepare(b *testing.B) {
	tools := files()
	iface, err := Build(tools, Derive("files", tools))
	if err != nil {
		b.Fatal(err)
	}
	l1 := iface.Find(level.L1, "files")
	args := json.RawMessage(`{"action":"write_file","path":"a","content":"x","write_file_mode":420}`)
	for b.Loop() {
		if _, _, err := l1.Prepare(args); err != nil {
			b.Fatal(err)
		}
	}
}
