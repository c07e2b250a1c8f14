package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitUnits pins how an answer is read as a document: each unit's
// text, the scope it reads under, the unit a pronoun refers back to, and
// the list it is an item of.
func TestSplitUnits(t *testing.T) {
	cases := []struct {
		name, answer string
		want         []unit
	}{{
		name:   "lead line and its bullets, across a blank line",
		answer: "CM006 (car park south) is offline:\n\n- last seen 22:10\n- recording off\n\nNothing else changed.",
		want: []unit{
			{text: "CM006 (car park south) is offline:", prev: -1},
			{text: "last seen 22:10", scope: "CM006 (car park south) is offline", prev: -1, list: 1},
			{text: "recording off", scope: "CM006 (car park south) is offline", prev: -1, list: 1},
			{text: "Nothing else changed.", prev: -1},
		},
	}, {
		name:   "nested items under a heading",
		answer: "## South depot\n- VH008:\n  - fuel 12%\n- VH014 took TR0009",
		want: []unit{
			{text: "South depot", prev: -1},
			{text: "VH008:", scope: "South depot", prev: -1, list: 1},
			{text: "fuel 12%", scope: "South depot: VH008", prev: -1, list: 2},
			{text: "VH014 took TR0009", scope: "South depot", prev: -1, list: 1},
		},
	}, {
		name:   "a paragraph's sentences refer back",
		answer: "VH008 is on standby. It has 12% fuel.",
		want: []unit{
			{text: "VH008 is on standby.", prev: -1},
			{text: " It has 12% fuel.", prev: 0},
		},
	}, {
		name:   "a table row binds its cells to their headers",
		answer: "| van | fuel % |\n|---|---|\n| VH008 | 12 |",
		want: []unit{
			{text: "van | fuel %", prev: -1},
			{text: "van: VH008 | fuel %: 12", prev: -1},
		},
	}, {
		name:   "a bold lead line scopes plain lines until a blank line",
		answer: "**VH008**\nfuel 12%\n\nDone.",
		want: []unit{
			{text: "**VH008**", prev: -1},
			{text: "fuel 12%", scope: "VH008", prev: -1},
			{text: "Done.", prev: -1},
		},
	}, {
		name:   "JSON reads as lead lines and items",
		answer: `{"VH008": {"fuel": 12}}`,
		want: []unit{
			{text: "VH008:", prev: -1, list: 1},
			{text: "fuel: 12", scope: "VH008", prev: -1, list: 2},
		},
	}}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, splitUnits(c.answer), cmp.AllowUnexported(unit{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
