// Package regroup builds the coarser granularity levels of any MCP
// server from its tools: L4 is the server as published, L3 a few task
// tools, L2 a query tool and a control tool, L1 one tool. A coarse tool
// takes an "action" naming the source tool it stands for and the union of
// the grouped tools' arguments, documented as the generated levels
// document theirs; each call is checked against the source tool's own
// schema and forwarded, and the source's result comes back unchanged.
//
// Which tools share a coarse tool is a Groups value: a groups.yaml the
// user wrote (LoadGroups) or the deterministic derivation (Derive).
// Expected calls written against the source's tools map onto a level the
// way spec gold does (MapCall), and back (Unmap) for scoring.
package regroup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgranite/granite/internal/combine"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// Grouping is a server's tools grouped at every level: the tools as
// it lists them at L4, and coarser tools of them at L3 to L1.
type Grouping struct {
	// Source are the tools as the server lists them, compiled.
	Source []toolsrc.Tool
	Levels map[level.Level][]*Coarse
	byName map[string]*toolsrc.Tool
}

// Coarse is one tool of a level: one source tool (published as it is, or
// renamed as a group of one), or several chosen by an "action" argument.
type Coarse struct {
	Name        string
	Description string
	// InputSchema is what clients see: for a tool with an action, the
	// action enum and the union of its actions' arguments.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  map[string]any
	Actions      []*Action
	// union maps each argument name of the coarse schema (but "action")
	// to the actions that use it.
	union map[string][]string
	// open is set when every grouped schema allows arguments it does not
	// name, so that an argument outside the union is the source's to judge.
	open bool
}

// Action is one source tool inside a coarse tool.
type Action struct {
	Tool *toolsrc.Tool
	// toSource maps the coarse name of each argument to the source
	// tool's name for it; they differ only where a name conflict was
	// resolved by prefixing (see Build).
	toSource map[string]string
	toCoarse map[string]string
}

// HasAction reports whether the tool takes an "action" argument.
func (c *Coarse) HasAction() bool { return len(c.Actions) > 1 }

// Action returns the action a name picks, or nil.
func (c *Coarse) Action(name string) *Action {
	for _, a := range c.Actions {
		if a.Tool.Name == name {
			return a
		}
	}
	return nil
}

// ActionNames are the coarse tool's action names, in group order.
func (c *Coarse) ActionNames() []string {
	out := make([]string, len(c.Actions))
	for i, a := range c.Actions {
		out[i] = a.Tool.Name
	}
	return out
}

// Build compiles the tools and builds every level from the groups.
func Build(tools []toolsrc.Tool, g *Groups) (*Grouping, error) {
	iface := &Grouping{Source: append([]toolsrc.Tool(nil), tools...), Levels: map[level.Level][]*Coarse{}, byName: map[string]*toolsrc.Tool{}}
	for i := range iface.Source {
		t := &iface.Source[i]
		if err := t.Compile(); err != nil {
			return nil, err
		}
		if iface.byName[t.Name] != nil {
			return nil, fmt.Errorf("the server lists tool %q twice", t.Name)
		}
		iface.byName[t.Name] = t
	}
	if err := g.Check(tools); err != nil {
		return nil, err
	}
	for _, t := range iface.Source {
		iface.Levels[level.L4] = append(iface.Levels[level.L4], published(iface.byName[t.Name]))
	}
	for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
		for _, grp := range g.Level(lv) {
			c, err := iface.coarse(grp)
			if err != nil {
				return nil, fmt.Errorf("%s tool %q: %w", lv, grp.Name, err)
			}
			iface.Levels[lv] = append(iface.Levels[lv], c)
		}
	}
	return iface, nil
}

// Tool returns a source tool by name, or nil.
func (gr *Grouping) Tool(name string) *toolsrc.Tool { return gr.byName[name] }

