package score

import "encoding/json"

// ToolArgs is what comparing a tool's arguments needs from its input
// schema: the top-level arguments chosen from a fixed set (enum or
// const), which compare exactly in ArgAcc, and the declared defaults.
type ToolArgs struct {
	Exact    map[string]bool
	Defaults map[string]any
}

// ArgsOf reads a tool's argument rules from its input schema; a schema
// that is not a JSON object has none.
func ArgsOf(schema json.RawMessage) ToolArgs {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	out := ToolArgs{Exact: map[string]bool{}, Defaults: map[string]any{}}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		_, enum := p["enum"]
		_, konst := p["const"]
		out.Exact[name] = enum || konst
		if d, ok := p["default"]; ok {
			out.Defaults[name] = d
		}
	}
	return out
}

// Same reports whether two argument objects are the same call's: the same
// keys, each with the same value by SameValue's loose rules, where an
// argument given its schema default counts as left out (the tool behaves
// the same either way).
func (ta ToolArgs) Same(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for _, m := range []map[string]any{g, w} {
		for k, v := range m {
			if d, ok := ta.Defaults[k]; ok && SameValue(v, d, true) {
				delete(m, k)
			}
		}
	}
	return SameValue(g, w, false)
}
