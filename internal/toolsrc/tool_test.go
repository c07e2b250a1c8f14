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
