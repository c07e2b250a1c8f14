package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutArguments pins how a record keeps arguments: within the bounds
// as sent, else valid JSON within MaxArgumentsBytes that keeps equal
// values equal and different ones apart, and the same when cut again.
func TestCutArguments(t *testing.T) {
	long := strings.Repeat("é", CutBytes) // two bytes a character: cuts fall inside one
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cases := []struct {
		name  string
		args  string
		whole bool   // kept as sent
		key   string // a key the cut arguments keep
	}{
		{"small", `{"a":1,"b":"x"}`, true, "a"},
		{"many small values", `{"a":` + q(strings.Repeat("x", CutBytes-10)) + `,"b":` + q(strings.Repeat("x", CutBytes-10)) + `}`, true, "b"},
		{"one long string", `{"id":"LP02","note":` + q(long) + `}`, false, "id"},
		{"a long escaped string", `{"id":"LP02","note":` + q(strings.Repeat("<\n", CutBytes)) + `}`, false, "note"},
		{"a long array", `{"id":"LP02","xs":[` + strings.Repeat("1,", CutBytes) + `1]}`, false, "xs"},
		{"too many long values", `{"a":` + q(long) + `,"b":` + q(long) + `,"c":` + q(long) + `,"d":` + q(long) + `,"e":` + q(long) + `,"f":` + q(long) + `,"g":` + q(long) + `,"h":` + q(long) + `,"i":` + q(long) + `}`, false, CutKey},
		{"a long string, not an object", q(long), false, CutKey},
		{"long text that is not JSON", strings.Repeat("{", 2*CutBytes), false, CutKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CutArguments(json.RawMessage(c.args))
			if c.whole != (string(got) == c.args) {
				t.Fatalf("kept as sent: %v, want %v (%d bytes of %d)", !c.whole, c.whole, len(got), len(c.args))
			}
			if len(got) > MaxArgumentsBytes || !json.Valid(got) {
				t.Fatalf("%d bytes kept, valid JSON %v", len(got), json.Valid(got))
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(got, &obj); err != nil && !c.whole {
				t.Fatalf("cut arguments are not an object: %v", err)
			}
			if _, ok := obj[c.key]; !ok && json.Valid([]byte(c.args)) {
				t.Errorf("key %q lost: %s", c.key, got[:min(len(got), 200)])
			}
			for k, v := range obj {
				if len(v) > CutBytes {
					t.Errorf("value %q kept %d bytes", k, len(v))
				}
			}
			if again := CutArguments(got); !bytes.Equal(again, got) {
				t.Errorf("cut again changed it")
			}
		})
	}
	a := CutArguments(json.RawMessage(`{"id":` + q(long+"a") + `}`))
	b := CutArguments(json.RawMessage(`{"id":` + q(long+"b") + `}`))
	a2 := CutArguments(json.RawMessage(`{"id":` + q(long+"a") + `}`))
	if bytes.Equal(a, b) || !bytes.Equal(a, a2) {
		t.Errorf("values alike but for their end cut alike (%v), or equal ones apart (%v)", bytes.Equal(a, b), !bytes.Equal(a, a2))
	}
}

// TestJournalKeepsRecordsBounded: however much a subject sent, a journal
// line holds each call within the bounds, with the lengths that came.
func TestJournalKeepsRecordsBounded(t *testing.T) {
	const calls, size = 50, 1 << 20
	args := json.RawMessage(`{"id":"` + strings.Repeat("x", size) + `"}`)
	result := strings.Repeat("r", size)
	rec := &Record{TrialID: "m/s/L4/r1", Calls: []Call{}}
	for i := range calls {
		rec.Calls = append(rec.Calls, Call{Turn: i + 1, Tool: "t", Arguments: args, Result: result, IsError: true})
		rec.Messages = append(rec.Messages,
			Message{Role: "assistant", ToolCalls: []MessageCall{{Name: "t", Arguments: args}}},
			Message{Role: "tool", ToolName: "t", Content: result})
	}
	rec.FinalAnswer = "done"
	path := filepath.Join(t.TempDir(), TrialsFile)
	j, _, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(rec); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if max := calls * (2*CutBytes + 2*PreviewBytes + 512); len(data) > max {
		t.Errorf("journal line of %d bytes, want at most %d", len(data), max)
	}
	if len(rec.Calls[0].Arguments) != len(args) {
		t.Errorf("Append changed the caller's record")
	}
	recs, _, err := ReadJournal(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	c := recs[0].Calls[0]
	if c.ArgumentsBytes != len(args) || c.ResultBytes != size || !strings.Contains(c.Result, "cut by granite: 1048576 bytes") {
		t.Errorf("call kept arguments_bytes %d, result_bytes %d, result ending %q", c.ArgumentsBytes, c.ResultBytes, c.Result[len(c.Result)-60:])
	}
	if m := recs[0].Messages[1]; len(m.Content) > PreviewBytes {
		t.Errorf("a tool message kept %d bytes", len(m.Content))
	}
}
