package surface

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// Tool is one tool of a level: what the level lists, and for a tool that
// offers several operations behind an "action" argument, each action's
// own argument schema.
type Tool struct {
	Name        string
	Description string
	// Composite says what kind of composite operation a tool of one
	// operation runs ("preset", "workflow"); "" is an atomic one.
	Composite string
	// InputSchema is the tool's JSON Schema as the level lists it: for a
	// tool with actions, the action enum beside the union of the actions'
	// arguments.
	InputSchema json.RawMessage
	// Actions are the operations the action argument chooses, in order;
	// none for a tool of one operation.
	Actions []Action
}

// Action is one operation of a tool with an action argument.
type Action struct {
	Name, Description string
	// Schema is the JSON Schema of the action's arguments (without the
	// action itself).
	Schema json.RawMessage
	// Composite is as a Tool's.
	Composite string
}

// Interface is a level's tools after a Spec's transforms: the tools a
// model is shown, and what Decode and Encode need to turn the interface's
// calls into the level's and back.
type Interface struct {
	Spec Spec
	// Server names the server the tools belong to (a domain, a regrouped
	// source), which names: prefixed puts first.
	Server string
	// Tools are the tools as the model sees them, in the level's order;
	// Actions holds each one's level actions.
	Tools []Tool
	// Level are the level's tools the interface was built from.
	Level []Tool
	// shaped says, per tool of Tools, how its calls map onto the level's.
	shaped []*shaped
	byName map[string]*shaped
	// bySource finds a tool by its level name.
	bySource map[string]*shaped
}

// shaped is how one interface tool maps onto its level tool.
type shaped struct {
	name, source string
	// actions are the level tool's actions when it has several; nested
	// is set when the interface wants each action's arguments inside an
	// object named after it.
	actions []string
	nested  bool
	// groups are the min/max pairs given as one object.
	groups []group
	// dropped are the level tool's actions the interface does not offer.
	dropped []string
}

// group is a min_X/max_X (or X_min/X_max) pair of arguments given as one
// object argument key with members min and max.
type group struct {
	key, min, max string
}

// Build applies spec's transforms to a level's tools, which belong to
// server. It fails when a transform cannot apply (two tools would get one
// name), a schema is not a JSON object, or a schema nests deeper or
// lists more enum values than schemacheck's bounds (MaxSchemaDepth,
// MaxEnumValues), naming the tool and where in its schema.
func Build(spec Spec, server string, tools []Tool) (*Interface, error) {
	if probs := spec.Check(); len(probs) > 0 {
		return nil, fmt.Errorf("interface %s: %s", spec.Name, probs[0].Msg)
	}
	t := spec.Transforms
	iface := &Interface{Spec: spec, Server: server, Level: tools, byName: map[string]*shaped{}, bySource: map[string]*shaped{}}
	tools, err := offered(t, tools)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", spec.Name, err)
	}
	names, err := toolNames(namesTransform.value(t), server, tools)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", spec.Name, err)
	}
	for i, lt := range tools {
		sh := &shaped{name: names[i], source: lt.Name, dropped: dropped(iface.Level, lt)}
		out, err := sh.build(t, lt)
		if err != nil {
			return nil, fmt.Errorf("interface %s: tool %s: %w", spec.Name, lt.Name, err)
		}
		iface.Tools = append(iface.Tools, out)
		iface.shaped = append(iface.shaped, sh)
		iface.byName[sh.name] = sh
		iface.bySource[sh.source] = sh
	}
	return iface, nil
}

// build makes the tool the model sees from the level's tool lt. Its
// schemas must nest within schemacheck's bounds (CheckNesting), in which
// every transform and Measure cost time linear in a schema's size; their
// length is the source's to bound, as a coarse tool's schema joins many
// tools' arguments.
func (sh *shaped) build(t Transforms, lt Tool) (Tool, error) {
	if err := schemacheck.CheckNesting(lt.InputSchema); err != nil {
		return Tool{}, fmt.Errorf("input schema %w", err)
	}
	flat, err := parseObj(lt.InputSchema)
	if err != nil {
		return Tool{}, fmt.Errorf("input schema: %w", err)
	}
	actions := make([]obj, len(lt.Actions))
	for i, a := range lt.Actions {
		if err := schemacheck.CheckNesting(a.Schema); err != nil {
			return Tool{}, fmt.Errorf("action %s: schema %w", a.Name, err)
		}
		if actions[i], err = parseObj(a.Schema); err != nil {
			return Tool{}, fmt.Errorf("action %s: schema: %w", a.Name, err)
		}
	}
	if len(lt.Actions) > 1 || len(sh.dropped) > 0 {
		for _, a := range lt.Actions {
			sh.actions = append(sh.actions, a.Name)
		}
	}
	// Each transform rewrites what the ones before it left, in Choices
	// order: actions builds on shape's grouped ranges, enums describes
	// what descriptions kept.
	d := &draft{sh: sh, level: lt, schema: flat, actions: actions, desc: lt.Description}
	for _, c := range Choices {
		if rewrite := c.option(t).rewrite; rewrite != nil {
			rewrite(d)
		}
	}
	out := Tool{Name: sh.name, Description: d.desc, InputSchema: encode(d.schema), Composite: lt.Composite}
	for _, a := range lt.Actions {
		out.Actions = append(out.Actions, Action{Name: a.Name, Description: a.Description, Schema: a.Schema, Composite: a.Composite})
	}
	return out, nil
}

// offered are the level's tools an interface offers, as each transform's
// keep chooses them, in the level's order.
func offered(t Transforms, tools []Tool) ([]Tool, error) {
	out := tools
	for _, c := range Choices {
		keep := c.option(t).keep
		if keep == nil {
			continue
		}
		var kept []Tool
		for _, lt := range out {
			k, ok, err := keep(lt)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", lt.Name, err)
			}
			if ok {
				kept = append(kept, k)
			}
		}
		out = kept
	}
	return out, nil
}

// dropped are the actions of the level's tool named as lt that the
// interface's lt does not offer: calls of them are refused.
func dropped(level []Tool, lt Tool) []string {
	var out []string
	for _, full := range level {
		if full.Name != lt.Name {
			continue
		}
		for _, a := range full.Actions {
			if !slices.ContainsFunc(lt.Actions, func(b Action) bool { return b.Name == a.Name }) {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// walkProps calls f on every argument's schema at any depth (properties,
// items, oneOf branches' properties) and keeps what it returns.
func walkProps(s obj, f func(obj) obj) {
	if props := s.getObj("properties"); props != nil {
		for i := range props {
			if p, ok := props[i].val.(obj); ok {
				walkProps(p, f)
				props[i].val = f(p)
			}
		}
	}
	if items := s.getObj("items"); items != nil {
		walkProps(items, f)
	}
	if branches, ok := mustGet(s, "oneOf").([]any); ok {
		for _, b := range branches {
			if bo, ok := b.(obj); ok {
				walkProps(bo, f)
			}
		}
	}
}
