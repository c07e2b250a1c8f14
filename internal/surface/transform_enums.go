package surface

import "strings"

// enumsTransform: inline (the enum keyword) or described (the allowed
// values listed in the argument's description instead; the action's enum
// is kept).
var enumsTransform = newTransform("enums", "allowed values as an enum keyword, or listed in the description",
	func(t *Transforms) *string { return &t.Enums },
	option{value: "inline"},
	option{value: "described", rewrite: func(d *draft) { describeEnums(d.schema) }, excludes: []exclusion{{"descriptions", "none",
		"found enums: described beside descriptions: none, which leaves no description to list the values in; expected enums: inline, or descriptions full or terse"}}},
)

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
