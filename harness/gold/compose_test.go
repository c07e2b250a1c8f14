package gold

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestAtomicExpandsPresets: a preset call becomes the list that finds
// the rows its filters pick and one update per row it changes, on the
// store as the calls before it left it; rows the preset would leave as
// they are get no call, and the calls around it are kept.
func TestAtomicExpandsPresets(t *testing.T) {
	d := spectest.Tiny(t).Domain("tiny")
	calls := []*speclang.Call{
		{Tool: "set_lamp", Op: "set_lamp", Args: map[string]any{"lamp_id": "LP02", "level": 40}},
		{Tool: "scene", Op: "scene", Args: map[string]any{"room": "den", "scene": "bright"}},
		{Tool: "scene", Op: "scene", Args: map[string]any{"scene": "dark"}},
	}
	got, err := Atomic(d, tiny.Domain, calls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`set_lamp {"lamp_id":"LP02","level":40}`,
		`list_lamps {"room":"den"}`,
		`set_lamp {"lamp_id":"LP02","level":100,"on":true}`,
		`list_lamps {}`,
		`set_lamp {"lamp_id":"LP01","on":false}`,
		`set_lamp {"lamp_id":"LP02","on":false}`,
	}
	if s := callList(got); s != strings.Join(want, ", ") {
		t.Errorf("atomic gold\n%s\nwant\n%s", s, strings.Join(want, ", "))
	}
}

// TestAtomicNamesWhatIsMissing: a composite with no atomic form fails,
// naming the call and the operation the domain lacks.
func TestAtomicNamesWhatIsMissing(t *testing.T) {
	d := spectest.Tiny(t).Domain("tiny")
	calls := []*speclang.Call{{Tool: "scene", Op: "scene", Args: map[string]any{"room": "den", "scene": "bright"}}}
	for _, o := range d.Operations {
		if o.Name == "set_lamp" {
			o.Kind = "update_where" // as if the domain had no update of one lamp
			defer func() { o.Kind = "update" }()
		}
	}
	if _, err := Atomic(d, tiny.Domain, calls); err == nil || !strings.Contains(err.Error(), "gold call 1, scene: no update operation of lamps sets level, on") {
		t.Errorf("error %v; want the call and the missing update named", err)
	}
}

// TestAtomicExpandsWorkflows: a workflow call becomes the calls it makes
// on the store at that point, its read included: the list of the lit
// lamps, an update of each, the timer.
func TestAtomicExpandsWorkflows(t *testing.T) {
	d := spectest.Tiny(t).Domain("tiny")
	calls := []*speclang.Call{
		{Tool: "dim_room", Op: "dim_room", Args: map[string]any{"room": "hall", "level": 10, "lamp": "LP02", "at": "2026-01-01T23:00:00Z"}},
	}
	got, err := Atomic(d, tiny.Domain, calls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`list_lamps {"on":true,"room":"hall"}`,
		`set_lamp {"lamp_id":"LP01","level":10}`,
		`add_timer {"at":"2026-01-01T23:00:00Z","lamp":"LP02"}`,
	}
	if s := callList(got); s != strings.Join(want, ", ") {
		t.Errorf("atomic gold\n%s\nwant\n%s", s, strings.Join(want, ", "))
	}
}

// TestCompositeContractsRuns: the calls a workflow makes, written out in
// the gold, become one call of the workflow, its arguments read off the
// calls; the round trip through Atomic gives the gold back. A run that
// does less than the workflow would (a lit lamp left as it was) stays.
func TestCompositeContractsRuns(t *testing.T) {
	d := spectest.Tiny(t).Domain("tiny")
	s := d.Scenarios[slices.IndexFunc(d.Scenarios, func(s *speclang.Scenario) bool { return s.ID == "tiny-003" })]
	written := s.Gold["L4"]
	atomic, err := Atomic(d, tiny.Domain, written)
	if err != nil {
		t.Fatal(err)
	}
	if len(atomic) <= len(written) {
		t.Fatalf("atomic gold %s; want the workflow written out", callList(atomic))
	}
	back, err := Composite(d, tiny.Domain, atomic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := callList(back), callList(written); got != want {
		t.Errorf("composite of the atomic gold\n%s\nwant the gold as written\n%s", got, want)
	}
	partial := []*speclang.Call{
		{Tool: "list_lamps", Op: "list_lamps", Args: map[string]any{"room": "hall", "on": true}},
		{Tool: "add_timer", Op: "add_timer", Args: map[string]any{"lamp": "LP02"}},
	}
	kept, err := Composite(d, tiny.Domain, partial)
	if err != nil {
		t.Fatal(err)
	}
	if callList(kept) != callList(partial) {
		t.Errorf("a run that does less than the workflow: %s; want it kept", callList(kept))
	}
}
