// Package surface builds interfaces: a granularity level's tools as a model
// is shown them, after transforms that change what the model reads (names,
// descriptions, how an action and its arguments are encoded, the schema's
// shape) and never what runs. Each transform is a small deterministic
// function of the level's tools, one file each (transform_<key>.go) in
// one table, Choices (transforms.go), that Build iterates; the
// operations, the store and the verdict rules stay the level's. An
// interface decodes every call it receives back into the level's call
// (Decode) and encodes the level's gold into its own (Encode), so gold is
// mapped, never rewritten, and Measure says what its tools cost the model
// to read. It is a leaf, on level and schemacheck's bounds alone: tools
// come in as names, descriptions and JSON Schemas, from a generated
// domain or a regrouped server alike.
package surface

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
)

// Transforms are an interface's choices over its level's tools. The zero
// value (every field empty) is the level as written. Each field is the
// value of one transform of Choices, its first value the default.
type Transforms struct {
	// Descriptions: full (as written), terse (the first sentence of each
	// tool's and argument's description) or none (no descriptions).
	Descriptions string `json:"descriptions,omitempty"`
	// Constraints: words (ranges, formats and patterns stated in
	// descriptions too, as granite writes them) or schema (the sentences
	// that state a schema constraint are removed: the schema alone says
	// it).
	Constraints string `json:"constraints,omitempty"`
	// Names: as-written, camel (setDevice), verb-first (set_device),
	// noun-first (device_set), prefixed (the server's name first) or
	// opaque (tool_1, tool_2, … in the level's order, a control).
	Names string `json:"names,omitempty"`
	// Actions, for a tool that offers several operations: enum (an action
	// enum beside the union of every action's arguments), nested (the
	// action's arguments in an object named after it: {"action": "x",
	// "x": {…}}) or oneof (a JSON Schema oneOf with one branch per
	// action).
	Actions string `json:"actions,omitempty"`
	// Shape: flat, or grouped (each min_X and max_X pair of arguments as
	// one object X with min and max).
	Shape string `json:"shape,omitempty"`
	// Enums: inline (the enum keyword) or described (the allowed values
	// listed in the argument's description instead; the action's enum is
	// kept).
	Enums string `json:"enums,omitempty"`
	// Composition: as-written (the level's operations, composite ones
	// among them, and the gold as written), atomic (no composite
	// operation: no preset, no workflow; gold that calls one is expanded
	// into the atomic calls it performs) or composite (the level's
	// operations, and gold that calls a workflow wherever a run of its
	// calls is one). It changes what one call does, so a tool list and a
	// gold go with it; the gold is the harness's to derive.
	Composition string `json:"composition,omitempty"`
}

// Problem is one thing wrong with an interface's definition: the key it
// is about ("" for the interface as a whole) and what was expected.
type Problem struct {
	Key, Msg string
}

// Error is the message.
func (p Problem) Error() string { return p.Msg }

// Spec names an interface: a level and the transforms over it.
type Spec struct {
	Name  string      `json:"name"`
	Level level.Level `json:"level"`
	Transforms
}

// Plain reports whether the interface is its level as written.
func (s Spec) Plain() bool { return s.Transforms.Normal() == Transforms{} }

// Identity is a level as an interface: its tools as written, under the
// level's name. It is what a config's granularities play, what granite
// serve --level serves, and what a record without an interface key
// played.
func Identity(lv level.Level) Spec { return Spec{Name: string(lv), Level: lv} }

// IsIdentity reports whether s is its level's identity interface: plain
// and named for the level. A record of it names the level only.
func (s Spec) IsIdentity() bool { return s.Plain() && s.Name == string(s.Level) }

// Presets are the short names of single transforms that interface names
// are built from: L3-terse is L3 with descriptions: terse, L2-nested-opaque
// L2 with actions: nested and names: opaque.
var Presets = []struct {
	Name       string
	Transforms Transforms
}{
	{"terse", Transforms{Descriptions: "terse"}},
	{"nodesc", Transforms{Descriptions: "none"}},
	{"schemaonly", Transforms{Constraints: "schema"}},
	{"camel", Transforms{Names: "camel"}},
	{"verbfirst", Transforms{Names: "verb-first"}},
	{"nounfirst", Transforms{Names: "noun-first"}},
	{"prefixed", Transforms{Names: "prefixed"}},
	{"opaque", Transforms{Names: "opaque"}},
	{"nested", Transforms{Actions: "nested"}},
	{"oneof", Transforms{Actions: "oneof"}},
	{"grouped", Transforms{Shape: "grouped"}},
	{"enumtext", Transforms{Enums: "described"}},
	{"atomic", Transforms{Composition: "atomic"}},
	{"composite", Transforms{Composition: "composite"}},
}

