package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
)

// deepSchema is a schema of n objects each holding the next as its
// argument a, a string at the bottom: the red team's probe at n = 1,000.
func deepSchema(n int) []byte {
	return []byte(strings.Repeat(`{"type":"object","description":"A level. Its argument a is the next.","properties":{"a":`, n) +
		`{"type":"string","description":"The bottom."}` + strings.Repeat(`}}`, n))
}

// enumSchema is a schema of one argument v whose enum lists n strings:
// the red team's probe at n = 300,000.
func enumSchema(n int) []byte {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"value_%d"`, i)
	}
	return []byte(`{"type":"object","properties":{"v":{"type":"string","description":"A value. Any of the enum.","enum":[` + strings.Join(vals, ",") + `]}}}`)
}

// TestBuildRefusesSchemasBeyondTheBounds: the red team's schemas, as a
// tool's or an action's, are refused by every interface (the catalogue
// with them), naming the interface, the tool, where in the schema and
// the bound; the same shapes within the bounds build.
func TestBuildRefusesSchemasBeyondTheBounds(t *testing.T) {
	withAction := func(schema []byte) []Tool {
		return []Tool{{Name: "pick", InputSchema: []byte(`{"type":"object","properties":{"action":{"type":"string","enum":["one","two"]}}}`),
			Actions: []Action{{Name: "one", Schema: []byte(`{"type":"object"}`)}, {Name: "two", Schema: schema}}}}
	}
	for _, c := range []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"1,000 nested objects", []Tool{{Name: "deep", InputSchema: deepSchema(1000)}},
			"interface L3: tool deep: input schema at properties.a.properties.a.…(120 more)….properties.a.properties.a: nested deeper than 128 levels of objects and arrays"},
		{"an enum of 300,000 values", []Tool{{Name: "huge", InputSchema: enumSchema(300_000)}},
			"interface L3: tool huge: input schema at properties.v.enum: enum lists more than 100000 values"},
		{"an action nesting 1,000 objects", withAction(deepSchema(1000)),
			"interface L3: tool pick: action two: schema at properties.a.properties.a.…(120 more)…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(Spec{Name: "L3", Level: level.L3}, "probe", c.tools)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Build: got %v\nwant %q…", err, c.want)
			}
			if _, err := Catalogue("probe", map[level.Level][]Tool{level.L3: c.tools}); err == nil || !strings.Contains(err.Error(), "nested deeper") && !strings.Contains(err.Error(), "enum lists more") {
				t.Errorf("Catalogue: got %v, want the refusal", err)
			}
		})
	}
	for name, schema := range map[string][]byte{"60 nested objects": deepSchema(60), "an enum of 100,000 values": enumSchema(100_000)} {
		cat, err := Catalogue("probe", map[level.Level][]Tool{level.L3: {{Name: "t", Description: "A tool.", InputSchema: schema}}})
		if err != nil || len(cat) < 2 {
			t.Errorf("%s: got %d interfaces, %v; want the catalogue", name, len(cat), err)
		}
	}
}

// TestBuildWithinTheBounds: a schema at the bounds is transformed as any
// other: described enums list every value, terse descriptions reach the
// deepest argument, and Measure reads the whole depth.
func TestBuildWithinTheBounds(t *testing.T) {
	iface, err := Build(Spec{Name: "L3-enumtext", Level: level.L3, Transforms: Transforms{Enums: "described"}}, "probe", []Tool{{Name: "t", InputSchema: enumSchema(100_000)}})
	if err != nil {
		t.Fatal(err)
	}
	if s := iface.Tools[0].InputSchema; bytes.Contains(s, []byte(`"enum"`)) || !bytes.Contains(s, []byte("One of: value_0, value_1, ")) || !bytes.Contains(s, []byte(", value_99999.")) {
		t.Errorf("described enum: %.200s…", s)
	}
	iface, err = Build(Spec{Name: "L3-terse", Level: level.L3, Transforms: Transforms{Descriptions: "terse"}}, "probe", []Tool{{Name: "t", InputSchema: deepSchema(60)}})
	if err != nil {
		t.Fatal(err)
	}
	s := iface.Tools[0].InputSchema
	// Every argument's description is cut, the schema's own (the tool's
	// to describe) aside.
	if n := bytes.Count(s, []byte(`"description":"A level."`)); n != 59 || !bytes.Contains(s, []byte(`"description":"The bottom."`)) {
		t.Errorf("terse: %d nested arguments cut to their first sentence, want 59", n)
	}
	if m := Measure(iface, nil, nil); m.Depth != 60 || m.ArgsMax != 1 {
		t.Errorf("Measure: depth %d, args %d; want 60 and 1", m.Depth, m.ArgsMax)
	}
}

// TestParseAndEncodeAsEncodingJSON: the one-pass reader and the writer's
// own scalars give what json.Decoder (with UseNumber) and json.Encoder
// (without HTML escaping) give, escapes, non-ASCII text, invalid UTF-8,
// the line separators and numbers among them, member order kept.
func TestParseAndEncodeAsEncodingJSON(t *testing.T) {
	for _, src := range []string{
		`{}`,
		` { "b" : [ 1 , -2.5e3 , 0.0 , true , false , null , "x" , [ ] , { } ] , "a" : "y" } `,
		`{"s":"tab\tquote\"slash\\ \/ \u00e9 é 日本 \ud83d\ude00 <&> \u2028 \u2029 \u0000 \u001f"}`,
		"{\"raw\":\"é \xe2\x80\xa8 sep, \xff bad byte\",\"k\xffey\":1}",
		`{"n":[1E+2,1e-2,-0,123456789012345678901234567890]}`,
		`{"z":1,"a":2,"z":3}`,
	} {
		got, err := parseObj([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		want := decoderTree(t, src)
		if g, w := encode(got), encoderBytes(t, want); !bytes.Equal(g, w) {
			t.Errorf("%s:\ngot  %s\nwant %s", src, g, w)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1]`, `"x"`, `{"a":1}x`} {
		if _, err := parseObj([]byte(bad)); err == nil {
			t.Errorf("%q: read, want an error", bad)
		}
	}
}

// decoderTree reads src as the reader did before it was one pass: a
// json.Decoder's tokens, numbers as json.Number.
func decoderTree(t *testing.T, src string) obj {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var read func() any
	read = func() any {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			o := obj{}
			for dec.More() {
				k, _ := dec.Token()
				o = append(o, member{k.(string), read()})
			}
			dec.Token()
			return o
		case json.Delim('['):
			a := []any{}
			for dec.More() {
				a = append(a, read())
			}
			dec.Token()
			return a
		}
		return tok
	}
	return read().(obj)
}

// encoderBytes writes a tree as the writer did before it wrote scalars
// itself: a json.Encoder per scalar, HTML escaping off.
func encoderBytes(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	var write func(any)
	write = func(v any) {
		switch x := v.(type) {
		case obj:
			b.WriteByte('{')
			for i, m := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(m.key)
				b.WriteByte(':')
				write(m.val)
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		default:
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x); err != nil {
				t.Fatal(err)
			}
			b.Truncate(b.Len() - 1)
		}
	}
	write(v)
	return b.Bytes()
}
