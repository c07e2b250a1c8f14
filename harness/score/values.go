package score

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
)

// SameValue is the one comparison of values the harness makes, for state
// conditions and arguments alike: numbers by value (21 = 21.0), objects key
// by key, arrays in order; strings trimmed and case-folded, and
// timestamps by instant, unless exact.
func SameValue(got, want any, exact bool) bool {
	if same, scalar := sameScalar(got, want, exact); scalar {
		return same
	}
	opts := looseValues
	if exact {
		opts = exactValues
	}
	return cmp.Equal(normalize(got), normalize(want), opts)
}

// sameScalar is SameValue for two strings, numbers or booleans, without
// the JSON round trip: most values compared are scalars. scalar is false
// when either value is of another kind.
func sameScalar(got, want any, exact bool) (same, scalar bool) {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		if !ok {
			return false, isScalar(got)
		}
		if exact {
			return g == w, true
		}
		return strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(w)) || sameInstant(g, w), true
	case bool:
		g, ok := got.(bool)
		return ok && g == w, isScalar(got)
	}
	if w, ok := number(want); ok {
		g, ok := number(got)
		if !ok {
			return false, isScalar(got)
		}
		return sameFloat(g, w), true
	}
	return false, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	_, ok := number(v)
	return ok
}

// number reads the numeric types decoded JSON and the spec loader use.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// sameFloat is how the harness compares numbers: by value, within a
// relative 1e-9 so that 0.1+0.2 is 0.3.
func sameFloat(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

var (
	numbers     = cmp.Comparer(sameFloat)
	exactValues = cmp.Options{numbers}
	looseValues = cmp.Options{numbers, cmp.Comparer(func(a, b string) bool {
		return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) || sameInstant(a, b)
	})}
)

// sameInstant reports whether two strings are timestamps of the same
// instant, however their zones are written (Z or +00:00).
func sameInstant(sa, sb string) bool {
	ta, err1 := time.Parse(time.RFC3339, sa)
	tb, err2 := time.Parse(time.RFC3339, sb)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

// normalize round-trips a value through JSON so numbers are float64 on
// both sides.
func normalize(v any) any {
	var out any
	if err := json.Unmarshal([]byte(jsonString(v)), &out); err != nil {
		return v
	}
	return out
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
