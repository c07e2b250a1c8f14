package surface

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// Tool is one tool of a level: what the level lists, and for a tool that
// offers several operations behind an "action" argument, each action's
// own argument schema.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema as the level lists it: for a
	// tool with actions, the action enum beside the union of the actions'
	// arguments.
	InputSchema []byte
	// Actions are the operations the action argument chooses, in order;
	// none for a tool of one operation.
	Actions []Action
}

// Action is one operation of a tool with an action argument.
type Action struct {
	Name, Description string
	// Schema is the JSON Schema of the action's arguments (without the
	// action itself).
	Schema []byte
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
	names, err := toolNames(t.Get("names"), server, tools)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", spec.Name, err)
	}
	for i, lt := range tools {
		sh := &shaped{name: names[i], source: lt.Name}
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
	if len(lt.Actions) > 1 {
		for _, a := range lt.Actions {
			sh.actions = append(sh.actions, a.Name)
		}
	}
	if t.Get("shape") == "grouped" {
		sh.groups = findGroups(flat)
		flat = sh.groupProps(flat)
		for i := range actions {
			actions[i] = sh.groupProps(actions[i])
		}
	}
	schema := flat
	if sh.actions != nil {
		switch t.Get("actions") {
		case "nested":
			sh.nested = true
			schema = nestedSchema(flat, lt.Actions, actions)
		case "oneof":
			schema = oneOfSchema(flat, lt.Actions, actions)
		}
	}
	desc := lt.Description
	if t.Get("constraints") == "schema" {
		walkProps(schema, func(p obj) obj { return p.set("description", unstated(p)) })
		schema = dropEmptyDescriptions(schema)
	}
	switch t.Get("descriptions") {
	case "terse":
		desc = firstSentence(desc)
		walkDescriptions(schema, firstSentence)
	case "none":
		desc = ""
		walkDescriptions(schema, func(string) string { return "" })
	}
	schema = dropEmptyDescriptions(schema)
	if t.Get("enums") == "described" {
		describeEnums(schema)
	}
	out := Tool{Name: sh.name, Description: desc, InputSchema: encode(schema)}
	for _, a := range lt.Actions {
		out.Actions = append(out.Actions, Action{Name: a.Name, Description: a.Description, Schema: a.Schema})
	}
	return out, nil
}

// nestedSchema is {"action": …, "<action>": {its arguments}, …}: the
// level's action argument, then one object per action.
func nestedSchema(flat obj, acts []Action, schemas []obj) obj {
	props := obj{}
	if a, ok := flat.getObj("properties").get("action"); ok {
		props = append(props, member{"action", cloneValue(a)})
	}
	for i, a := range acts {
		inner := obj{{"type", "object"}, {"description", fmt.Sprintf("Arguments of action %s, when the action is %s.", a.Name, a.Name)}}
		inner = append(inner, actionMembers(schemas[i])...)
		props = append(props, member{a.Name, inner})
	}
	return obj{{"type", "object"}, {"properties", props}, {"required", []any{"action"}}, {"additionalProperties", false}}
}

// oneOfSchema keeps the action argument at the top and gives each action
// a oneOf branch of its own arguments, the action fixed by const.
func oneOfSchema(flat obj, acts []Action, schemas []obj) obj {
	props := obj{}
	if a, ok := flat.getObj("properties").get("action"); ok {
		props = append(props, member{"action", cloneValue(a)})
	}
	branches := make([]any, len(acts))
	for i, a := range acts {
		bprops := obj{{"action", obj{{"const", a.Name}}}}
		bprops = append(bprops, schemas[i].getObj("properties").clone()...)
		req := append([]string{"action"}, stringsOf(mustGet(schemas[i], "required"))...)
		branches[i] = obj{{"type", "object"}, {"description", a.Description}, {"properties", bprops}, {"required", anyStrings(req)}, {"additionalProperties", false}}
	}
	return obj{{"type", "object"}, {"properties", props}, {"required", []any{"action"}}, {"oneOf", branches}}
}

func mustGet(o obj, k string) any {
	v, _ := o.get(k)
	return v
}

// actionMembers are the properties and required names of an action's
// schema, closed to other arguments.
func actionMembers(s obj) obj {
	out := obj{{"properties", s.getObj("properties").clone()}}
	if req := stringsOf(mustGet(s, "required")); len(req) > 0 {
		out = append(out, member{"required", anyStrings(req)})
	}
	return append(out, member{"additionalProperties", false})
}

// findGroups pairs min_X with max_X (and X_min with X_max) among the
// schema's arguments; X is the group's key unless an argument already
// has that name, then X_range. A pair whose key is taken twice is left
// flat.
func findGroups(s obj) []group {
	props := s.getObj("properties")
	has := func(k string) bool { _, ok := props.get(k); return ok }
	var out []group
	for _, m := range props {
		var x, max string
		switch {
		case strings.HasPrefix(m.key, "min_"):
			x = m.key[len("min_"):]
			max = "max_" + x
		case strings.HasSuffix(m.key, "_min"):
			x = m.key[:len(m.key)-len("_min")]
			max = x + "_max"
		default:
			continue
		}
		if x == "" || !has(max) {
			continue
		}
		key := x
		for _, k := range []string{x, x + "_range"} {
			key = k
			if !has(k) && !slices.ContainsFunc(out, func(g group) bool { return g.key == k }) {
				break
			}
			key = ""
		}
		if key != "" {
			out = append(out, group{key: key, min: m.key, max: max})
		}
	}
	return out
}

