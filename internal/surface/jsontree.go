package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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

// parseObj reads a JSON object, keeping member order at every depth.
func parseObj(raw []byte) (obj, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	o, ok := v.(obj)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.40s", raw)
	}
	return o, nil
}

func readValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := obj{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return t, nil
}

func (o obj) get(k string) (any, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
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

func writeScalar(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("surface: encode %T: %v", v, err)) // only decoded JSON scalars reach here
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}