// Find returns a level's tool by name, or nil.
func (gr *Grouping) Find(lv level.Level, name string) *Coarse {
	for _, c := range gr.Levels[lv] {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// published is a source tool as the server publishes it.
func published(t *toolsrc.Tool) *Coarse {
	return &Coarse{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: t.Annotations, Actions: []*Action{identity(t)}, union: map[string][]string{}}
}

func identity(t *toolsrc.Tool) *Action {
	a := &Action{Tool: t, toSource: map[string]string{}, toCoarse: map[string]string{}}
	for _, p := range propsOf(t.InputSchema).names {
		a.toSource[p], a.toCoarse[p] = p, p
	}
	return a
}

// schemaDoc is the part of an input schema a union needs.
type schemaDoc struct {
	names    []string // property names, in the schema's order
	props    map[string]json.RawMessage
	required []string
	open     bool // additionalProperties is not false
	defs     map[string]map[string]json.RawMessage
}

// propsOf reads a schema's properties in document order, so that the
// union lists them as the server does.
func propsOf(schema json.RawMessage) schemaDoc {
	d := schemaDoc{props: map[string]json.RawMessage{}, open: true, defs: map[string]map[string]json.RawMessage{}}
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return d
	}
	_ = json.Unmarshal(top["required"], &d.required)
	var ap any
	if json.Unmarshal(top["additionalProperties"], &ap) == nil && ap == false {
		d.open = false
	}
	for _, k := range []string{"$defs", "definitions"} {
		var defs map[string]json.RawMessage
		if json.Unmarshal(top[k], &defs) == nil && len(defs) > 0 {
			d.defs[k] = defs
		}
	}
	raw := top["properties"]
	if len(raw) == 0 {
		return d
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return d
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return d
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return d
		}
		name := tok.(string)
		d.names = append(d.names, name)
		d.props[name] = v
	}
	return d
}

// shape is a property schema without the words that document it, so that
// two tools describing the same argument differently still share it.
func shape(p json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(p, &m) != nil {
		return string(p)
	}
	delete(m, "description")
	delete(m, "title")
	b, _ := json.Marshal(m) // map keys sorted: a canonical form
	return string(b)
}