// groupProps replaces each group's pair of arguments in s (a tool's or an
// action's schema) by the group's object, where the first of the pair
// stood.
func (sh *shaped) groupProps(s obj) obj {
	s = s.clone()
	props := s.getObj("properties")
	if len(sh.groups) == 0 || props == nil {
		return s
	}
	req := stringsOf(mustGet(s, "required"))
	for _, g := range sh.groups {
		lo, hasLo := props.get(g.min)
		hi, hasHi := props.get(g.max)
		if !hasLo && !hasHi {
			continue
		}
		inner := obj{}
		var innerReq []string
		for _, p := range []struct {
			name, arg string
			schema    any
			ok        bool
		}{{"min", g.min, lo, hasLo}, {"max", g.max, hi, hasHi}} {
			if p.ok {
				inner = append(inner, member{p.name, p.schema})
				if slices.Contains(req, p.arg) {
					innerReq = append(innerReq, p.name)
				}
			}
		}
		gs := obj{{"type", "object"}, {"description", fmt.Sprintf("Range of %s: min, max or both.", strings.ReplaceAll(g.key, "_", " "))}, {"properties", inner}}
		if len(innerReq) > 0 {
			gs = append(gs, member{"required", anyStrings(innerReq)})
		}
		gs = append(gs, member{"additionalProperties", false})
		at := slices.IndexFunc(props, func(m member) bool { return m.key == g.min || m.key == g.max })
		props = props.remove(g.min).remove(g.max)
		props = slices.Insert(props, at, member{g.key, gs})
		if len(innerReq) > 0 {
			req = slices.DeleteFunc(req, func(r string) bool { return r == g.min || r == g.max })
			req = append(req, g.key)
		}
	}
	s = s.set("properties", props)
	if _, ok := s.get("required"); ok {
		s = s.set("required", anyStrings(req))
	}
	return s
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

// walkDescriptions rewrites every description in the schema.
func walkDescriptions(s obj, f func(string) string) {
	rewrite := func(o obj) obj {
		if d, ok := o.get("description"); ok {
			ds, _ := d.(string)
			o = o.set("description", f(ds))
		}
		return o
	}
	walkProps(s, rewrite)
	if branches, ok := mustGet(s, "oneOf").([]any); ok {
		for i, b := range branches {
			if bo, ok := b.(obj); ok {
				branches[i] = rewrite(bo)
			}
		}
	}
}

// dropEmptyDescriptions removes description keywords left empty, at any
// depth.
func dropEmptyDescriptions(s obj) obj {
	drop := func(o obj) obj {
		if d, ok := o.get("description"); ok && d == "" {
			return o.remove("description")
		}
		return o
	}
	walkProps(s, drop)
	if branches, ok := mustGet(s, "oneOf").([]any); ok {
		for i, b := range branches {
			if bo, ok := b.(obj); ok {
				branches[i] = drop(bo)
			}
		}
	}
	return s
}

// describeEnums moves every argument's enum (and an array's items' enum)
// into its description, but the action's, which says what a call does.
func describeEnums(s obj) {
	var visit func(o obj, top bool)
	visit = func(o obj, top bool) {
		props := o.getObj("properties")
		for i := range props {
			p, ok := props[i].val.(obj)
			if !ok {
				continue
			}
			if !(top && props[i].key == "action") {
				p = moveEnum(p, "One of: ")
				if items := p.getObj("items"); items != nil {
					if vals := stringsOf(mustGet(items, "enum")); len(vals) > 0 {
						p = p.set("items", items.remove("enum"))
						p = p.set("description", joinSentence(p.getString("description"), "Each item one of: "+strings.Join(vals, ", ")+"."))
					}
				}
			}
			visit(p, false)
			props[i].val = p
		}
		if branches, ok := mustGet(o, "oneOf").([]any); ok {
			for _, b := range branches {
				if bo, ok := b.(obj); ok {
					visit(bo, top)
				}
			}
		}
	}
	visit(s, true)
}

func moveEnum(p obj, lead string) obj {
	v, ok := p.get("enum")
	list, isList := v.([]any)
	if !ok || !isList {
		return p // not an enum a description can list: a server's own schema may hold anything
	}
	var vals []string
	for _, e := range list {
		vals = append(vals, string(encode(e)))
	}
	for i, e := range vals {
		vals[i] = strings.Trim(e, `"`)
	}
	return p.remove("enum").set("description", joinSentence(p.getString("description"), lead+strings.Join(vals, ", ")+"."))
}

func joinSentence(desc, s string) string {
	if desc == "" {
		return s
	}
	return desc + " " + s
}

// sentenceEnd is a full stop (or ? or !) that ends a sentence: followed by
// a space and a capital letter, a digit or an opening bracket.
var sentenceEnd = regexp.MustCompile(`[.?!]\s+[A-Z0-9(]`)

// sentences splits a description into its sentences, each with its stop.
func sentences(s string) []string {
	s = strings.TrimSpace(s)
	var out []string
	for s != "" {
		loc := sentenceEnd.FindStringIndex(s)
		if loc == nil {
			out = append(out, s)
			break
		}
		out = append(out, strings.TrimSpace(s[:loc[0]+1]))
		s = strings.TrimSpace(s[loc[0]+1:])
	}
	return out
}

func firstSentence(s string) string {
	if ss := sentences(s); len(ss) > 0 {
		return ss[0]
	}
	return ""
}
