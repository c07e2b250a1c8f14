package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// TestReadArtifactsRefusesBadLines: every broken line is reported at
// once, at its line and field, and nothing is returned.
func TestReadArtifactsRefusesBadLines(t *testing.T) {
	good := `{"version":1,"id":"a1","source":"tools:x.json","tier":"simple","turns":[{"prompt":"p"}],"expected_calls":[{"tool":"t","arguments":{},"reason":"r"}],"mock_outputs":[{"call":0,"output":"{}","is_error":false,"grounding":"low"}],"assertions":[{"kind":"tool_call","tool":"t","severity":"blocker","note":"n"}],"provenance":{"backend":"offline","stage":"scenario","retries":0}}`
	lines := []string{
		good,
		"not json",
		strings.Replace(good, `"tier":"simple"`, `"tier":"hard"`, 1),
		good, // id a1 again
		strings.Replace(strings.Replace(good, `"id":"a1"`, `"id":"a5"`, 1), `"call":0`, `"call":3`, 1),
		strings.Replace(strings.Replace(good, `"id":"a1"`, `"id":"a6"`, 1), `"turns":[{"prompt":"p"}]`, `"turns":[{"prompt":"p","calls":[1]}]`, 1),
		"",
	}
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	arts, err := ReadArtifacts(path)
	if err == nil || arts != nil {
		t.Fatalf("read %d artifacts, err %v", len(arts), err)
	}
	for _, want := range []string{
		path + ":2:1: found a line that is not a JSON object",
		path + ":3:",
		"$.tier: found \"hard\"",
		path + ":4:",
		`found id "a1" again (first on line 1)`,
		path + ":5:",
		"$.mock_outputs[0].call: found call 3; expected the index of one of the 1 expected calls",
		path + ":6:",
		"$.turns: found turn 0 listing call 1 where call 0 comes next",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err := os.WriteFile(path, []byte("\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadArtifacts(path); err == nil || !strings.Contains(err.Error(), "no artifacts") {
		t.Errorf("empty file: %v", err)
	}
}

// TestWriteArtifactsFile: the artifacts land in a file whose folders are
// created, with their tools beside it, and read back as written.
func TestWriteArtifactsFile(t *testing.T) {
	d := gen.Domains[0]
	tools := FromDomain(d, level.L4)
	arts, err := Offline("domain:"+d.Name+"/L4", tools, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "new", "folder", "a.jsonl")
	if err := WriteArtifactsFile(path, tools, arts); err != nil {
		t.Fatal(err)
	}
	back, err := ReadArtifacts(path)
	if err != nil || len(back) != len(arts) {
		t.Fatalf("read back %d artifacts, %v; want %d", len(back), err, len(arts))
	}
	listed, err := toolsrc.LoadTools(ToolsFile(path))
	if err != nil || len(listed) != len(tools) {
		t.Fatalf("tools beside: %d, %v; want %d", len(listed), err, len(tools))
	}
}
