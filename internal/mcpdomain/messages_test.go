package mcpdomain

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestKeywordSentences pins the argument errors of the keywords whose
// validator text reads "maxLength: got 41, want 40": each is a sentence
// like the others, naming the argument, what it is and the bound.
func TestKeywordSentences(t *testing.T) {
	sch, err := schemacheck.Compile("granite:test", `{"type": "object", "properties": {
		"name": {"type": "string", "minLength": 2, "maxLength": 40},
		"tags": {"type": "array", "minItems": 1, "maxItems": 2},
		"meta": {"type": "object", "minProperties": 1, "maxProperties": 1},
		"step": {"type": "number", "multipleOf": 0.5}}}`)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ args, want string }{
		{`{"name": "` + strings.Repeat("x", 41) + `"}`, `argument "name" is 41 characters long; at most 40`},
		{`{"name": "x"}`, `argument "name" is 1 character long; at least 2`},
		{`{"tags": []}`, `argument "tags" has 0 items; at least 1`},
		{`{"tags": [1, 2, 3]}`, `argument "tags" has 3 items; at most 2`},
		{`{"meta": {}}`, `argument "meta" has 0 fields; at least 1`},
		{`{"meta": {"a": 1, "b": 2}}`, `argument "meta" has 2 fields; at most 1`},
		{`{"step": 0.3}`, `argument "step": 0.3 is not a multiple of 0.5`},
	}
	for _, c := range cases {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatal(err)
		}
		verr, ok := sch.Validate(v).(*jsonschema.ValidationError)
		if !ok {
			t.Errorf("%s: valid", c.args)
			continue
		}
		got := (&Tool{Name: "t"}).sentences(&Operation{}, verr)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}
