// Package combine writes the input schema of a tool that offers several
// operations behind an "action" argument: the action, with what each one
// does and which arguments it takes, and the union of the operations'
// arguments. The spec language computes it to check a domain and generated
// code's runtime computes it again when a domain registers, rather than
// carry a copy of every operation's arguments per coarse level; both call
// Schema, so the two cannot drift apart. It is a leaf, working on the
// operations' own schemas as JSON.
package combine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Op is one operation a combined tool offers: its name (an action), its
// description and the JSON Schema of its arguments, an object schema whose
// properties are the arguments in order.
type Op struct {
	Name        string
	Description string
	Schema      string
}

// Schema is the input schema of a tool offering ops, its arguments in
// first-seen order after the action. An argument several operations share
// is widened for the model (enum values joined, differing bounds, patterns,
// formats, lengths and defaults dropped, differing descriptions joined)
// while each action's own schema is still what a call is checked against;
// one only some operations take says which (UsedBy).
func Schema(ops []Op) (string, error) {
	type arg struct {
		name   string
		schema object
		users  []string
	}
	var args []*arg
	byName := map[string]*arg{}
	acts := make([]string, 0, len(ops))
	for _, op := range ops {
		props, required, err := properties(op.Schema)
		if err != nil {
			return "", fmt.Errorf("operation %s: %w", op.Name, err)
		}
		var req, opt []string
		for _, p := range props {
			if slices.Contains(required, p.key) {
				req = append(req, p.key)
			} else {
				opt = append(opt, p.key)
			}
			s, err := parse(p.val)
			if err != nil {
				return "", fmt.Errorf("operation %s: argument %s: %w", op.Name, p.key, err)
			}
			a, ok := byName[p.key]
			if !ok {
				a = &arg{name: p.key, schema: s}
				byName[p.key] = a
				args = append(args, a)
			} else if a.schema, err = widen(a.schema, s); err != nil {
				return "", fmt.Errorf("operation %s: argument %s: %w", op.Name, p.key, err)
			}
			a.users = append(a.users, op.Name)
		}
		acts = append(acts, fmt.Sprintf("%s: %s%s", op.Name, strings.TrimSuffix(op.Description, "."), ActionUsage(req, opt)))
	}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}
	props := object{{"action", object{
		{"type", marshal("string")},
		{"description", marshal("What to do. " + strings.Join(acts, " "))},
		{"enum", marshal(names)},
	}.json()}}
	for _, a := range args {
		if len(a.users) < len(ops) {
			desc := "<nil>" // as fmt prints a missing description
			if raw, ok := a.schema.get("description"); ok {
				if err := json.Unmarshal(raw, &desc); err != nil {
					return "", fmt.Errorf("argument %s: description: %w", a.name, err)
				}
			}
			a.schema = a.schema.set("description", marshal(UsedBy(desc, a.users)))
		}
		props = append(props, member{a.name, a.schema.json()})
	}
	out := object{
		{"type", marshal("object")},
		{"properties", props.json()},
		{"required", marshal([]string{"action"})},
		{"additionalProperties", marshal(false)},
	}
	return string(out.json()), nil
}

// widened are the keywords an argument keeps in a combined tool only where
// every operation that takes it gives the same value.
var widened = []string{"minimum", "maximum", "pattern", "format", "maxLength", "default"}

// widen merges the schema a of an argument into m, what the operations
// before it made of the same argument.
func widen(m, a object) (object, error) {
	for _, k := range widened {
		mv, mok := m.get(k)
		av, aok := a.get(k)
		if mok != aok || mok && !bytes.Equal(mv, av) {
			m = m.remove(k)
		}
	}
	me, mok := m.get("enum")
	ae, aok := a.get("enum")
	switch {
	case mok && aok:
		var mvs, avs []string
		if err := json.Unmarshal(me, &mvs); err != nil {
			return nil, fmt.Errorf("enum: %w", err)
		}
		if err := json.Unmarshal(ae, &avs); err != nil {
			return nil, fmt.Errorf("enum: %w", err)
		}
		for _, v := range avs {
			if !slices.Contains(mvs, v) {
				mvs = append(mvs, v)
			}
		}
		m = m.set("enum", marshal(mvs))
	case mok || aok:
		m = m.remove("enum")
	}
	var md, ad string
	if raw, ok := m.get("description"); ok {
		if err := json.Unmarshal(raw, &md); err != nil {
			return nil, fmt.Errorf("description: %w", err)
		}
	}
	if raw, ok := a.get("description"); ok {
		if err := json.Unmarshal(raw, &ad); err != nil {
			return nil, fmt.Errorf("description: %w", err)
		}
	}
	if md != ad && !strings.Contains(md, ad) {
		m = m.set("description", marshal(md+" / "+ad))
	}
	return m, nil
}

// ActionUsage is how a combined tool's action description states the
// arguments one action takes: " (requires a, b; optional c)." or " (no
// other arguments).". Generated levels and regrouped servers word it
// alike.
func ActionUsage(required, optional []string) string {
	var parts []string
	if len(required) > 0 {
		parts = append(parts, "requires "+strings.Join(required, ", "))
	}
	if len(optional) > 0 {
		parts = append(parts, "optional "+strings.Join(optional, ", "))
	}
	if len(parts) == 0 {
		return " (no other arguments)."
	}
	return " (" + strings.Join(parts, "; ") + ")."
}

// UsedBy appends to a combined tool's argument description which actions
// use the argument.
func UsedBy(description string, actions []string) string {
	return strings.TrimSpace(fmt.Sprintf("%s (Used by: %s.)", description, strings.Join(actions, ", ")))
}

// properties reads an object schema's properties, in order, and its
// required names.
func properties(schema string) (object, []string, error) {
	top, err := parse([]byte(schema))
	if err != nil {
		return nil, nil, err
	}
	var props object
	if raw, ok := top.get("properties"); ok {
		if props, err = parse(raw); err != nil {
			return nil, nil, fmt.Errorf("properties: %w", err)
		}
	}
	var required []string
	if raw, ok := top.get("required"); ok {
		if err := json.Unmarshal(raw, &required); err != nil {
			return nil, nil, fmt.Errorf("required: %w", err)
		}
	}
	return props, required, nil
}

// object is a JSON object as its members in order, each value as it was
// encoded, so that what passes through is written back byte for byte.
type object []member

type member struct {
	key string
	val json.RawMessage
}

// parse reads a JSON object, keeping the order of its members.
func parse(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", clip(raw))
	}
	var o object
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string) // a key is a string in a well-formed object
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, member{k, v})
	}
	return o, nil
}

func (o object) get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

// set replaces the value of k where it stands, or appends k.
func (o object) set(k string, v json.RawMessage) object {
	out := slices.Clone(o)
	for i := range out {
		if out[i].key == k {
			out[i].val = v
			return out
		}
	}
	return append(out, member{k, v})
}

func (o object) remove(k string) object {
	return slices.DeleteFunc(slices.Clone(o), func(m member) bool { return m.key == k })
}

// json writes the object compactly, its members in order.
func (o object) json() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshal encodes a plain value (a string, a list of them, a boolean) as
// compact JSON without escaping <, > and &, as the spec language writes
// schemas.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("combine: encode %T: %v", v, err)) // strings and booleans always encode
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
