package regroup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
)

// Refusal is a call the coarse tool refuses before it reaches the source:
// no or an unknown action, an argument of another action, or arguments
// the source tool's own schema rejects. Its text is what the client sees
// as a tool error.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// Prepare turns a call of the coarse tool into the source tool's call:
// the action picks the tool, the arguments get their source names, and
// they must satisfy the source tool's schema. A *Refusal says why not.
func (c *Coarse) Prepare(raw json.RawMessage) (source string, args json.RawMessage, err error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return "", nil, &Refusal{"arguments must be a JSON object of named arguments"}
	}
	a := c.Actions[0]
	if c.HasAction() {
		at, ok := in["action"]
		if !ok {
			return "", nil, &Refusal{fmt.Sprintf("missing required argument \"action\": one of %s", strings.Join(c.ActionNames(), ", "))}
		}
		var name string
		_ = json.Unmarshal(at, &name)
		if a = c.Action(name); a == nil {
			return "", nil, &Refusal{fmt.Sprintf("argument \"action\": %s is not one of %s", at, strings.Join(c.ActionNames(), ", "))}
		}
		delete(in, "action")
		var foreign []string
		for k := range in {
			if _, mine := a.toSource[k]; !mine && len(c.union[k]) > 0 {
				foreign = append(foreign, fmt.Sprintf("argument %q is not used by action %s (it is used by: %s)", k, a.Tool.Name, strings.Join(c.union[k], ", ")))
			}
		}
		if len(foreign) > 0 {
			sort.Strings(foreign)
			return "", nil, &Refusal{strings.Join(foreign, "; ") + "; leave it out or choose that action"}
		}
		renamed := make(map[string]json.RawMessage, len(in))
		for k, v := range in {
			if s, ok := a.toSource[k]; ok {
				k = s
			}
			renamed[k] = v
		}
		in = renamed
	}
	out, err := json.Marshal(in)
	if err != nil {
		return "", nil, err
	}
	if !c.HasAction() {
		// The arguments as sent, key order and number spelling kept.
		out = raw
	}
	if err := a.Tool.Validate(out); err != nil {
		return "", nil, &Refusal{fmt.Sprintf("invalid arguments for %s: %v", a.Tool.Name, err)}
	}
	return a.Tool.Name, out, nil
}

// Valid reports whether a call of a level's tool would reach the source.
func (gr *Grouping) Valid(lv level.Level, tool string, args json.RawMessage) bool {
	c := gr.Find(lv, tool)
	if c == nil {
		return false
	}
	_, _, err := c.Prepare(args)
	return err == nil
}

// MapCall maps a call of a source tool onto a level, as spec gold is
// derived (speclang's deriveCalls): the call goes through the level's
// tool that offers the source tool, with the tool's name as its action
// when the coarse tool has several, and each argument under its coarse
// name.
func (gr *Grouping) MapCall(lv level.Level, tool string, args json.RawMessage) (string, json.RawMessage, error) {
	for _, c := range gr.Levels[lv] {
		a := c.Action(tool)
		if a == nil {
			continue
		}
		if !c.HasAction() {
			return c.Name, args, nil
		}
		in := map[string]json.RawMessage{}
		if len(bytes.TrimSpace(args)) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return "", nil, fmt.Errorf("call of %q: arguments are not a JSON object: %w", tool, err)
			}
		}
		out := map[string]json.RawMessage{}
		for k, v := range in {
			if n, ok := a.toCoarse[k]; ok {
				k = n
			}
			out[k] = v
		}
		out["action"], _ = json.Marshal(tool)
		b, err := json.Marshal(out)
		return c.Name, b, err
	}
	return "", nil, fmt.Errorf("no %s tool offers %q", lv, tool)
}

// Unmap is MapCall backwards: the source tool and arguments a call of a
// level's tool stands for. ok is false for a call that names no tool or
// action of the level; its arguments are then returned as they are.
func (gr *Grouping) Unmap(lv level.Level, tool string, args json.RawMessage) (string, json.RawMessage, bool) {
	c := gr.Find(lv, tool)
	if c == nil {
		return tool, args, false
	}
	if !c.HasAction() {
		return c.Actions[0].Tool.Name, args, true
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return tool, args, false
	}
	var name string
	_ = json.Unmarshal(in["action"], &name)
	a := c.Action(name)
	if a == nil {
		return tool, args, false
	}
	delete(in, "action")
	out := map[string]json.RawMessage{}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		n := k
		if s, ok := a.toSource[k]; ok {
			n = s
		}
		out[n] = in[k]
	}
	b, _ := json.Marshal(out)
	return a.Tool.Name, b, true
}
