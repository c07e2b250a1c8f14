// Package schemacheck compiles the module's JSON Schemas and reads their
// validation errors: the one compiler setting (draft 2020-12, format
// assertions on) that the spec language, the runtime generated code links
// against and the tool sources share, and the helpers that turn a
// validator's error tree into one problem at a time. It is a leaf, so that
// none of them links another to check a document.
package schemacheck

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Compile compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) with format assertions on. A schema beyond the bounds
// (CheckBounds) is refused before the compiler reads it: the compiler's
// cost grows faster than the square of a schema's nesting (1,000 nested
// objects took it seconds).
func Compile(url, schema string) (*jsonschema.Schema, error) {
	if err := CheckBounds([]byte(schema)); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	return c.Compile(url)
}

// noLoader refuses every resource outside the schema being compiled: a
// tool's schema comes from a server granite does not trust, and a $ref to
// a local file read it (a FIFO blocked granite list, deaf to SIGTERM).
// The drafts' meta-schemas are the compiler's own and need no loading.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a $ref to %s, outside the schema: granite loads no other document", url)
}

// Leaves returns the innermost errors of a validation error, the ones that
// name a single problem, in the order the validator found them.
func Leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, Leaves(c)...)
	}
	return out
}

// SizeBound says in words how long a value is and the bound it broke, for
// the keywords that count characters, items or properties, whose
// validator messages read "maxLength: got 41, want 40": size is like "is
// 41 characters long" or "has 0 items", bound like "at most 40". ok is
// false for any other keyword. property names an object's members: "field"
// for a tool's arguments, "key" for a YAML mapping.
func SizeBound(k jsonschema.ErrorKind, property string) (size, bound string, ok bool) {
	count := func(n int, unit string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", unit)
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch k := k.(type) {
	case *kind.MinLength:
		return "is " + count(k.Got, "character") + " long", fmt.Sprintf("at least %d", k.Want), true
	case *kind.MaxLength:
		return "is " + count(k.Got, "character") + " long", fmt.Sprintf("at most %d", k.Want), true
	case *kind.MinItems:
		return "has " + count(k.Got, "item"), fmt.Sprintf("at least %d", k.Want), true
	case *kind.MaxItems:
		return "has " + count(k.Got, "item"), fmt.Sprintf("at most %d", k.Want), true
	case *kind.MinProperties:
		return "has " + count(k.Got, property), fmt.Sprintf("at least %d", k.Want), true
	case *kind.MaxProperties:
		return "has " + count(k.Got, property), fmt.Sprintf("at most %d", k.Want), true
	}
	return "", "", false
}
