// Package scenarios synthesizes evaluation scenarios from tool
// specifications. This file reads JSON Schemas: local $refs, types,
// merged allOf parts; realistic.go derives values from them and refusals.go
// values they refuse.
package scenarios

import (
	"maps"
	"slices"
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

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