// Parse reads an interface name: a level, then presets joined by "-"
// ("L3", "L3-terse", "L2-nested-opaque"). Two presets that set the same
// transform conflict.
func Parse(name string) (Spec, error) {
	parts := strings.Split(strings.TrimSpace(name), "-")
	lv, err := level.Parse(parts[0])
	if err != nil {
		return Spec{}, fmt.Errorf("interface %q: %w", name, err)
	}
	s := Spec{Name: string(lv), Level: lv}
	for _, p := range parts[1:] {
		i := slices.IndexFunc(Presets, func(x struct {
			Name       string
			Transforms Transforms
		}) bool {
			return x.Name == p
		})
		if i < 0 {
			return Spec{}, fmt.Errorf("interface %q: unknown transform %q; expected presets among %s after the level (like L3-terse)", name, p, strings.Join(PresetNames(), ", "))
		}
		for _, c := range Choices {
			v := *c.field(&Presets[i].Transforms)
			if v == "" {
				continue
			}
			if have := c.field(&s.Transforms); *have != "" {
				return Spec{}, fmt.Errorf("interface %q: %s sets %s twice (%s, then %s); expected one value per transform", name, p, c.Key, *have, v)
			}
			*c.field(&s.Transforms) = v
		}
		s.Name += "-" + p
	}
	if probs := s.Check(); len(probs) > 0 {
		return Spec{}, fmt.Errorf("interface %q: %s", name, probs[0].Msg)
	}
	return s, nil
}

// PresetNames lists the presets, in order.
func PresetNames() []string {
	out := make([]string, len(Presets))
	for i, p := range Presets {
		out[i] = p.Name
	}
	return out
}

// DefaultName is the name Parse would read s's transforms from where
// every transform is a preset's ("L3-terse"); otherwise the level and
// the changes ("L3+descriptions=terse,names=camel").
func DefaultName(lv level.Level, t Transforms) string {
	t = t.Normal()
	name := string(lv)
	rest := t
	for _, p := range Presets {
		pt := p.Transforms
		if covers(rest, pt) {
			name += "-" + p.Name
			rest = subtract(rest, pt)
		}
	}
	if rest == (Transforms{}) {
		return name
	}
	return string(lv) + "+" + strings.Join(t.Changes(), ",")
}

// covers reports whether every transform p sets has the same value in t.
func covers(t, p Transforms) bool {
	for _, c := range Choices {
		if v := *c.field(&p); v != "" && *c.field(&t) != v {
			return false
		}
	}
	return true
}

func subtract(t, p Transforms) Transforms {
	for _, c := range Choices {
		if *c.field(&p) != "" {
			*c.field(&t) = ""
		}
	}
	return t
}

// Families are named lists of interfaces a config or a flag names at
// once. paper is the four the MCP-GRANITE paper compares, as its
// reference implementation builds them: L4 of atomic tools, and L3, L2
// and L1 of composite ones (each level's tools with the workflows among
// them, and gold that calls a workflow where a task's steps are one).
var Families = map[string][]string{
	"paper": {"L4-atomic", "L3-composite", "L2-composite", "L1-composite"},
}

// ParseList reads interfaces as a flag gives them: a family's name
// (Families), or interface names joined by commas (Parse).
func ParseList(list string) ([]Spec, error) {
	names, ok := Families[strings.TrimSpace(list)]
	if !ok {
		names = strings.Split(list, ",")
	}
	var out []Spec
	for _, n := range names {
		s, err := Parse(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Specs are interfaces as a config lists them: each an object ({level,
// transforms...}) or a name (Parse), or the whole list a family's name.
type Specs []Spec

// UnmarshalJSON reads a list of interfaces, or a family's name.
func (s *Specs) UnmarshalJSON(b []byte) error {
	var family string
	if json.Unmarshal(b, &family) == nil {
		list, err := ParseList(family)
		if err != nil || !slices.Contains(slices.Collect(maps.Keys(Families)), family) {
			return fmt.Errorf("interfaces: found %q; expected a list of interfaces or a family (%s)", family, strings.Join(slices.Sorted(maps.Keys(Families)), ", "))
		}
		*s = list
		return nil
	}
	var list []Spec
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*s = list
	return nil
}

// UnmarshalJSON reads an interface: an object, or its name (Parse).
func (s *Spec) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		p, err := Parse(name)
		if err != nil {
			return err
		}
		*s = p
		return nil
	}
	type plain Spec
	return json.Unmarshal(b, (*plain)(s))
}
