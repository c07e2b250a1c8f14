package harness

import (
	"testing"

	"github.com/mcpgranite/granite/generator"
)

func TestStated(t *testing.T) {
	cases := []struct {
		text string
		fact any
		alts []any
		want bool
	}{
		{"It is set to 21.5 °C.", 21.5, nil, true},
		{"It is set to 21.5°C.", 21.5, nil, true},
		{"It is set to 21.50 degrees", 21.5, nil, true},
		{"about 21.5", 21.46, nil, true}, // the answer's precision decides
		{"about 21", 21.46, nil, false},  // a value with decimals needs one
		{"avg 17.77", 17.766666666, nil, true},
		{`{"avg":17.766666666666666}`, 17.77, nil, true}, // tool output, finer than the fact
		{"21.4 degrees", 21.5, nil, false},
		{"3 motion events", int64(3), nil, true},
		{"3.0 events", int64(3), nil, true},
		{"sensor SN003 reports", int64(3), nil, false}, // part of an ID
		{"13 events", int64(3), nil, false},
		{"-4.5 kW", -4.5, nil, true},
		{"The living room is warmest", "living_room", nil, true},
		{"living-room", "living_room", nil, true},
		{"Living Room", "living room", nil, true},
		{"the livingroom", "living_room", nil, false},
		{"It opened at 22:10 yesterday", "22:10", nil, true},
		{`"timestamp":"2026-03-13T22:10:00Z"`, "22:10", nil, true},
		{"Sensor SN005 is low", "SN005", nil, true},
		{"sensor sn005 is low", "SN005", nil, true},
		{"SN0050", "SN005", nil, false},
		{"it is done", "on", nil, false}, // whole words only
		{"the bedroom temperature sensor", "SN005", []any{"Bedroom temperature"}, true},
		{"nothing relevant", "SN005", []any{"Bedroom temperature"}, false},
	}
	for _, c := range cases {
		f := &generator.Fact{Value: c.fact, Alternatives: c.alts}
		if got := Stated(c.text, f); got != c.want {
			t.Errorf("Stated(%q, %v): got %v, want %v", c.text, c.fact, got, c.want)
		}
	}
}

func TestCheckState(t *testing.T) {
	snap := []byte(`{"lamps":[{"id":"LP01","name":"Hall lamp","on":true,"level":80,"at":"2026-01-01T22:00:00Z"},{"id":"LP02","on":false,"level":0,"at":"2026-01-01T22:00:00Z"}],"next_ids":{"lamp":3}}`)
	two, one := 2, 1
	cases := []struct {
		check *generator.StateCheck
		want  string
	}{
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"on": true, "level": int64(80)}}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"level": 80.0}}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"at": "2026-01-01T23:00:00+01:00"}}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"name": " hall LAMP"}}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP01", Fields: map[string]any{"level": int64(70)}},
			`lamp LP01 with {"level":70}: row LP01: found level = 80; expected 70`},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP03"}, "lamp LP03: found no such row; expected one"},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", ID: "LP02", Absent: true}, "lamp LP02 absent: found 1 matching row(s); expected none"},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"at": "2026-01-01T22:00:00Z"}, Count: &two}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"on": false}, Count: &one, Fields: map[string]any{"level": int64(0)}}, ""},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"on": true}, Count: &two},
			`lamp rows where {"on":true} (exactly 2): found 1 matching row(s); expected 2`},
		{&generator.StateCheck{Entity: "lamp", Collection: "lamps", Where: map[string]any{"level": int64(50)}}, `lamp rows where {"level":50}: found no such row; expected one`},
	}
	for _, c := range cases {
		got, err := CheckState(snap, []*generator.StateCheck{c.check})
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
