package combine

import (
	"strings"
	"testing"
)

// TestSchema pins the combined schema of two operations that share
// arguments in each way widening treats: a bound only one gives, enum
// values joined, descriptions joined, an argument only one takes (Used
// by), and the action's words for what each takes. The bytes are those the
// spec language's own union wrote into every generated schema before the
// runtime computed them (go generate left gen/ unchanged).
func TestSchema(t *testing.T) {
	ops := []Op{
		{Name: "list_lamps", Description: "List lamps.", Schema: `{"type":"object","properties":{` +
			`"room":{"type":"string","description":"Room.","enum":["hall","den"]},` +
			`"level":{"type":"integer","description":"Brightness.","minimum":0,"maximum":100},` +
			`"limit":{"type":"integer","description":"Page size.","minimum":1}},"additionalProperties":false}`},
		{Name: "set_lamp", Description: "Change one lamp", Schema: `{"type":"object","properties":{` +
			`"room":{"type":"string","description":"New room.","enum":["den","attic"]},` +
			`"level":{"type":"integer","description":"Brightness.","minimum":0}},"required":["level"],"additionalProperties":false}`},
	}
	got, err := Schema(ops)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"action":{"type":"string","description":"What to do. list_lamps: List lamps (optional room, level, limit). ` +
		`set_lamp: Change one lamp (requires level; optional room).","enum":["list_lamps","set_lamp"]},` +
		`"room":{"type":"string","description":"Room. / New room.","enum":["hall","den","attic"]},` +
		`"level":{"type":"integer","description":"Brightness.","minimum":0},` +
		`"limit":{"type":"integer","description":"Page size. (Used by: list_lamps.)","minimum":1}},` +
		`"required":["action"],"additionalProperties":false}`
	if got != want {
		t.Errorf("Schema =\n%s\nwant\n%s", got, want)
	}
}

func TestSchemaRefusesWhatIsNotAnObjectSchema(t *testing.T) {
	_, err := Schema([]Op{{Name: "a", Schema: `[1]`}, {Name: "b", Schema: `{}`}})
	if err == nil || !strings.Contains(err.Error(), "operation a") {
		t.Errorf("err = %v; want one naming operation a", err)
	}
}

func TestActionUsage(t *testing.T) {
	for _, c := range []struct {
		req, opt []string
		want     string
	}{
		{nil, nil, " (no other arguments)."},
		{[]string{"a", "b"}, nil, " (requires a, b)."},
		{[]string{"a"}, []string{"c"}, " (requires a; optional c)."},
	} {
		if got := ActionUsage(c.req, c.opt); got != c.want {
			t.Errorf("ActionUsage(%v, %v) = %q, want %q", c.req, c.opt, got, c.want)
		}
	}
}
