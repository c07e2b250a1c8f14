package speclang

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// tinyFiles returns the tiny domain and its scenario table, with edit
// applied to the table.
func tinyFiles(t *testing.T, edit func(string) string) map[string]string {
	t.Helper()
	d, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile("../../generator/testdata/golden/tiny/scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"tiny/domain.yaml": string(d), "tiny/scenarios.yaml": edit(string(s))}
}

func TestTinyScenariosLoad(t *testing.T) {
	spec, err := LoadAll(specFS(t, tinyFiles(t, func(s string) string { return s })))
	if err != nil {
		t.Fatal(err)
	}
	scs := spec.Domain("tiny").Scenarios
	if len(scs) != 4 {
		t.Fatalf("got %d scenarios, want 4", len(scs))
	}
	// Gold written at L4 only is derived for the coarser levels: same
	// operations, the tool that offers each, and the action where the tool
	// has several.
	hard := scs[3]
	for _, l := range mcpdomain.Levels[1:] {
		if !hard.Derived[l] || len(hard.Gold[l]) != len(hard.Gold[mcpdomain.L4]) {
			t.Fatalf("%s: derived %v, %d calls", l, hard.Derived[l], len(hard.Gold[l]))
		}
	}
	got := string(hard.Gold[mcpdomain.L1][0].JSON())
	if want := `{"action":"scene","room":"den","scene":"bright"}`; got != want {
		t.Errorf("L1 call 1: got %s, want %s", got, want)
	}
	if got := hard.Gold[mcpdomain.L1][0].Tool; got != "tiny" {
		t.Errorf("L1 tool: got %q", got)
	}
	if got := string(hard.Gold[mcpdomain.L4][0].JSON()); got != `{"room":"den","scene":"bright"}` {
		t.Errorf("L4 call 1: got %s", got)
	}
}

// TestBrokenScenarios pins the error each kind of broken scenario table
// produces, with its position and JSON path.
func TestBrokenScenarios(t *testing.T) {
	cases := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"unknown tool at a level", func(s string) string {
			return strings.Replace(s, "        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n",
				"        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n      L2:\n        - {tool: lamps, arguments: {lamp_id: LP01}}\n", 1)
		}, []string{
			`tiny/scenarios.yaml:14:18: $.scenarios[0].gold.L2[0].tool: found tool "lamps", which L2 does not have; expected one of tiny_query, tiny_control`,
		}},
		{"wrong action", func(s string) string {
			return strings.Replace(s, "        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n",
				"        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n      L1:\n        - {tool: tiny, arguments: {action: fetch_lamp, lamp_id: LP01}}\n", 1)
		}, []string{
			`tiny/scenarios.yaml:14:44: $.scenarios[0].gold.L1[0].arguments.action: found action "fetch_lamp" for tool "tiny"; expected one of get_lamp, list_lamps, set_lamp, all_off, add_timer, drop_timer, lamp_stats, scene`,
		}},
		{"argument violating the tool schema", func(s string) string {
			return strings.Replace(s, `"on": true, level: 40}`, `"on": true, level: 140}`, 1)
		}, []string{
			"tiny/scenarios.yaml:22:74: $.scenarios[1].gold.L4[0].arguments.level: arguments of set_lamp: found 140; expected at most 100",
		}},
		{"unknown argument", func(s string) string {
			return strings.Replace(s, `{lamp_id: LP01}}`, `{lamp_id: LP01, colour: red}}`, 1)
		}, []string{
			`tiny/scenarios.yaml:12:55: $.scenarios[0].gold.L4[0].arguments.colour: arguments of get_lamp: found unknown key "colour"; expected only the keys the schema defines here`,
		}},
		{"expectation on a non-existent entity", func(s string) string {
			return strings.Replace(s, "{entity: lamp, id: LP02, fields", "{entity: bulb, id: LP02, fields", 1)
		}, []string{
			`tiny/scenarios.yaml:25:20: $.scenarios[1].expect.state[0].entity: found entity "bulb", which domain tiny does not have; expected one of lamp, timer`,
		}},
		{"expectation on a row that is not seeded", func(s string) string {
			return strings.Replace(s, "{entity: lamp, id: LP02, fields", "{entity: lamp, id: LP09, fields", 1)
		}, []string{
			`tiny/scenarios.yaml:25:30: $.scenarios[1].expect.state[0].id: found id "LP09", which is not a seeded lamp; expected one of LP01..LP02 (match rows the task creates with where)`,
		}},
		{"expectation with a value of the wrong type", func(s string) string {
			return strings.Replace(s, `fields: {"on": true, level: 40}`, `fields: {"on": yes, level: 40}`, 1)
		}, []string{
			`tiny/scenarios.yaml:25:51: $.scenarios[1].expect.state[0].fields.on: found "yes" for field "on"; expected true or false`,
		}},
		{"too many calls for the tier", func(s string) string {
			return strings.Replace(s, "        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n",
				"        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n        - {tool: get_lamp, arguments: {lamp_id: LP01}}\n        - {tool: get_lamp, arguments: {lamp_id: LP02}}\n", 1)
		}, []string{
			"tiny/scenarios.yaml:12:9: $.scenarios[0].gold.L4: found 3 gold calls at L4 for an easy scenario; expected 1-2 (easy on one entity)",
		}},
		{"tool name in the prompt", func(s string) string {
			return strings.Replace(s, "How bright is the hall lamp LP01", "Call get_lamp for LP01 and say how bright it is", 1)
		}, []string{
			`tiny/scenarios.yaml:9:13: $.scenarios[0].prompt: found the tool name "get_lamp" in the prompt; expected the words an operator would use`,
		}},
		{"writes without state conditions", func(s string) string {
			return strings.Replace(s, "      state:\n        - {entity: lamp, id: LP02, fields: {\"on\": true, level: 40}}\n",
				"      answer:\n        - {value: 40}\n", 1)
		}, []string{
			"tiny/scenarios.yaml:24:13: $.scenarios[1].expect: found gold that changes the store but no state conditions; expected expect.state to say what the task must leave behind",
		}},
		{"alternative the schema refuses", func(s string) string {
			return strings.Replace(s, `alternatives: {"on": [true]}`, `alternatives: {"on": ["yes"]}`, 1)
		}, []string{
			`tiny/scenarios.yaml:61:33: $.scenarios[3].gold.L4[2].alternatives.on[0]: found alternative "yes" for "on", which list_lamps does not accept; expected a value its schema allows (got string, want boolean)`,
		}},
		{"optional argument the tool requires", func(s string) string {
			return strings.Replace(s, "{tool: get_lamp, arguments: {lamp_id: LP01}}", "{tool: get_lamp, arguments: {lamp_id: LP01}, optional: [lamp_id]}", 1)
		}, []string{
			`tiny/scenarios.yaml:12:67: $.scenarios[0].gold.L4[0].optional[0]: found optional "lamp_id", which get_lamp requires; expected an argument the tool lets a call leave out`,
		}},
		{"duplicate id and wrong prefix", func(s string) string {
			return strings.Replace(strings.Replace(s, "id: tiny-002", "id: tiny-001", 1), "id: tiny-003", "id: small-003", 1)
		}, []string{
			`tiny/scenarios.yaml:17:9: $.scenarios[1].id: found id "tiny-001" a second time; expected unique scenario ids`,
			`tiny/scenarios.yaml:27:9: $.scenarios[2].id: found id "small-003"; expected tiny-<three digits>`,
		}},
		{"schema violation", func(s string) string {
			return strings.Replace(s, "difficulty: easy", "difficulty: trivial", 1)
		}, []string{
			`tiny/scenarios.yaml:8:17: $.scenarios[0].difficulty: found "trivial"; expected one of easy, medium, hard`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadAll(specFS(t, tinyFiles(t, c.edit)))
			if err == nil {
				t.Fatal("loaded without error")
			}
			got := strings.Split(err.Error(), "\n")
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
