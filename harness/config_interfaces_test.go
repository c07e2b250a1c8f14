package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/specs"
)

// writeConfig writes yaml as x.yaml in a fresh folder and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigInterfaces: interfaces load beside or instead of
// granularities, a missing name takes the standard one, and interfaces
// without granularities are the whole plan.
func TestConfigInterfaces(t *testing.T) {
	spec := loadSpec(t)
	cases := []struct {
		name, yaml string
		levels     []level.Level
		ifaces     surface.Specs
	}{
		{"instead of granularities",
			"name: x\nmodels: [a]\ninterfaces:\n  - {level: L3, descriptions: terse}\n  - {name: mine, level: L2, actions: nested, names: opaque}\n",
			nil,
			surface.Specs{{Name: "L3-terse", Level: level.L3, Transforms: surface.Transforms{Descriptions: "terse"}},
				{Name: "mine", Level: level.L2, Transforms: surface.Transforms{Actions: "nested", Names: "opaque"}}}},
		{"beside granularities",
			"name: x\nmodels: [a]\ngranularities: [L4, L1]\ninterfaces: [{level: L1, names: camel, constraints: schema}]\n",
			[]level.Level{level.L4, level.L1},
			surface.Specs{{Name: "L1-schemaonly-camel", Level: level.L1, Transforms: surface.Transforms{Names: "camel", Constraints: "schema"}}}},
		{"a level as written, by its own name",
			"name: x\nmodels: [a]\ninterfaces: [{name: L2, level: L2}, {level: L4, actions: enum}]\n",
			nil,
			surface.Specs{{Name: "L2", Level: level.L2}, {Name: "L4", Level: level.L4, Transforms: surface.Transforms{Actions: "enum"}}}},
		{"beside artifacts",
			"name: x\nmodels: [a]\nartifacts: a.jsonl\ninterfaces: [{level: L2, shape: grouped}]\n",
			nil,
			surface.Specs{{Name: "L2-grouped", Level: level.L2, Transforms: surface.Transforms{Shape: "grouped"}}}},
		{"by name, beside objects",
			"name: x\nmodels: [a]\ninterfaces: [L3-terse, {level: L2, shape: grouped}, L4-atomic]\n",
			nil,
			surface.Specs{{Name: "L3-terse", Level: level.L3, Transforms: surface.Transforms{Descriptions: "terse"}},
				{Name: "L2-grouped", Level: level.L2, Transforms: surface.Transforms{Shape: "grouped"}},
				{Name: "L4-atomic", Level: level.L4, Transforms: surface.Transforms{Composition: "atomic"}}}},
		{"the paper's family",
			"name: x\nmodels: [a]\ninterfaces: paper\n",
			nil,
			surface.Specs{{Name: "L4-atomic", Level: level.L4, Transforms: surface.Transforms{Composition: "atomic"}},
				{Name: "L3-composite", Level: level.L3, Transforms: surface.Transforms{Composition: "composite"}},
				{Name: "L2-composite", Level: level.L2, Transforms: surface.Transforms{Composition: "composite"}},
				{Name: "L1-composite", Level: level.L1, Transforms: surface.Transforms{Composition: "composite"}}}},
		{"neither: every level",
			"name: x\nmodels: [a]\n",
			level.Levels, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := LoadConfig(writeConfig(t, c.yaml), spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Granularities, c.levels) {
				t.Errorf("granularities %v; want %v", cfg.Granularities, c.levels)
			}
			if diff := cmp.Diff(c.ifaces, cfg.Interfaces); diff != "" {
				t.Errorf("interfaces (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEmbeddedInterfacesConfig: the embedded example of interfaces loads,
// each interface named by its standard name unless named, beside its one
// level as written.
func TestEmbeddedInterfacesConfig(t *testing.T) {
	c, err := LoadConfig("interfaces", loadSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Interfaces {
		names = append(names, s.Name)
	}
	if want := []string{"L3-terse", "L3-opaque", "L2-nested-grouped", "L2-bare"}; !slices.Equal(names, want) || !slices.Equal(c.Granularities, []level.Level{level.L3}) {
		t.Errorf("interfaces %v beside %v; want %v beside [L3]", names, c.Granularities, want)
	}
}

// TestConfigInterfaceErrors pins the positioned error of each kind of bad
// interface.
func TestConfigInterfaceErrors(t *testing.T) {
	spec := loadSpec(t)
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown transform value", "name: x\nmodels: [a]\ninterfaces: [{level: L3, names: kebab}]\n", []string{
			`x.yaml:3:33: $.interfaces[0].names: found "kebab"; expected one of as-written, camel, verb-first, noun-first, prefixed, opaque`}},
		{"a name of no interface", "name: x\nmodels: [a]\ninterfaces: [L3-terse, L2-bogus]\n", []string{
			`x.yaml:3:24: $.interfaces[1]: interface "L2-bogus": unknown transform "bogus"; expected presets among`}},
		{"no such family", "name: x\nmodels: [a]\ninterfaces: papers\n", []string{
			`x.yaml:3:13: $.interfaces: found "papers"; expected one of paper`}},
		{"unknown transform", "name: x\nmodels: [a]\ninterfaces: [{level: L3, colour: red}]\n", []string{
			`x.yaml:3:26: $.interfaces[0].colour: found unknown key "colour"`}},
		{"no level", "name: x\nmodels: [a]\ninterfaces: [{descriptions: terse}]\n", []string{
			`x.yaml:3:14: $.interfaces[0]: missing required key "level"`}},
		{"conflicting transforms", "name: x\nmodels: [a]\ninterfaces:\n  - level: L3\n    descriptions: none\n    constraints: schema\n    enums: described\n", []string{
			`x.yaml:6:18: $.interfaces[0].constraints: found constraints: schema beside descriptions: none`,
			`x.yaml:7:12: $.interfaces[0].enums: found enums: described beside descriptions: none`}},
		{"actions at L4", "name: x\nmodels: [a]\ninterfaces: [{level: L4, actions: oneof}]\n", []string{
			`x.yaml:3:35: $.interfaces[0].actions: found actions: oneof at L4, where no tool has actions (one tool per operation); expected it at L3, L2 or L1`}},
		{"a name twice", "name: x\nmodels: [a]\ninterfaces:\n  - {name: t, level: L3, descriptions: terse}\n  - {name: t, level: L2, descriptions: terse}\n", []string{
			`x.yaml:5:12: $.interfaces[1].name: found interface name "t" again; expected each name once among interfaces and granularities`}},
		{"a standard name twice", "name: x\nmodels: [a]\ninterfaces:\n  - {level: L3, descriptions: terse}\n  - {level: L3, descriptions: terse}\n", []string{
			`x.yaml:5:5: $.interfaces[1]: found interface name "L3-terse" again`}},
		{"a granularity's name", "name: x\nmodels: [a]\ngranularities: [L3]\ninterfaces: [{level: L3}]\n", []string{
			`x.yaml:4:14: $.interfaces[0]: found interface name "L3" again, which granularities already runs as the level as written`}},
		{"one interface under two names", "name: x\nmodels: [a]\ninterfaces:\n  - {name: a, level: L2, names: opaque}\n  - {name: b, level: L2, names: opaque, shape: flat}\n", []string{
			`x.yaml:5:5: $.interfaces[1]: found interface "b", which is "a" again (L2 with names=opaque); expected each interface once`}},
		{"a bare level name on a transformed level", "name: x\nmodels: [a]\ninterfaces: [{name: L3, level: L3, descriptions: terse}]\n", []string{
			`x.yaml:3:21: $.interfaces[0].name: found name "L3" on L3 with descriptions=terse; expected a name of its own, or no name for its standard one, L3-terse: "L3" is the standard name of L3 as written`}},
		{"another level's name", "name: x\nmodels: [a]\ninterfaces: [{name: L2, level: L3}]\n", []string{
			`$.interfaces[0].name: found name "L2" on L3 as written; expected a name of its own`}},
		{"another interface's standard name", "name: x\nmodels: [a]\ninterfaces: [{name: L3-opaque, level: L3, names: camel}]\n", []string{
			`$.interfaces[0].name: found name "L3-opaque" on L3 with names=camel; expected a name of its own, or no name for its standard one, L3-camel: "L3-opaque" is the standard name of L3 with names=opaque`}},
		{"a name with a space", "name: x\nmodels: [a]\ninterfaces: [{name: my iface, level: L3}]\n", []string{
			`x.yaml:3:21: $.interfaces[0].name: found "my iface"; expected a string matching`}},
		{"empty", "name: x\nmodels: [a]\ninterfaces: []\n", []string{
			`x.yaml:3:13: $.interfaces: found [], which has 0 items; expected at least 1`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeConfig(t, c.yaml)
			_, err := LoadConfig(path, spec)
			if err == nil {
				t.Fatalf("%q: loaded", c.yaml)
			}
			got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, w)
				}
			}
		})
	}
}

// TestInterfaceSchemaLevels: an interface in the experiment schema
// requires its level, one of level.Levels. (Its transforms are held to
// surface.Choices by surface's TestTableMatchesSchema.)
func TestInterfaceSchemaLevels(t *testing.T) {
	data, err := specs.FS.ReadFile(ExperimentSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Interface struct {
				Required   []string `json:"required"`
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"interface"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	items := schema.Defs.Interface
	if !slices.Equal(items.Required, []string{"level"}) {
		t.Errorf("required %v; want [level]", items.Required)
	}
	levels := make([]string, len(level.Levels))
	for i, lv := range level.Levels {
		levels[i] = string(lv)
	}
	if got := items.Properties["level"].Enum; !slices.Equal(got, levels) {
		t.Errorf("level enum %v; want %v", got, levels)
	}
}
