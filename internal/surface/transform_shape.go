package surface

import (
	"fmt"
	"slices"
	"strings"
)

// shapeTransform: flat, or grouped (each min_X and max_X pair of
// arguments as one object X {min, max}, which Decode flattens back).
var shapeTransform = newTransform("shape", "min_X and max_X arguments as one object X {min, max}",
	func(t *Transforms) *string { return &t.Shape },
	option{value: "flat"},
	option{value: "grouped", rewrite: groupRanges},
)

// groupRanges groups the tool's ranges, in its schema and in each
// action's, so that actions nests or branches them grouped.
func groupRanges(d *draft) {
	d.sh.groups = findGroups(d.schema)
	d.schema = d.sh.groupProps(d.schema)
	for i := range d.actions {
		d.actions[i] = d.sh.groupProps(d.actions[i])
	}
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
