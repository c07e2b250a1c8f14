package score

import (
	"testing"

	"github.com/mcpgranite/granite/internal/speclang"
)

func TestCheckState(t *testing.T) {
	snap := []byte(`{"lamps":[{"id":"LP01","name":"Hall lamp","on":true,"level":80,"at":"2026-01-01T22:00:00Z"},{"id":"LP02","on":false,"level":0,"at":"2026-01-01T22:00:00Z"}],"next_ids":{"lamp":3}}`)
	two, one := 2, 1
	cases := []struct {
		check *speclang.StateCheck
		want  string
	}{
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"on": true, "level": int64(80)}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"level": 80.0}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"at": "2026-01-01T23:00:00+01:00"}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"name": " hall LAMP"}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"level": int64(70)}},
			`lamp LP01 with {"level":70}: row LP01: found level = 80; expected 70`},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP03"}, "lamp LP03: found no such row; expected one"},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP02", Absent: true}, "lamp LP02 absent: found 1 matching row(s); expected none"},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"at": "2026-01-01T22:00:00Z"}, Count: &two}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"on": false}, Count: &one, Fields: map[string]any{"level": int64(0)}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"on": true}, Count: &two},
			`lamp rows where {"on":true} (exactly 2): found 1 matching row(s); expected 2`},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"level": int64(50)}}, `lamp rows where {"level":50}: found no such row; expected one`},
		// LP02 has no name: unset is asked for with nil, and is no value.
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP02", Fields: map[string]any{"name": nil}}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"name": nil}, Count: &one}, ""},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"name": nil}},
			`lamp LP01 with {"name":null}: row LP01: found name = "Hall lamp"; expected it unset`},
		{&speclang.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP02", Fields: map[string]any{"name": ""}},
			`lamp LP02 with {"name":""}: row LP02: found name unset; expected ""`},
	}
	for _, c := range cases {
		got, err := CheckState(snap, []*speclang.StateCheck{c.check})
		if err != nil {
			t.Fatal(err)
		}
		var msg string
		if len(got) > 0 {
			msg = got[0]
		}
		if msg != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.check, msg, c.want)
		}
	}
	if _, err := CheckState([]byte("not json"), nil); err == nil {
		t.Error("CheckState accepted a snapshot that is not JSON")
	}
}
