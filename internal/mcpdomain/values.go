package mcpdomain

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Ptr returns a pointer to a copy of v: how a value is stored in an
// optional field, whose nil means unset.
func Ptr[T any](v T) *T { return &v }

// CloneSlice returns a copy of s that shares no backing array.
func CloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return slices.Clone(s)
}

// CloneObject deep-copies a JSON object value.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

func cloneAny(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneObject(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneAny(e)
		}
		return out
	default:
		return v
	}
}

// MergeObject returns dst with the keys of src set on it, key by key; a
// null value in src removes the key.
func MergeObject(dst, src map[string]any) map[string]any {
	out := CloneObject(dst)
	if out == nil {
		out = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(src)) {
		if src[k] == nil {
			delete(out, k)
			continue
		}
		out[k] = cloneAny(src[k])
	}
	return out
}

// Bind decodes validated arguments into the operation's typed argument
// struct and calls it.
func Bind[A, R any](raw []byte, op func(A) (R, error)) (any, error) {
	var a A
	if err := Decode(raw, &a); err != nil {
		return nil, err
	}
	return op(a)
}

// Decode unmarshals validated arguments into a typed struct. Arguments
// have passed the tool's schema by now, so a failure is the server's fault,
// not the caller's, and is reported as such.
func Decode(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode validated arguments into %T: %w", v, err)
	}
	return nil
}

// canonicalNumbers rewrites json.Number values with an integral value
// (21.0, 2.1e1) to integer text, so that an integer the schema accepted
// also decodes into a Go int.
func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = canonicalNumbers(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = canonicalNumbers(e)
		}
		return v
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v
		}
		f, err := v.Float64()
		if err == nil && f == float64(int64(f)) && f >= -(1<<53) && f <= 1<<53 {
			return json.Number(fmt.Sprintf("%d", int64(f)))
		}
		return v
	default:
		return v
	}
}

// Or returns *p, or def when p is nil.
func Or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// CompareTime compares two RFC 3339 timestamps by the instant they name,
// so that 08:00:00Z and 09:00:00+01:00 are equal. Unparseable values,
// which validation keeps out, compare as strings.
func CompareTime(a, b string) int {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return ta.Compare(tb)
}
