package toolsrc

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// TestReasonsWordSizes: a size keyword reads as a sentence, not as the
// validator's "maxLength: got 41, want 40".
func TestReasonsWordSizes(t *testing.T) {
	sch, err := schemacheck.Compile("granite:reasons", `{"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}, "tags": {"type": "array", "minItems": 1}}}`)
	if err != nil {
		t.Fatal(err)
	}
	err = reasons(sch.Validate(map[string]any{"name": strings.Repeat("x", 41), "tags": []any{}}))
	for _, want := range []string{"at /name: the value is 41 characters long; at most 40", "at /tags: the value has 0 items; at least 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want it to contain %q", err, want)
		}
	}
}

// TestNamesAreNoSchemaURLs attacks Compile with names a URL reads
// otherwise (a fragment, a query, a bad escape, control characters): each
// tool's schemas compile and check arguments, and an error about a schema
// quotes its name.
func TestNamesAreNoSchemaURLs(t *testing.T) {
	for _, name := range []string{"read#file", "a?b=c", "100%zz", "two words", "a\x1b[2Jb", "c\rd", "e\nf", "\u202eevil", "../../etc/passwd", "tool:x#/$defs/y"} {
		tl := Tool{Name: name, InputSchema: []byte(`{"type": "object", "properties": {"n": {"type": "integer"}}}`), OutputSchema: []byte(`{"type": "object"}`)}
		if err := tl.Compile(); err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		if !tl.Valid([]byte(`{"n": 1}`)) || tl.Valid([]byte(`{"n": "x"}`)) {
			t.Errorf("%q: the schema does not check arguments", name)
		}
	}
	bad := Tool{Name: "a\x1b[2Jb", InputSchema: []byte(`{"type": 7}`)}
	if err := bad.Compile(); err == nil || !strings.Contains(err.Error(), `tool "a\x1b[2Jb": input schema`) || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("a bad schema: %v", err)
	}
}
