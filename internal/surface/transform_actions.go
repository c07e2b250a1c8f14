package surface

import "fmt"

// actionsTransform: how a tool with several operations takes its action
// and arguments: enum (an action enum beside the union of every action's
// arguments, as the level lists it), nested ({"action": "x", "x": {…}},
// which Decode lifts back) or oneof (a JSON Schema oneOf with one branch
// per action). A tool of one operation keeps its schema.
var actionsTransform = newTransform("actions", "how a tool with several operations takes its action and arguments",
	func(t *Transforms) *string { return &t.Actions },
	option{value: "enum"},
	option{value: "nested", needsActions: true, rewrite: withActions(func(d *draft) {
		d.sh.nested = true
		d.schema = nestedSchema(d.schema, d.level.Actions, d.actions)
	})},
	option{value: "oneof", needsActions: true, rewrite: withActions(func(d *draft) {
		d.schema = oneOfSchema(d.schema, d.level.Actions, d.actions)
	})},
)

// withActions is rewrite for tools with several actions only.
func withActions(rewrite func(*draft)) func(*draft) {
	return func(d *draft) {
		if d.sh.actions != nil {
			rewrite(d)
		}
	}
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

// actionMembers are the properties and required names of an action's
// schema, closed to other arguments.
func actionMembers(s obj) obj {
	out := obj{{"properties", s.getObj("properties").clone()}}
	if req := stringsOf(mustGet(s, "required")); len(req) > 0 {
		out = append(out, member{"required", anyStrings(req)})
	}
	return append(out, member{"additionalProperties", false})
}
