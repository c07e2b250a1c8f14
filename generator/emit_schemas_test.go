package generator

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/dave/jennifer/jen"
)

// TestRawString checks that every schema literal, raw or quoted, holds
// exactly the bytes it was given, and that raw literals are used when they can.
func TestRawString(t *testing.T) {
	for _, tc := range []struct {
		in  string
		raw bool
	}{
		{`{"type":"object"}`, true},
		{`{"description":"18 °C, \"quoted\""}`, true},
		{"{\"description\":\"a `tick`\"}", false},
		{"a\rb", false},
		{"\ufeff{}", false},
		{"\xff", false},
	} {
		src := fmt.Sprintf("%#v", jen.Add(rawString(tc.in)))
		if got := src[0] == '`'; got != tc.raw {
			t.Errorf("rawString(%q) = %s: raw %v, want %v", tc.in, src, got, tc.raw)
		}
		if back, err := strconv.Unquote(src); err != nil || back != tc.in {
			t.Errorf("rawString(%q) = %s, which reads back as %q (%v)", tc.in, src, back, err)
		}
	}
}
