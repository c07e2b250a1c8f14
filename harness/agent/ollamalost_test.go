package agent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
)

// wholeLost is what Ollama drops of a schema converted whole, as
// ollamaParams converts it for a request: what ollamaLost must say.
func wholeLost(schema []byte) ([]string, error) {
	_, l, err := ollamaParams(schema)
	return l, err
}

// TestOllamaLostAsWholeConversion: ollamaLost, which converts a schema
// one object at a time, reports what converting it whole reports, for
// every tool and interface of every generated domain and for schemas
// that test the edges of Ollama's types (empty and null members,
// duplicated names, anyOf branches, arguments that are no objects, types
// Ollama cannot read, names in another case).
func TestOllamaLostAsWholeConversion(t *testing.T) {
	var schemas []string
	for _, d := range gen.Domains {
		for _, lv := range level.Levels {
			for _, tl := range d.Tools[lv] {
				schemas = append(schemas, tl.InputSchema)
			}
		}
		ifaces, err := serve.DomainInterfaces(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ifaces {
			for _, tl := range i.Tools {
				schemas = append(schemas, string(tl.InputSchema))
			}
		}
	}
	edges := []string{
		`{}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":null,"required":[],"items":null,"$defs":{"x":{"type":"string","minimum":1}}}`,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1,"pattern":"^x","description":""},"b":{"type":["string","null"],"enum":[],"format":"date"}}}`,
		`{"type":"object","properties":{"a":{"type":"object","required":["x"],"properties":{"x":{"type":"integer","minimum":0,"maximum":9}},"additionalProperties":false}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"minimum":1}}},"minItems":1}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","pattern":"x"},{"type":"object","properties":{"y":{"format":"uri"}}}],"description":"either"}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[]},"b":{"properties":null},"c":{"properties":{}}}}`,
		`{"type":"object","properties":{"a":{"type":"string","minimum":1},"a":{"type":"string","maximum":2}}}`,
		`{"type":"object","minimum":1,"minimum":2,"properties":{"a":{"pattern":"x"}}}`,
		`{"type":"object","anyOf":[{"type":"string"}],"oneOf":[{"properties":{"a":{}}}],"not":{"type":"null"}}`,
		`{"type":"object","properties":{"a\u002eb":{"minimum":1},"é":{"maximum":2},"":{"format":"x"}}}`,
		`{"type":"object","properties":{"a":{"Description":"case","TYPE":"string","Minimum":1}}}`,
		`{"type":"object","Properties":{"a":{"type":"string","minimum":1}}}`,
		`{"type":"object","properties":{"a":{"AnyOf":[{"type":"string","pattern":"x"}]}}}`,
		`{"type":"object","properties":{"a":{"properties":{"b":{"properties":{"c":{"type":"string","pattern":"deep"}}}}}}}`,
		` { "type" : "object" , "properties" : { "a" : { "type" : "string" , "maxLength" : 3 } } } `,
		// What Ollama cannot read: the whole schema is unreadable.
		`{"type":["object"]}`,
		`{"type":"object","required":"a"}`,
		`{"type":"object","properties":{"a":true}}`,
		`{"type":"object","properties":{"a":"string"}}`,
		`{"type":"object","properties":[]}`,
		`{"type":"object","properties":{"a":{"type":5}}}`,
		`{"type":"object","properties":{"a":{"description":5}}}`,
		`{"type":"object","properties":{"a":{"enum":"x"}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":5}]}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[true]}}}`,
		`{"type":"object","properties":{"a":{"anyOf":{}}}}`,
		`{"type":"object","properties":{"a":{"properties":{"b":{"properties":{"c":{"description":[]}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":5},"a":{"type":"string"}}}`,
		`[]`,
		`"schema"`,
		`{"type":"object",`,
		``,
	}
	schemas = append(schemas, edges...)
	for i, s := range schemas {
		got, gerr := ollamaLost([]byte(s))
		want, werr := wholeLost([]byte(s))
		if (gerr != nil) != (werr != nil) || !slices.Equal(got, want) {
			t.Errorf("schema %d %.200s:\ngot  %q, %v\nwant %q, %v", i, s, got, gerr, want, werr)
		}
	}
}

// TestOllamaLostIsLinear: a schema of 63 nested arguments over an enum
// of 100,000 values, and one of 2,000 nested arguments, convert one
// object at a time and report what their whole conversion reports.
func TestOllamaLostIsLinear(t *testing.T) {
	vals := make([]string, 100_000)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"value_%d"`, i)
	}
	for _, c := range []struct {
		name   string
		depth  int
		bottom string
	}{
		{"63 deep over a huge enum", 63, `{"type":"string","minLength":1,"enum":[` + strings.Join(vals, ",") + `]}`},
		{"2,000 deep", 2000, `{"type":"string","pattern":"^x"}`},
	} {
		schema := []byte(strings.Repeat(`{"type":"object","properties":{"a":`, c.depth) + c.bottom + strings.Repeat(`}}`, c.depth))
		got, err := ollamaLost(schema)
		if err != nil || len(got) != 1 || !strings.HasPrefix(got[0], "a.a.a.") {
			t.Errorf("%s: got %d lost (%.80q…), %v; want the bottom's one keyword", c.name, len(got), got, err)
		}
	}
}
