// Package scenarios synthesizes evaluation scenarios from tool
// specifications. This file derives argument values from JSON Schemas:
// the smallest valid value of a schema, and values a schema refuses.
package scenarios

import (
	"fmt"
	"math"
	"regexp/syntax"
	"sort"
	"strings"
)

// schemaDoc is a JSON Schema document with its root, for local $refs.
type schemaDoc struct {
	root map[string]any
}

// resolve follows a local $ref (#/$defs/x, #/definitions/x).
func (d schemaDoc) resolve(s map[string]any) map[string]any {
	for i := 0; i < 16; i++ {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

// types lists a schema's types ("type" may be a string or a list).
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	if _, ok := s["properties"]; ok {
		return []string{"object"}
	}
	if _, ok := s["items"]; ok {
		return []string{"array"}
	}
	if _, ok := s["enum"]; ok {
		return nil
	}
	return nil
}

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// valid returns a value the schema accepts: the first enum value, a
// const, a string matching the pattern and format, a number in range, an
// object with its required properties (and, with all, its optional ones
// too), an array of the minimum length.
func (d schemaDoc) valid(s map[string]any, all bool, depth int) any {
	s = d.resolve(s)
	if depth > 8 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && !isNull(d.resolve(m)) {
					return d.valid(m, all, depth+1)
				}
			}
		}
	}
	if parts, ok := s["allOf"].([]any); ok && len(parts) > 0 {
		merged := map[string]any{}
		for k, v := range s {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, p := range parts {
			if m, ok := p.(map[string]any); ok {
				mergeSchema(merged, d.resolve(m))
			}
		}
		return d.valid(merged, all, depth+1)
	}
	ts := types(s)
	t := "string"
	if len(ts) > 0 {
		t = ts[0]
		if t == "null" && len(ts) > 1 {
			t = ts[1]
		}
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		for _, r := range asList(s["required"]) {
			req[r] = true
		}
		for _, name := range sortedKeys(props) {
			if !req[name] && !all {
				continue
			}
			if m, ok := props[name].(map[string]any); ok {
				out[name] = d.valid(m, all && depth < 2, depth+1)
			}
		}
		return out
	case "array":
		n := 0
		if m, ok := num(s["minItems"]); ok {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for range n {
			out = append(out, d.valid(items, all, depth+1))
		}
		return out
	case "integer", "number":
		x := 0.0
		if m, ok := num(s["minimum"]); ok {
			x = m
		}
		if m, ok := num(s["exclusiveMinimum"]); ok {
			x = m + 1
		}
		if m, ok := num(s["maximum"]); ok && x > m {
			x = m
		}
		if t == "integer" {
			x = math.Ceil(x)
		}
		return x
	case "boolean":
		return true
	case "null":
		return nil
	}
	return d.validString(s)
}

func isNull(s map[string]any) bool {
	ts := types(s)
	return len(ts) == 1 && ts[0] == "null"
}

func mergeSchema(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			dp, _ := dst[k].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
			}
			sp, _ := v.(map[string]any)
			for pk, pv := range sp {
				dp[pk] = pv
			}
			dst[k] = dp
		case "required":
			dst[k] = append(asAny(asList(dst[k])), asAny(asList(v))...)
		default:
			dst[k] = v
		}
	}
}

func asList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// formats gives a valid value per JSON Schema format.
var formats = map[string]string{
	"date-time": "2026-01-01T08:00:00Z",
	"date":      "2026-01-01",
	"time":      "08:00:00Z",
	"email":     "operator@example.com",
	"uri":       "https://example.com/resource",
	"url":       "https://example.com/resource",
	"uuid":      "123e4567-e89b-12d3-a456-426614174000",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
	"hostname":  "example.com",
}

// validString builds a string for the schema's format or pattern, padded
// to its minimum length.
func (d schemaDoc) validString(s map[string]any) string {
	out := "example"
	if f, ok := s["format"].(string); ok {
		if v, ok := formats[f]; ok {
			out = v
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if v, err := fromPattern(p); err == nil {
			out = v
		}
	}
	if m, ok := num(s["minLength"]); ok {
		for len([]rune(out)) < int(m) {
			out += "x"
		}
	}
	if m, ok := num(s["maxLength"]); ok && len([]rune(out)) > int(m) {
		out = string([]rune(out)[:int(m)])
	}
	return out
}

// fromPattern returns a short string matching a regular expression, by
// walking its syntax tree and taking the first choice everywhere.
func fromPattern(p string) (string, error) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(*syntax.Regexp) error
	walk = func(r *syntax.Regexp) error {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) == 0 {
				return fmt.Errorf("empty class")
			}
			lo := r.Rune[0]
			// Prefer a digit or letter inside the class for readability.
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i] <= '1' && r.Rune[i+1] >= '1' {
					lo = '1'
					break
				}
			}
			b.WriteRune(lo)
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpConcat:
			for _, s := range r.Sub {
				if err := walk(s); err != nil {
					return err
				}
			}
		case syntax.OpAlternate:
			return walk(r.Sub[0])
		case syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpRepeat:
			for range max(r.Min, 0) {
				if err := walk(r.Sub[0]); err != nil {
					return err
				}
			}
		case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
			syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return fmt.Errorf("unsupported %v", r.Op)
		}
		return nil
	}
	if err := walk(re); err != nil {
		return "", err
	}
	return b.String(), nil
}

// invalid returns values the schema refuses, each with why: the wrong
// type, a value outside an enum, a number out of range, a string against
// its pattern.
func (d schemaDoc) invalid(s map[string]any) []invalidValue {
	s = d.resolve(s)
	var out []invalidValue
	ts := types(s)
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		if _, isStr := e[0].(string); isStr {
			out = append(out, invalidValue{"not_a_listed_value", "a value outside the enum"})
		}
	}
	if len(ts) == 1 {
		switch ts[0] {
		case "string":
			out = append(out, invalidValue{12345.0, "a number where a string is expected"})
			if p, ok := s["pattern"].(string); ok {
				out = append(out, invalidValue{"!" + p, "a string against the pattern"})
			}
		case "integer", "number":
			out = append(out, invalidValue{"ten", "a string where a number is expected"})
			if m, ok := num(s["maximum"]); ok {
				out = append(out, invalidValue{m + 1000, "a number above the maximum"})
			}
		case "boolean":
			out = append(out, invalidValue{"yes", "a string where a boolean is expected"})
		case "object":
			out = append(out, invalidValue{"{}", "a string where an object is expected"})
		case "array":
			out = append(out, invalidValue{"[]", "a string where an array is expected"})
		}
	}
	return out
}

type invalidValue struct {
	value any
	why   string
}
