package score

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// CheckState returns the conditions a store snapshot fails, each with why;
// none means the state is as expected.
func CheckState(snapshot []byte, checks []*speclang.StateCheck) ([]string, error) {
	rows, err := mcpdomain.Rows(snapshot)
	if err != nil {
		return nil, err
	}
	return checkRows(rows, checks), nil
}

// checkRows is CheckState on a decoded snapshot.
func checkRows(rows map[string][]map[string]any, checks []*speclang.StateCheck) []string {
	var failed []string
	for _, c := range checks {
		if why := checkOne(rows[c.Collection], c); why != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", c, why))
		}
	}
	return failed
}

func checkOne(rows []map[string]any, c *speclang.StateCheck) string {
	var sel []map[string]any
	for _, r := range rows {
		if c.ID != "" && r["id"] == c.ID || c.ID == "" && holds(r, c.Where) == "" {
			sel = append(sel, r)
		}
	}
	switch {
	case c.Absent && len(sel) > 0:
		return fmt.Sprintf("found %d matching row(s); expected none", len(sel))
	case c.Absent:
		return ""
	case c.Count != nil && len(sel) != *c.Count:
		return fmt.Sprintf("found %d matching row(s); expected %d", len(sel), *c.Count)
	case len(sel) == 0:
		return "found no such row; expected one"
	}
	for _, r := range sel {
		if why := holds(r, c.Fields); why != "" {
			return fmt.Sprintf("row %v: %s", r["id"], why)
		}
	}
	return ""
}

// holds says which field of a row differs from the wanted values, or "".
// Values compare as arguments do (see SameValue), free text loosely: a
// model that names a task "corner deli" did what was asked of "Corner
// Deli" (enum values are exact already: the schema refuses any other
// spelling).
//
// A nil wanted value asks for an optional field without a value: the
// snapshot leaves such a field out.
func holds(row map[string]any, want map[string]any) string {
	for _, k := range slices.Sorted(maps.Keys(want)) { // the same reason every time
		w := want[k]
		got, ok := row[k]
		switch {
		case w == nil && (!ok || got == nil):
			continue
		case w == nil:
			return fmt.Sprintf("found %s = %s; expected it unset", k, jsonString(got))
		case !ok || got == nil:
			return fmt.Sprintf("found %s unset; expected %s", k, jsonString(w))
		}
		if !SameValue(got, w, false) {
			return fmt.Sprintf("found %s = %s; expected %s", k, jsonString(got), jsonString(w))
		}
	}
	return ""
}
