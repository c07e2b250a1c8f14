package schemacheck

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// nestedSchema is a schema of n objects each holding the next as its
// argument a: {"type":"object","properties":{"a":{…}}}, a string at the
// bottom; its deepest value is 2n+1 levels down.
func nestedSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

// enumSchema is a schema of one argument v whose enum lists n strings.
func enumSchema(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"value_%d"`, i)
	}
	return `{"type":"object","properties":{"v":{"type":"string","enum":[` + strings.Join(vals, ",") + `]}}}`
}

// TestCheckBounds: the red team's schemas (1,000 nested objects, an enum
// of 300,000 values) and others beyond a bound are refused, naming where
// and the bound; schemas at the bounds, and text that only looks like
// nesting or enums inside strings, pass.
func TestCheckBounds(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		path, msg    string // "" path and msg: within the bounds
	}{
		{"the red team's 1,000 nested objects", nestedSchema(1000), "properties.a.properties.a.…(120 more)….properties.a.properties.a", "nested deeper than 128 levels of objects and arrays"},
		{"64 nested objects: 129 levels", nestedSchema(64), "properties.a.properties.a.…(120 more)….properties.a.properties.a", "nested deeper than 128 levels"},
		{"63 nested objects: 127 levels", nestedSchema(63), "", ""},
		{"arrays nest too", `{"default":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "default[0][0][0].…(120 more)…[0][0][0][0]", "nested deeper than 128 levels"},
		{"the red team's enum of 300,000 values", enumSchema(300_000), "properties.v.enum", "enum lists more than 100000 values"},
		{"an enum of 100,001 values", enumSchema(MaxEnumValues + 1), "properties.v.enum", "enum lists more than 100000 values"},
		{"an enum of 100,000 values", enumSchema(MaxEnumValues), "", ""},
		{"a long array that is no enum", `{"examples":[` + strings.Repeat("1,", 200_000) + `1]}`, "", ""},
		{"too long", `{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, "", "is 4194322 bytes long; expected at most 4194304 (4 MiB)"},
		{"brackets and quotes inside strings", `{"description":"` + strings.Repeat(`[{\"`, 1000) + `","enum":["a,b,c"]}`, "", ""},
		{"odd keys are quoted", `{"properties":{"a.b \"c\"":` + nestedSchema(64) + `}}`, `properties."a.b \"c\"".properties.a.…(120 more)….properties.a.properties.a`, "nested deeper"},
		{"not JSON passes, for the parser", `{"a":[1,2`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckBounds([]byte(c.schema))
			if c.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var be *BoundsError
			if !errors.As(err, &be) {
				t.Fatalf("got %v, want a *BoundsError", err)
			}
			if be.Path != c.path || !strings.Contains(be.Msg, c.msg) {
				t.Errorf("got path %q, message %q; want path %q and a message with %q", be.Path, be.Msg, c.path, c.msg)
			}
		})
	}
}

// TestCompileRefusesBeyondTheBounds: Compile refuses a schema beyond a
// bound before the compiler, whose cost grows faster than the nesting,
// reads it, saying where and which bound.
func TestCompileRefusesBeyondTheBounds(t *testing.T) {
	_, err := Compile("tool:deep", nestedSchema(1000))
	want := "schema tool:deep: at properties.a.properties.a.…(120 more)….properties.a.properties.a: nested deeper than 128 levels"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q…", err, want)
	}
	if _, err := Compile("tool:ok", nestedSchema(60)); err != nil {
		t.Errorf("a schema within the bounds: %v", err)
	}
}
