package scenarios

import (
	"math"
	"strconv"
	"strings"
)

// Constraint kinds a refusal probes, as Assertion.Probes names them.
const (
	ProbeType       = "type"
	ProbeEnum       = "enum"
	ProbePattern    = "pattern"
	ProbeFormat     = "format"
	ProbeMinimum    = "minimum"
	ProbeMaximum    = "maximum"
	ProbeMultipleOf = "multipleOf"
	ProbeMinLength  = "minLength"
	ProbeMaxLength  = "maxLength"
	ProbeMinItems   = "minItems"
	ProbeMaxItems   = "maxItems"
	ProbeUnique     = "uniqueItems"
	ProbeRequired   = "required"
	ProbeUnknown    = "additionalProperties"
)

// probe is one way to break a tool's arguments: the constraint it probes,
// the argument, the bad value (absent for a missing argument) and why the
// value breaks it, in words.
type probe struct {
	kind, arg string
	value     any
	remove    bool
	why       string
}

// badFormats are values that break each format, as a user might mistype.
var badFormats = map[string]string{
	"date-time": "next Tuesday morning",
	"date":      "14/03/2026",
	"time":      "half past nine",
	"email":     "alice.martin at example.com",
	"idn-email": "alice.martin at example.com",
	"uri":       "example dot com/docs",
	"url":       "example dot com/docs",
	"iri":       "example dot com/docs",
	"uuid":      "3f2b8c1e-not-a-uuid",
	"ipv4":      "192.168.1.300",
	"ipv6":      "2001:db8::zz",
	"hostname":  "not a host!",
	"duration":  "fifteen minutes",
}

// probesOf lists values that break one property's constraints; good is a
// value the property accepts, which the bad ones are made from.
func (d schemaDoc) probesOf(name string, s map[string]any, good any) []probe {
	s = d.resolve(s)
	// A nullable property's constraints are its non-null alternative's.
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && !isNull(d.resolve(m)) {
					s = d.resolve(m)
					break
				}
			}
		}
	}
	var out []probe
	add := func(kind string, v any, why string) {
		out = append(out, probe{kind: kind, arg: name, value: v, why: why})
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		if _, isStr := e[0].(string); isStr {
			add(ProbeEnum, "not_a_listed_value", "a value outside the enum")
		} else if _, isNum := e[0].(float64); isNum {
			add(ProbeEnum, 987654.0, "a number outside the enum")
		}
	}
	ts := types(s)
	if len(ts) == 1 {
		switch ts[0] {
		case "string":
			add(ProbeType, 12345.0, "a number where a string is expected")
		case "integer", "number":
			add(ProbeType, "ten", "a string where a number is expected")
		case "boolean":
			add(ProbeType, "yes", "a string where a boolean is expected")
		case "object":
			add(ProbeType, "{}", "a string where an object is expected")
		case "array":
			add(ProbeType, "[]", "a string where an array is expected")
		}
	}
	str, _ := good.(string)
	if p, ok := s["pattern"].(string); ok {
		for _, c := range []string{str + " !", "!" + str, "", "~~"} {
			if !matches(p, c) {
				add(ProbePattern, c, "a string against the pattern "+p)
				break
			}
		}
	}
	if f, ok := s["format"].(string); ok && badFormats[f] != "" {
		add(ProbeFormat, badFormats[f], "a string that is not a valid "+f)
	}
	if m, ok := num(s["minLength"]); ok && m > 0 {
		add(ProbeMinLength, strings.Repeat("a", int(m)-1), "a string shorter than minLength")
	}
	if m, ok := num(s["maxLength"]); ok {
		long := str
		for len([]rune(long)) <= int(m) {
			long += "-padding"
		}
		add(ProbeMaxLength, long, "a string longer than maxLength")
	}
	if m, ok := num(s["minimum"]); ok {
		add(ProbeMinimum, m-1, "a number below the minimum")
	} else if m, ok := num(s["exclusiveMinimum"]); ok {
		add(ProbeMinimum, m, "a number at the exclusive minimum")
	}
	if m, ok := num(s["maximum"]); ok {
		add(ProbeMaximum, m+1, "a number above the maximum")
	} else if m, ok := num(s["exclusiveMaximum"]); ok {
		add(ProbeMaximum, m, "a number at the exclusive maximum")
	}
	if m, ok := num(s["multipleOf"]); ok && m > 0 {
		x, _ := good.(float64)
		if v := x + m/2; math.Mod(v, m) != 0 {
			add(ProbeMultipleOf, v, "a number that is not a multiple of "+trimFloat(m))
		}
	}
	items, _ := good.([]any)
	if m, ok := num(s["minItems"]); ok && m > 0 {
		short := append([]any{}, items...)
		if len(short) >= int(m) {
			short = short[:int(m)-1]
		}
		add(ProbeMinItems, short, "a list with fewer items than minItems")
	}
	if m, ok := num(s["maxItems"]); ok && len(items) > 0 {
		long := append([]any{}, items...)
		for len(long) <= int(m) {
			long = append(long, items...)
		}
		add(ProbeMaxItems, long, "a list with more items than maxItems")
	}
	if s["uniqueItems"] == true && len(items) > 0 {
		add(ProbeUnique, append(append([]any{}, items...), items[0]), "a list with a repeated item")
	}
	return out
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
