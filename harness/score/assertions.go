package score

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgranite/granite/harness/results"
)

// Assertion is one check a synthesized artifact states about its trial's
// calls: tool_call (the call must be made), not_call (it must not be
// made as given) or output_schema (the tool's results must fit its output
// schema), a blocker or a warning.
type Assertion struct {
	Kind, Tool string
	// Arguments are the asserted arguments; empty asserts any.
	Arguments json.RawMessage
	Severity  string
}

// AssertedTools is what judging assertions needs of the tools a trial was
// played with, by tool name: their argument rules and schema checks. The
// scorer takes them as an interface so that it links no tool source.
type AssertedTools interface {
	Args(tool string) ToolArgs
	// Valid reports whether arguments satisfy the tool's input schema.
	Valid(tool string, args json.RawMessage) bool
	// OutputFits checks a result against the tool's output schema.
	OutputFits(tool, result string) error
}

// Assertions scores a trial of a synthesized artifact by its assertions,
// by these definitions:
//
//   - tool_call passes when some call names the tool with the asserted
//     arguments (ToolArgs.Same: an argument at its schema default counts
//     as left out), or any arguments when none are asserted;
//   - not_call passes when no call does;
//   - output_schema passes when every successful call of the tool
//     returned JSON text fitting the tool's output schema;
//   - tc: 1 when the trial ended with an answer and no blocker failed
//     (failed warnings are counted, not fatal);
//   - f1, action_f1, arg_acc and redundant calls as in Score, against
//     gold's expected calls.
//
// The assertions judge calls: the record's, or at a coarse level the
// record's mapped back to the tools the assertions name; the call metrics
// read the record's own.
func Assertions(rec *results.Record, asserts []Assertion, calls []results.Call, tools AssertedTools, gold *Gold) (*results.Metrics, []results.Verdict) {
	m := &results.Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.StopReason == results.StopTimeout, ToolCalls: len(rec.Calls), GoldCalls: len(gold.Calls)}
	verdicts := make([]results.Verdict, len(asserts))
	for i, as := range asserts {
		v := judge(as, calls, tools)
		if !v.Passed {
			if as.Severity == "blocker" {
				m.BlockersFailed++
			} else {
				m.WarningsFailed++
			}
		}
		verdicts[i] = v
	}
	if rec.StopReason != results.StopAnswer {
		m.Why = append(m.Why, "the trial stopped without an answer ("+string(rec.StopReason)+")")
	}
	for _, v := range verdicts {
		if !v.Passed && v.Severity == "blocker" {
			m.Why = append(m.Why, fmt.Sprintf("blocker %s of %s fails: %s", v.Kind, v.Tool, v.Why))
		}
	}
	if rec.StopReason == results.StopAnswer && m.BlockersFailed == 0 {
		m.TC = 1
	}
	// An artifact has no store to compare byte for byte: its strict
	// verdict is its verdict.
	m.TCStrict = m.TC
	gold.ScoreCalls(m, rec.Calls)
	return m, verdicts
}

// judge is one assertion's verdict on calls.
func judge(as Assertion, calls []results.Call, tools AssertedTools) results.Verdict {
	v := results.Verdict{Kind: as.Kind, Tool: as.Tool, Severity: as.Severity}
	made, refused, sent := -1, -1, -1
	for k, c := range calls {
		if c.Tool != as.Tool || (len(as.Arguments) > 0 && !tools.Args(as.Tool).Same(c.Arguments, as.Arguments)) {
			continue
		}
		if sent < 0 {
			sent = k
		}
		// A call the server refused as a schema violation did not
		// happen, whatever its arguments looked like.
		if made < 0 && c.IsError && !tools.Valid(as.Tool, c.Arguments) {
			if refused < 0 {
				refused = k
			}
			continue
		}
		if made < 0 {
			made = k
		}
	}
	switch as.Kind {
	case "tool_call":
		v.Passed = made >= 0
		switch {
		case !v.Passed && refused >= 0:
			v.Why = fmt.Sprintf("call %d of %s was refused as a schema violation", refused+1, as.Tool)
		case !v.Passed:
			v.Why = "no call of " + as.Tool + " with the asserted arguments"
		}
	case "not_call":
		// Sending the call is the failure, refused or not.
		v.Passed = sent < 0
		if !v.Passed {
			v.Why = fmt.Sprintf("call %d made it", sent+1)
		}
	case "output_schema":
		v.Passed = true
		for k, c := range calls {
			if c.Tool != as.Tool || c.IsError {
				continue
			}
			if err := tools.OutputFits(as.Tool, c.Result); err != nil {
				v.Passed, v.Why = false, fmt.Sprintf("call %d: %v", k+1, err)
				break
			}
		}
	default:
		v.Why = "unknown assertion kind"
	}
	return v
}
