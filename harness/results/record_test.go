package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTypedClassesKeepTheirJSON pins the JSON of the typed error classes
// and stop reasons: trials.jsonl spells them as plain strings.
func TestTypedClassesKeepTheirJSON(t *testing.T) {
	rec := Record{TrialID: "m/s/L4/r1", StopReason: StopMaxTurns, ErrorClass: ErrSchema,
		Calls: []Call{{Tool: "t", Arguments: json.RawMessage(`{}`), IsError: true, ErrorClass: ErrUnknown}}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		StopReason string `json:"stop_reason"`
		ErrorClass string `json:"error_class"`
		Calls      []struct {
			ErrorClass string `json:"error_class"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.StopReason != "max_turns" || got.ErrorClass != "schema_violation" || got.Calls[0].ErrorClass != "unknown_tool" {
		t.Errorf("JSON %s", b)
	}
}

// TestClassifyKeepsTheFirstFailure: a trial's class is its first failure
// in time.
func TestClassifyKeepsTheFirstFailure(t *testing.T) {
	var r Record
	r.Classify("")
	r.Classify(ErrTool)
	r.Classify(ErrTimeout)
	if r.ErrorClass != ErrTool {
		t.Errorf("class %q, want %q", r.ErrorClass, ErrTool)
	}
}

// TestReadJournalFrom follows a growing journal: a read from where the
// last one ended gives only the new records, a repeated trial id once.
func TestReadJournalFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), TrialsFile)
	line := func(id string) string { return `{"trial_id":"` + id + `"}` + "\n" }
	if err := os.WriteFile(path, []byte(line("a")+line("b")), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	first, n, err := ReadJournalFrom(path, 0, seen)
	if err != nil || len(first) != 2 {
		t.Fatalf("%d records, %v", len(first), err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line("c") + line("a") + `{"trial_id":"d"`)
	f.Close()
	next, m, err := ReadJournalFrom(path, n, seen)
	if err != nil || len(next) != 1 || next[0].TrialID != "c" {
		t.Fatalf("after %d bytes: %+v, %v; want only c (a again, and a partial last line, left out)", n, next, err)
	}
	all, total, _ := ReadJournal(path)
	if m != total || len(all) != 3 {
		t.Errorf("followed to byte %d, a whole read spans %d with %d records", m, total, len(all))
	}
}
