package speclang

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// levelsL3 is appended to the tiny spec by cases that need explicit tools.
const levelsL3 = `
levels:
  L3:
    - {name: look, category: status_query, description: Look.}
    - {name: act, category: action_execution, description: Act.}
    - {name: setup, category: configuration, description: Set up.}
    - {name: look, category: analysis, description: Analyse.}
`

// TestBrokenSpecs pins the exact error text each kind of broken spec
// produces: position, JSON path, what was found and what was expected.
func TestBrokenSpecs(t *testing.T) {
	base, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"invalid YAML", func(s string) string { return s + "  broken: [unclosed\n" }, []string{
			`tiny/domain.yaml:41:11: invalid YAML: sequence end token ']' not found`,
		}},
		{"schema violation", func(s string) string {
			return strings.Replace(s, "level: {type: integer,", "level: {type: int,", 1)
		}, []string{
			`tiny/domain.yaml:17:21: $.entities.lamp.fields.level.type: found "int"; expected one of string, integer, number, boolean, enum, timestamp, object, array, reference`,
		}},
		{"unknown key", func(s string) string {
			return strings.Replace(s, "id_prefix: TM", "id_prefix: TM\n    colour: red", 1)
		}, []string{
			`tiny/domain.yaml:27:5: $.entities.timer.colour: found unknown key "colour"; expected only the keys the schema defines here`,
		}},
		{"dangling reference", func(s string) string {
			return strings.Replace(s, "ref: lamp", "ref: bulb", 1)
		}, []string{
			`tiny/domain.yaml:28:36: $.entities.timer.fields.lamp.ref: found reference to entity "bulb", which is not declared; expected one of lamp, timer`,
		}},
		{"seed type mismatch", func(s string) string {
			return strings.Replace(s, "room: den, level: 0}", "room: den, level: high}", 1)
		}, []string{
			`tiny/domain.yaml:23:54: $.entities.lamp.seed[1].level: found "high" for field "level"; expected an integer from 0 to 100`,
		}},
		{"seed reference to a missing row", func(s string) string {
			return strings.Replace(s, "lamp: LP02,", "lamp: LP09,", 1)
		}, []string{
			`tiny/domain.yaml:31:27: $.entities.timer.seed[0].lamp: found "LP09" for field "lamp"; expected the ID of a seed lamp row (LP01, LP02)`,
		}},
		{"duplicate tool", func(s string) string { return s + levelsL3 }, []string{
			`tiny/domain.yaml:47:7: $.levels.L3[3]: found tool "look" a second time at L3; expected unique tool names per level`,
		}},
		{"unreachable operation", func(s string) string {
			return s + strings.Replace(levelsL3, "- {name: look, category: analysis", "- {name: stats, operations: [get_lamp]", 1)
		}, []string{
			`tiny/domain.yaml:44:5: $.levels.L3: operation "lamp_stats" is unreachable at L3; expected every operation in one of its tools (look, act, setup, stats)`,
			`tiny/domain.yaml:47:7: $.levels.L3[3]: found operation "get_lamp" in tools "look" and "stats" at L3; expected each operation in one tool per level`,
		}},
		{"filter on a missing field", func(s string) string {
			return strings.Replace(s, `filters: [room, "on"]`, `filters: [room, colour]`, 1)
		}, []string{
			`tiny/domain.yaml:34:84: $.operations.list_lamps.filters[1]: found "colour", which is not a field of entity "lamp"; expected one of name, room, on, level, watts`,
		}},
		{"entity named like a generated declaration", func(s string) string {
			return strings.ReplaceAll(strings.Replace(s, "  timer:\n", "  stage_schemas:\n", 1), "entity: timer", "entity: stage_schemas")
		}, []string{
			`tiny/domain.yaml:25:16: $.entities.stage_schemas: entity "stage_schemas" becomes Go identifier "StageSchemas", which the generated package declares itself; expected a go_name override`,
		}},
		{"operations named like generated declarations", func(s string) string {
			return strings.Replace(strings.Replace(s, "  drop_timer:", "  reset:", 1), "  scene:", "  tool:", 1)
		}, []string{
			`tiny/domain.yaml:38:10: $.operations.reset: operation "reset" becomes Store method "Reset", which Store already has; expected a go_name override`,
			`tiny/domain.yaml:40:9: $.operations.tool: L4 tool "tool" becomes Go identifier "L4Tool", which the generated package declares itself; expected a go_name override`,
		}},
		{"every error at once", func(s string) string {
			s = strings.Replace(s, "room: den, level: 0}", "room: den, level: 101}", 1)
			return strings.Replace(s, "entity: timer, description: Remove", "entity: clock, description: Remove", 1)
		}, []string{
			`tiny/domain.yaml:23:54: $.entities.lamp.seed[1].level: found 101 for field "level"; expected an integer from 0 to 100`,
			`tiny/domain.yaml:38:38: $.operations.drop_timer.entity: found entity "clock", which is not declared; expected one of lamp, timer`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": c.edit(string(base))}))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want an ErrorList, got %v", err)
			}
			if diff := cmp.Diff(c.want, strings.Split(list.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s\ngot:\n%s", diff, list.Error())
			}
		})
	}
}

func TestFolderMustMatchDomain(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	_, err := Load(specFS(t, map[string]string{"small/domain.yaml": string(base)}))
	if err == nil || !strings.Contains(err.Error(), `found domain "tiny" in folder "small"`) {
		t.Fatalf("got %v", err)
	}
}

func TestLevelCountWarns(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	spec, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": string(base) + "  extra: {kind: get, entity: timer, description: Get a timer.}\n  more: {kind: list, entity: timer, description: List timers.}\n  most: {kind: list, entity: timer, description: List timers again.}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0].Error(), "L4 has 11 tools; its definition has 8 to 10 (fine if deliberate)") {
		t.Fatalf("warnings: %v", spec.Warnings)
	}
}

// TestLoaderNeverPanics loads mutilated versions of a valid spec: whatever
// the input, the loader reports errors and does not panic.
func TestLoaderNeverPanics(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	lines := strings.Split(string(base), "\n")
	for i := range lines {
		edits := []string{
			strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n"), // drop a line
			strings.Replace(string(base), lines[i], strings.ReplaceAll(lines[i], "2", "2.0"), 1),
			strings.Replace(string(base), lines[i], strings.ReplaceAll(lines[i], "lamp", "lump"), 1),
		}
		for _, e := range edits {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic on edit of line %d: %v\n%s", i+1, r, e)
					}
				}()
				_, _ = Load(specFS(t, map[string]string{"tiny/domain.yaml": e}))
			}()
		}
	}
}

// FuzzLoadDomain feeds arbitrary bytes as a domain spec: the loader must
// return a domain or errors, never panic.
//
//	go test ./generator -run '^$' -fuzz FuzzLoadDomain -fuzztime 30s
func FuzzLoadDomain(f *testing.F) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	f.Add(string(base))
	f.Add("domain: x\n")
	f.Fuzz(func(t *testing.T, spec string) {
		_, _ = Load(specFS(t, map[string]string{"tiny/domain.yaml": spec}))
	})
}
