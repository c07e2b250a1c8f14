package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoWriteFollowsALink plants links where a run writes — trials.jsonl,
// run.json and its lock — pointing at a file outside: the journal and the
// lock refuse to open and run.json replaces its link; the file outside is
// never written. RealDir tells a folder that is a link.
func TestNoWriteFollowsALink(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{TrialsFile, ManifestFile, LockFile} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := OpenJournal(filepath.Join(dir, TrialsFile)); err == nil {
		t.Error("the journal opened through a link")
	}
	if _, err := LockOut(dir); err == nil {
		t.Error("the lock opened through a link")
	}
	if err := WriteManifest(dir, &Manifest{Experiment: "x"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ManifestFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("run.json is not a plain file: %v", err)
	}
	linked := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(outside, linked); err != nil {
		t.Fatal(err)
	}
	if err := RealDir(linked); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a folder that is a link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("a write went through a link: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("%d files were written into the folder a link points at", len(entries)-1)
	}
}

// TestJournalRefusesWhatNoTrialWrote: records a hostile agent or a hand
// edit put in trials.jsonl — a TC of 5, a repetition of −2 — are refused
// with their line instead of trusted (advise --resume panicked on them); a
// wall time of 1e308, which the report takes as it is, is refused by
// CheckMeasures for advise, which sums it.
func TestJournalRefusesWhatNoTrialWrote(t *testing.T) {
	huge := Record{TrialID: "m/s/L4/r1", Repetition: 1, Metrics: &Metrics{TC: 1, WallS: 1e308}}
	if err := huge.CheckMeasures(); err == nil {
		t.Error("a wall time of 1e308 passed CheckMeasures")
	}
	for _, line := range []string{
		`{"trial_id":"m/s/L4/r1","repetition":1,"metrics":{"tc":5}}`,
		`{"trial_id":"m/s/L4/r1","repetition":-2,"metrics":{"tc":1}}`,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, TrialsFile)
		ok := `{"trial_id":"m/s/L4/r0","repetition":1,"metrics":{"tc":1}}`
		if err := os.WriteFile(path, []byte(ok+"\n"+line+"\n"+ok+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadJournal(path); err == nil || !strings.Contains(err.Error(), TrialsFile+":2:") {
			t.Errorf("%s: %v, want a refusal at line 2", line, err)
		}
	}
}
