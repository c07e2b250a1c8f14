package results

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Explanation is the detail behind a trial's verdict, written when the
// trial is scored so that granite view and a jq user read the same
// reasons; nothing reading a record scores it again. Metrics.Why says the
// reasons in words; these keys say them as data.
type Explanation struct {
	// FailedConditions are the scenario's state conditions the final
	// store does not meet, in words.
	FailedConditions []string `json:"failed_conditions,omitempty"`
	// MissingFacts are the answer facts the final answer does not state.
	MissingFacts []Fact `json:"missing_facts,omitempty"`
	// FalseClaims are the claims the final answer makes about a known
	// subject that the store contradicts, in words (see score.Score).
	FalseClaims []string `json:"false_claims,omitempty"`
	// Collateral are the changes to the store the task did not ask for,
	// in words (see score.Score).
	Collateral []string `json:"collateral,omitempty"`
	// Offline lists the rows a fault took off the network for the rest
	// of the trial, each with the state conditions and answer facts on it
	// that the answer saying it was not done replaced (see score.Score).
	Offline []OfflineRow `json:"offline,omitempty"`
	// Unheld are what the final answer says is done, or holds, that the
	// final store does not hold, in words: the false_claims metric.
	Unheld []string `json:"unheld,omitempty"`
	// StoreDiff compares the final store with the nearest right final
	// store, when it equals none of them.
	StoreDiff *StoreDiff `json:"store_diff,omitempty"`
	// Alignment pairs each gold call with the calls made, argument by
	// argument: the pairing behind arg_acc and the one behind
	// action_arg_acc.
	Alignment []GoldMatch `json:"alignment,omitempty"`
}

// OfflineRow is a row a fault took offline: the conditions and facts on
// it that TC does not ask for, and whether the answer says what was not
// done on it, as it must.
type OfflineRow struct {
	Row      string   `json:"row"`
	Replaced []string `json:"replaced"`
	Named    bool     `json:"named"`
}

// Fact is an answer fact: the value the answer must state and what it is.
type Fact struct {
	Value any    `json:"value"`
	What  string `json:"what"`
	// About names the fact's subject (a row's field, a group, a set's
	// member, a count); Said is what the answer said instead.
	About string `json:"about,omitempty"`
	Said  string `json:"said,omitempty"`
}

// StoreDiff is how a final store differs from a right one.
type StoreDiff struct {
	// Right is which of the scenario's right final stores is nearest
	// (fewest rows and fields apart), counting from 0, of Rights.
	Right  int       `json:"right"`
	Rights int       `json:"rights"`
	Rows   []RowDiff `json:"rows"`
}

// Lines says the difference in words, a line per row, at most max lines
// and then how many rows more.
func (d *StoreDiff) Lines(max int) []string {
	var out []string
	for i, r := range d.Rows {
		if i == max {
			out = append(out, fmt.Sprintf("and %d rows more", len(d.Rows)-max))
			break
		}
		switch r.Change {
		case RowMissing:
			out = append(out, fmt.Sprintf("%s %s: missing; the right store has it", r.Collection, r.ID))
		case RowExtra:
			out = append(out, fmt.Sprintf("%s %s: a row the right store lacks", r.Collection, r.ID))
		default:
			var fs []string
			for _, f := range r.Fields {
				got, _ := json.Marshal(f.Got)
				want, _ := json.Marshal(f.Want)
				fs = append(fs, fmt.Sprintf("%s = %s, the right store %s", f.Field, got, want))
			}
			out = append(out, fmt.Sprintf("%s %s: %s", r.Collection, r.ID, strings.Join(fs, "; ")))
		}
	}
	return out
}

// Row changes of a StoreDiff.
const (
	RowMissing = "missing" // the right store has the row, the trial's not
	RowExtra   = "extra"   // the trial's store has a row the right one lacks
	RowChanged = "changed" // both have it, with other values
)

// RowDiff is one row that differs, and for a changed row its fields.
type RowDiff struct {
	Collection string      `json:"collection"`
	ID         string      `json:"id"`
	Change     string      `json:"change"`
	Fields     []FieldDiff `json:"fields,omitempty"`
}

// FieldDiff is one field of a changed row: the trial's value and the
// right store's (null when absent).
type FieldDiff struct {
	Field string `json:"field"`
	Got   any    `json:"got"`
	Want  any    `json:"want"`
}

// GoldMatch is one gold call and the calls made that were paired with it.
type GoldMatch struct {
	// Gold is the call's place in the gold sequence, from 0.
	Gold   int    `json:"gold"`
	Tool   string `json:"tool"`
	Action string `json:"action,omitempty"`
	// Call is the index in the record's calls of the call arg_acc aligns
	// with it (the k-th call of the tool for its k-th gold call); -1 when
	// there is none.
	Call int `json:"call"`
	// ActionCall is the call action_arg_acc pairs with it, by the best
	// assignment within the same (tool, action); -1 when none.
	ActionCall int `json:"action_call"`
	// Args compare the gold call's arguments with Call's.
	Args []ArgMatch `json:"args"`
}

// ArgMatch is one argument of a gold call against the aligned call.
type ArgMatch struct {
	Name string `json:"name"`
	Want any    `json:"want"`
	// Accept are other right values of the argument, besides Want.
	Accept []any `json:"accept,omitempty"`
	// Got is the aligned call's value, when Given.
	Got   any  `json:"got,omitempty"`
	Given bool `json:"given"`
	Right bool `json:"right"`
	// Optional arguments may be left out and do not count in arg_acc.
	Optional bool `json:"optional,omitempty"`
}
