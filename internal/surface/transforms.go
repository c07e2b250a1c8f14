package surface

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
)

// Choices are every transform, in the order Build applies them and
// Changes names them. A transform is one file, transform_<key>.go, that
// defines its Transform; adding one is that file, a line here, its field
// in Transforms and its enum in specs/experiment.schema.json, which
// TestTableMatchesSchema holds to this table.
var Choices = []Transform{
	shapeTransform,
	actionsTransform,
	constraintsTransform,
	descriptionsTransform,
	enumsTransform,
	namesTransform,
	compositionTransform,
}

// Transform is one dimension an interface chooses along: its key in a
// config and in the experiment schema, its values, and what each value
// does to the level's tools.
type Transform struct {
	// Key names the transform in a config and in the schema.
	Key string
	// Values are the transform's values, default first: the schema's
	// enum.
	Values []string
	// Doc says in a line what the transform chooses.
	Doc string
	// field is the transform's value in a Transforms.
	field   func(*Transforms) *string
	options []option
}

// option is one value of a transform and what it does. Every hook is
// optional: a value without one leaves the tool as the level has it.
type option struct {
	value string
	// rename is the interface's name of a level tool, from the server's
	// name, the tool's place in the level (from 0) and its level name.
	// Only names renames; Build names every tool before it reads a
	// schema, so that a clash is reported first.
	rename func(server string, i int, name string) string
	// rewrite changes one tool as the model will see it, in Choices
	// order: shape sees the level's schemas, enums the last word.
	rewrite func(*draft)
	// excludes are the choices of other transforms this value cannot
	// stand beside.
	excludes []exclusion
	// needsActions is set for a value that only rewrites tools with
	// actions, which no tool of the finest level has.
	needsActions bool
	// keep chooses the level's tools the interface offers, before any
	// is named or rewritten: a tool as it is, a tool with fewer actions,
	// or none (false).
	keep func(Tool) (Tool, bool, error)
	// gold is set for a value whose gold the harness derives anew
	// (composition): it may change a task's calls without changing a
	// tool.
	gold bool
}

// exclusion is a choice (key: value) another transform's value cannot
// stand beside, and the message that says so.
type exclusion struct {
	key, value, msg string
}

// draft is one tool as the transforms rewrite it in turn: the schema and
// description the model will read, and how its calls map back.
type draft struct {
	sh *shaped
	// level is the level's tool.
	level Tool
	// schema is the tool's input schema so far; actions are each level
	// action's own argument schema, as the transforms so far left them.
	schema  obj
	actions []obj
	desc    string
}

// newTransform makes a transform of its options, default first.
func newTransform(key, doc string, field func(*Transforms) *string, opts ...option) Transform {
	c := Transform{Key: key, Doc: doc, field: field, options: opts}
	for _, o := range opts {
		c.Values = append(c.Values, o.value)
	}
	return c
}

// value is the transform's value in t, its default when unset.
func (c Transform) value(t Transforms) string {
	if v := *c.field(&t); v != "" {
		return v
	}
	return c.Values[0]
}

// option is what the transform's value in t does; the zero option, which
// changes nothing, for a value Check refuses.
func (c Transform) option(t Transforms) option {
	v := c.value(t)
	if i := slices.IndexFunc(c.options, func(o option) bool { return o.value == v }); i >= 0 {
		return c.options[i]
	}
	return option{}
}

// Get is the value of the transform key, its default when unset.
func (t Transforms) Get(key string) string {
	for _, c := range Choices {
		if c.Key == key {
			return c.value(t)
		}
	}
	return ""
}

// Normal is t with every default value cleared, so that equal choices
// compare equal.
func (t Transforms) Normal() Transforms {
	for _, c := range Choices {
		if p := c.field(&t); *p == c.Values[0] {
			*p = ""
		}
	}
	return t
}

// Changes lists the transforms away from the defaults as key=value, in
// Choices order.
func (t Transforms) Changes() []string {
	var out []string
	for _, c := range Choices {
		if v := *c.field(&t); v != "" && v != c.Values[0] {
			out = append(out, c.Key+"="+v)
		}
	}
	return out
}

// Check says which transform values are unknown and which choices conflict.
// Each problem names its key, so that a config can place it.
func (t Transforms) Check() []Problem {
	var out []Problem
	for _, c := range Choices {
		if v := *c.field(&t); v != "" && !slices.Contains(c.Values, v) {
			out = append(out, Problem{c.Key, fmt.Sprintf("found %s %q; expected one of %s", c.Key, v, strings.Join(c.Values, ", "))})
		}
	}
	for _, c := range Choices {
		for _, ex := range c.option(t).excludes {
			if t.Get(ex.key) == ex.value {
				out = append(out, Problem{c.Key, ex.msg})
			}
		}
	}
	return out
}

// Check says what is wrong with the spec's transforms (Transforms.Check),
// and which of them would change nothing at its level: L4 has one tool
// per operation, so no tool there has actions.
func (s Spec) Check() []Problem {
	out := s.Transforms.Check()
	if s.Level != level.L4 {
		return out
	}
	for _, c := range Choices {
		if c.option(s.Transforms).needsActions {
			out = append(out, Problem{c.Key, fmt.Sprintf("found %s: %s at L4, where no tool has actions (one tool per operation); expected it at L3, L2 or L1, or no %s key", c.Key, c.value(s.Transforms), c.Key)})
		}
	}
	return out
}
