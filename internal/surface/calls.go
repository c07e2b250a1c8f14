package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Refusal is a call the interface cannot map onto its level: the tool
// error the model gets instead, saying what the interface expected.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// Source is the level's name of the interface tool name, or "".
func (i *Interface) Source(name string) string {
	if sh := i.byName[name]; sh != nil {
		return sh.source
	}
	return ""
}

// Name is the interface's name of the level tool source, or "".
func (i *Interface) Name(source string) string {
	if sh := i.bySource[source]; sh != nil {
		return sh.name
	}
	return ""
}

// Decode turns a call of one of the interface's tools into the level's
// call: the level tool and its arguments, with each action's nested
// arguments and each grouped range flattened back. What the level judges
// (an unknown action, a bad value) passes through for the level's own
// error; what only the interface can tell (arguments outside the action's
// object, a range that is not an object) is a Refusal.
func (i *Interface) Decode(name string, raw json.RawMessage) (string, json.RawMessage, error) {
	sh := i.byName[name]
	if sh == nil {
		return "", nil, &Refusal{fmt.Sprintf("unknown tool %q: expected one of %s", name, strings.Join(i.names(), ", "))}
	}
	if len(sh.dropped) > 0 {
		if args, err := decodeArgs(raw); err == nil {
			if action, _ := args["action"].(string); slices.Contains(sh.dropped, action) {
				return "", nil, &Refusal{fmt.Sprintf("unknown action %q of tool %s: expected one of %s", action, name, strings.Join(sh.actions, ", "))}
			}
		}
	}
	if !sh.nested && len(sh.groups) == 0 {
		return sh.source, raw, nil
	}
	args, err := decodeArgs(raw)
	if err != nil || args == nil {
		return sh.source, raw, nil // not an object: the level says what is wrong
	}
	if sh.nested {
		if args, err = sh.unnest(args); err != nil {
			return "", nil, err
		}
	}
	if err := sh.ungroup(args); err != nil {
		return "", nil, err
	}
	return sh.source, marshalArgs(args), nil
}

// unnest lifts the chosen action's arguments out of its object.
func (sh *shaped) unnest(args map[string]any) (map[string]any, error) {
	action, _ := args["action"].(string)
	if !slices.Contains(sh.actions, action) {
		return args, nil // the level names the actions
	}
	out := map[string]any{"action": action}
	for k, v := range args {
		switch {
		case k == "action":
		case k == action:
			if v == nil {
				continue
			}
			inner, ok := v.(map[string]any)
			if !ok {
				return nil, &Refusal{fmt.Sprintf("argument %q: expected an object of action %s's arguments, got %s", k, action, jsonKind(v))}
			}
			for ik, iv := range inner {
				out[ik] = iv
			}
		case slices.Contains(sh.actions, k):
			return nil, &Refusal{fmt.Sprintf("argument %q holds the arguments of action %s, but the action is %s; expected them inside %q", k, k, action, action)}
		default:
			return nil, &Refusal{fmt.Sprintf("argument %q is outside action %s's object; expected {\"action\": %q, %q: {%q: …}}", k, action, action, action, k)}
		}
	}
	return out, nil
}

// ungroup flattens each grouped range back into its two arguments.
func (sh *shaped) ungroup(args map[string]any) error {
	for _, g := range sh.groups {
		v, ok := args[g.key]
		if !ok {
			continue
		}
		delete(args, g.key)
		if v == nil {
			continue
		}
		inner, ok := v.(map[string]any)
		if !ok {
			return &Refusal{fmt.Sprintf("argument %q: expected an object with min, max or both, got %s", g.key, jsonKind(v))}
		}
		for k, iv := range inner {
			switch k {
			case "min":
				args[g.min] = iv
			case "max":
				args[g.max] = iv
			default:
				return &Refusal{fmt.Sprintf("argument %q: found %q; expected only min and max", g.key, k)}
			}
		}
	}
	return nil
}

// Encode turns a level call into the interface's: the tool renamed, each
// range grouped and, for nested actions, the action's arguments put in its
// object. It is Decode's inverse on every call the level accepts.
func (i *Interface) Encode(source string, args map[string]any) (string, map[string]any, error) {
	sh := i.bySource[source]
	if sh == nil {
		return "", nil, fmt.Errorf("interface %s: no tool for level tool %q", i.Spec.Name, source)
	}
	if !sh.nested && len(sh.groups) == 0 {
		return sh.name, args, nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, g := range sh.groups {
		inner := map[string]any{}
		for k, arg := range map[string]string{"min": g.min, "max": g.max} {
			if v, ok := out[arg]; ok {
				inner[k] = v
				delete(out, arg)
			}
		}
		if len(inner) > 0 {
			out[g.key] = inner
		}
	}
	if sh.nested {
		action, _ := out["action"].(string)
		inner := map[string]any{}
		for k, v := range out {
			if k != "action" {
				inner[k] = v
			}
		}
		out = map[string]any{"action": action}
		if len(inner) > 0 {
			out[action] = inner
		}
	}
	return sh.name, out, nil
}

// EncodeJSON is Encode with the arguments as JSON, as a call sends them.
func (i *Interface) EncodeJSON(source string, args map[string]any) (string, json.RawMessage, error) {
	name, out, err := i.Encode(source, args)
	if err != nil {
		return "", nil, err
	}
	return name, marshalArgs(out), nil
}

func (i *Interface) names() []string {
	out := make([]string, len(i.Tools))
	for k, t := range i.Tools {
		out[k] = t.Name
	}
	return out
}

// decodeArgs reads a JSON object keeping numbers as written; nil when the
// arguments are empty or not an object.
func decodeArgs(raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

func marshalArgs(args map[string]any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		panic(fmt.Sprintf("surface: encode arguments: %v", err)) // decoded JSON always encodes
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}