// coarse builds a level's tool from a group.
//
// An argument name the grouped tools share with the same shape is one
// argument, its descriptions joined. A name they share with different
// shapes is never merged: each tool using it gets its own argument,
// <tool>_<name> (with _2, _3... appended while that is taken), and the
// tool description says which is whose.
func (gr *Grouping) coarse(g Group) (*Coarse, error) {
	var members []*toolsrc.Tool
	for _, n := range g.Tools {
		members = append(members, gr.byName[n])
	}
	if len(members) == 1 {
		// A group of one is the source tool under the group's name, with
		// no action, as a generated level's one-operation tool is.
		t := members[0]
		c := published(t)
		c.Name = g.Name
		if g.Description != "" {
			c.Description = strings.TrimSpace(g.Description + "\n\n" + t.Description)
		}
		return c, nil
	}
	c := &Coarse{Name: g.Name, union: map[string][]string{}, open: true}
	docs := make([]schemaDoc, len(members))
	shapes := map[string]map[string]bool{}
	for i, t := range members {
		docs[i] = propsOf(t.InputSchema)
		c.open = c.open && docs[i].open
		for _, n := range docs[i].names {
			if shapes[n] == nil {
				shapes[n] = map[string]bool{}
			}
			shapes[n][shape(docs[i].props[n])] = true
		}
	}
	taken := map[string]bool{"action": true}
	for n, s := range shapes {
		if len(s) == 1 {
			taken[n] = true
		}
	}
	type arg struct {
		name   string
		schema map[string]any
		descs  []string
		users  []string
	}
	var order []string
	args := map[string]*arg{}
	var renames []string
	defs := map[string]map[string]json.RawMessage{}
	for i, t := range members {
		a := &Action{Tool: t, toSource: map[string]string{}, toCoarse: map[string]string{}}
		for k, ds := range docs[i].defs {
			if defs[k] == nil {
				defs[k] = map[string]json.RawMessage{}
			}
			for name, d := range ds {
				if prev, ok := defs[k][name]; ok && !bytes.Equal(prev, d) {
					return nil, fmt.Errorf("tools of the group define %s/%q differently; a coarse tool cannot hold both: group them apart", k, name)
				}
				defs[k][name] = d
			}
		}
		for _, n := range docs[i].names {
			name := n
			if n == "action" || len(shapes[n]) > 1 {
				// A conflict (or the name the coarse tool needs itself).
				name = t.Name + "_" + n
				for k := 2; taken[name]; k++ {
					name = fmt.Sprintf("%s_%s_%d", t.Name, n, k)
				}
				taken[name] = true
				renames = append(renames, fmt.Sprintf("%s is %s's %s", name, t.Name, n))
			}
			a.toSource[name], a.toCoarse[n] = n, name
			var schema map[string]any
			if err := json.Unmarshal(docs[i].props[n], &schema); err != nil {
				return nil, fmt.Errorf("tool %q: property %q: %w", t.Name, n, err)
			}
			ag := args[name]
			if ag == nil {
				ag = &arg{name: name, schema: schema}
				args[name] = ag
				order = append(order, name)
			}
			if d, _ := schema["description"].(string); d != "" && !slices.Contains(ag.descs, strings.TrimSpace(d)) {
				ag.descs = append(ag.descs, strings.TrimSpace(d))
			}
			ag.users = append(ag.users, t.Name)
			c.union[name] = append(c.union[name], t.Name)
		}
		c.Actions = append(c.Actions, a)
	}
	var what []string
	for i, a := range c.Actions {
		what = append(what, a.Tool.Name+": "+firstSentence(a.Tool.Description)+usage(docs[i], a))
	}
	props := speclang.Object{}.Set("action", map[string]any{"type": "string", "enum": c.ActionNames(),
		"description": "What to do. " + strings.Join(what, " ")})
	for _, n := range order {
		ag := args[n]
		desc := strings.Join(ag.descs, " / ")
		if desc != "" && !strings.HasSuffix(desc, ".") {
			desc += "."
		}
		ag.schema["description"] = combine.UsedBy(desc, ag.users)
		props = props.Set(n, ag.schema)
	}
	schema := speclang.Object{{K: "type", V: "object"}, {K: "properties", V: props}, {K: "required", V: []string{"action"}}}
	if !c.open {
		schema = schema.Set("additionalProperties", false)
	}
	for _, k := range []string{"$defs", "definitions"} {
		if len(defs[k]) > 0 {
			schema = schema.Set(k, defs[k])
		}
	}
	b, err := speclang.Marshal(schema)
	if err != nil {
		return nil, err
	}
	c.InputSchema = b
	c.Description = strings.TrimSpace(g.Description)
	if c.Description == "" {
		c.Description = "Covers " + strings.Join(c.ActionNames(), ", ") + "."
	}
	c.Description += " Choose the operation with action; each action takes only its own arguments (see action)."
	if len(renames) > 0 {
		sort.Strings(renames)
		c.Description += " Arguments that grouped tools name alike but define differently are kept apart under the tool's name: " + strings.Join(renames, "; ") + "."
	}
	c.Annotations = combinedHints(members)
	return c, nil
}

// usage states an action's arguments, in coarse names, as generated
// levels do.
func usage(d schemaDoc, a *Action) string {
	var req, opt []string
	for _, n := range d.names {
		if slices.Contains(d.required, n) {
			req = append(req, a.toCoarse[n])
		} else {
			opt = append(opt, a.toCoarse[n])
		}
	}
	return combine.ActionUsage(req, opt)
}

// firstSentence is a description's first sentence, without its full stop,
// or the tool's whole first line when no sentence ends sooner.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return "(no description)"
	}
	return s
}

// combinedHints are a coarse tool's annotations: read-only only when every
// action is declared read-only, destructive and open-world when any action
// may be (the protocol's defaults for a hint left out count), idempotent
// only when every action is declared so.
func combinedHints(tools []*toolsrc.Tool) map[string]any {
	readOnly, destructive, idempotent, openWorld := true, false, true, false
	for _, t := range tools {
		ro := hint(t, "readOnlyHint", false)
		readOnly = readOnly && ro
		destructive = destructive || !ro && hint(t, "destructiveHint", true)
		idempotent = idempotent && hint(t, "idempotentHint", false)
		openWorld = openWorld || hint(t, "openWorldHint", true)
	}
	return map[string]any{"readOnlyHint": readOnly, "destructiveHint": destructive, "idempotentHint": idempotent, "openWorldHint": openWorld}
}

func hint(t *toolsrc.Tool, name string, def bool) bool {
	if v, ok := t.Annotations[name].(bool); ok {
		return v
	}
	return def
}
