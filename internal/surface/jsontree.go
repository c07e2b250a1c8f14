package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// obj is a JSON object that keeps its members' order, as a level lists
// its arguments: an interface transforms schemas without reordering what
// the model reads. Values are obj, []any, string, bool, json.Number or
// nil.
type obj []member

type member struct {
	key string
	val any
}

// parseObj reads a JSON object, keeping member order at every depth, in
// one pass over its bytes once json.Valid has checked them: a server's
// enum of 100,000 values is read in milliseconds, where a json.Decoder's
// tokens cost a decoding each.
func parseObj(raw []byte) (obj, error) {
	if !json.Valid(raw) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err // the decoder says what and where
		}
		return nil, fmt.Errorf("not JSON: %.40s", raw)
	}
	p := parser{data: raw}
	o, ok := p.value().(obj)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.40s", raw)
	}
	return o, nil
}

// parser reads JSON text that json.Valid accepted, so it checks nothing.
type parser struct {
	data []byte
	i    int
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the value at p.i: obj, []any, string, bool, json.Number or
// nil, as a json.Decoder with UseNumber gives them.
func (p *parser) value() any {
	p.space()
	switch p.data[p.i] {
	case '{':
		p.i++
		o := obj{}
		for p.space(); p.data[p.i] != '}'; p.space() {
			k := p.str()
			p.space()
			p.i++ // the colon
			o = append(o, member{k, p.value()})
			p.space()
			if p.data[p.i] == ',' {
				p.i++
			}
		}
		p.i++
		return o
	case '[':
		p.i++
		a := []any{}
		for p.space(); p.data[p.i] != ']'; p.space() {
			a = append(a, p.value())
			p.space()
			if p.data[p.i] == ',' {
				p.i++
			}
		}
		p.i++
		return a
	case '"':
		return p.str()
	case 't':
		p.i += len("true")
		return true
	case 'f':
		p.i += len("false")
		return false
	case 'n':
		p.i += len("null")
		return nil
	}
	start := p.i
	for p.i < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[p.i]) >= 0 {
		p.i++
	}
	return json.Number(p.data[start:p.i])
}

// str reads the string at p.i: its bytes as they are when it has no
// escape and is valid UTF-8, else as encoding/json decodes it (escapes
// read, invalid bytes replaced).
func (p *parser) str() string {
	start, plain := p.i, true
	j := start + 1
	for ; p.data[j] != '"'; j++ {
		if p.data[j] == '\\' {
			plain = false
			j++
		}
	}
	p.i = j + 1
	body := p.data[start+1 : j]
	if plain && utf8.Valid(body) {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(p.data[start:j+1], &s) // valid: json.Valid read it
	return s
}

func (o obj) get(k string) (any, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

// mustGet is the member k of o, nil when o has none.
func mustGet(o obj, k string) any {
	v, _ := o.get(k)
	return v
}

// getObj is the member k when it is an object, else nil.
func (o obj) getObj(k string) obj {
	v, _ := o.get(k)
	x, _ := v.(obj)
	return x
}

// getString is the member k when it is a string, else "".
func (o obj) getString(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

// set replaces k's value where it stands, or appends k.
func (o obj) set(k string, v any) obj {
	for i := range o {
		if o[i].key == k {
			o[i].val = v
			return o
		}
	}
	return append(o, member{k, v})
}

func (o obj) remove(k string) obj {
	return slices.DeleteFunc(o, func(m member) bool { return m.key == k })
}

// clone copies o at every depth.
func (o obj) clone() obj { return cloneValue(o).(obj) }

func cloneValue(v any) any {
	switch x := v.(type) {
	case obj:
		out := make(obj, len(x))
		for i, m := range x {
			out[i] = member{m.key, cloneValue(m.val)}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

// strings reads a list of strings (required, enum); other items are left
// out.
func stringsOf(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// encode writes v compactly, objects in member order, without escaping <,
// > and & (as the spec language writes schemas).
func encode(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v)
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeScalar(b, m.key)
			b.WriteByte(':')
			writeValue(b, m.val)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	default:
		writeScalar(b, x)
	}
}

// writeScalar writes a decoded JSON scalar as a json.Encoder without HTML
// escaping does, writing plain strings, numbers and literals itself: an
// Encoder per value made an enum's values the most of encoding a schema.
func writeScalar(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case string:
		if plainString(x) {
			b.WriteByte('"')
			b.WriteString(x)
			b.WriteByte('"')
			return
		}
	case json.Number:
		if x != "" {
			b.WriteString(string(x))
			return
		}
	case bool:
		b.WriteString(strconv.FormatBool(x))
		return
	case nil:
		b.WriteString("null")
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("surface: encode %T: %v", v, err)) // only decoded JSON scalars reach here
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}

// plainString reports whether a json.Encoder without HTML escaping
// writes s as it is between quotes: valid UTF-8 without quotes,
// backslashes, control characters or the line and paragraph separators
// (U+2028, U+2029), which it escapes.
func plainString(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\':
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s) && !strings.ContainsRune(s, '\u2028') && !strings.ContainsRune(s, '\u2029')
}
