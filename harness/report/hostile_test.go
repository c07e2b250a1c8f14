package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
)

// TestReportWritesNoLink attacks the report's writer with a folder someone
// else made: links planted where report.md and a table's CSV go, pointing
// at files outside, must be replaced, never written through; a report
// folder that is itself a link is refused; and an experiment name with a
// line break in run.json starts no line of report.md.
func TestReportWritesNoLink(t *testing.T) {
	dir := synthetic(t, func(i int) bool { return i < 200 })
	var man results.Manifest
	data, err := os.ReadFile(filepath.Join(dir, results.ManifestFile))
	if err != nil || json.Unmarshal(data, &man) != nil {
		t.Fatal(err)
	}
	man.Experiment = "synthetic\n# injected heading\n[click](http://attacker.invalid)"
	data, _ = json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, results.ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := Build(res, 0)

	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, name := range []string{"report.md", "trials.csv"} {
		if err := os.Symlink(victim, filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the report wrote through a link: the file outside now holds %.80q", b)
	}
	for _, name := range []string{"report.md", "trials.csv"} {
		if fi, err := os.Lstat(filepath.Join(out, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a plain file after the report: %v %v", name, fi.Mode(), err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "# injected") || strings.HasPrefix(line, "[click]") {
			t.Errorf("text from run.json starts a line of report.md: %q", line)
		}
	}

	linked := filepath.Join(t.TempDir(), "report")
	if err := os.Symlink(outside, linked); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write(linked); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a report folder that is a link: %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the report wrote %d files into the folder a link points at", len(entries)-1)
	}
}

// TestCSVEscapesNames: a name in a CSV cell (a model's from a config, a
// scenario's from a results folder) is escaped as in report.md, so that
// reading the file in a terminal moves no cursor; the file still parses
// to one record a row.
func TestCSVEscapesNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := writeCSV(path, []string{"model", "tc"}, [][]any{{"evil\x1b[2J\r\nmodel\u202e", 1.0}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.ContainsAny(string(data), "\x1b\r\u202e") || strings.Count(string(data), "\n") != 2 {
		t.Errorf("the CSV holds a name's control characters raw:\n%q", data)
	}
	if !strings.Contains(string(data), `evil\x1b[2J\x0d\x0amodel\u202e,1`) {
		t.Errorf("the name is not escaped:\n%q", data)
	}
}
