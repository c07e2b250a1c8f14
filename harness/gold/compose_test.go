package gold

import (
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
