package results

import (
	"encoding/json"
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
