package score

import (
	"testing"

	"github.com/mcpgranite/granite/internal/speclang"
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
		// Numbers as people write them.
		{"The site used 1,180.9 kWh today", 1180.9, nil, true},
		{"1,180.9", 180.9, nil, false}, // the tail of a grouped number
		{"12,345,678 rows", int64(12345678), nil, true},
		{"readings 3,4 and 5", int64(4), nil, false}, // 3,4 is not a list here, as in 1,180
		{"readings 3, 4 and 5", int64(4), nil, true},
		{"the array delivers 142.8kW", 142.8, nil, true},
		{"field F3 is 11.3ha", 11.3, nil, true},
		{"heart rate 102.2bpm", 102.2, nil, true},
		{"the freezer is at \u221223.5 °C", -23.5, nil, true},
		{"the freezer is at \u221223.5 °C", 23.5, nil, false},
		{"humidity is 78%", int64(78), nil, true},
		{"humidity is 78%.", 0.78, nil, true}, // a fraction said as a percentage
		{"humidity is 78%", 0.79, nil, false},
		{"humidity is 78 %", int64(78), nil, true},
		{"sensor SN005 reports", int64(5), nil, false},
		{"it came 2nd", int64(2), nil, false},
		{"the 3rd and 4th bays", int64(3), nil, false},
		{"bay 5G2", int64(5), nil, false},
		{"5 kW", int64(5), nil, true},
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
		f := &speclang.Fact{Value: c.fact, Alternatives: c.alts}
		if got := Stated(c.text, f); got != c.want {
			t.Errorf("Stated(%q, %v): got %v, want %v", c.text, c.fact, got, c.want)
		}
	}
}
