package surface

import (
	"regexp"
	"strings"
)

// descriptionsTransform: full (as written), terse (the first sentence
// of each tool's and argument's description) or none. Each leaves no
// empty description keyword behind, full included.
var descriptionsTransform = newTransform("descriptions", "tool and argument descriptions: as written, first sentence, none",
	func(t *Transforms) *string { return &t.Descriptions },
	option{value: "full", rewrite: func(d *draft) { d.schema = dropEmptyDescriptions(d.schema) }},
	option{value: "terse", rewrite: rewriteDescriptions(firstSentence)},
	option{value: "none", rewrite: rewriteDescriptions(func(string) string { return "" })},
)

// rewriteDescriptions is rewrite with f applied to the tool's and every
// argument's description.
func rewriteDescriptions(f func(string) string) func(*draft) {
	return func(d *draft) {
		d.desc = f(d.desc)
		walkDescriptions(d.schema, f)
		d.schema = dropEmptyDescriptions(d.schema)
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
