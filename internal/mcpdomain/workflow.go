package mcpdomain

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Step is one call of a workflow, as generated from its spec: the
// operation it calls, once or once per element of a list, and the JSON
// object of its arguments, in which a string value that starts with $ is
// a binding resolved when the step runs.
type Step struct {
	Op *Operation
	// ForEach is the binding of the list to call Op once per element of
	// ($lit.items); "" for one call. Inside, $item is the element.
	ForEach string
	// With is the JSON object of Op's arguments ("" for none): a value "$room" is the
	// workflow's argument room (left out when the caller left it out),
	// "$lit.items" a value in the result of the step named lit, "$item.id"
	// one in the current element; any other value is a literal.
	With string
	// As names the step's result for later bindings: the operation's result
	// as its JSON, or with ForEach the list of its calls' results.
	As string
}

// WorkflowResult is what a workflow did: every call it made, in order,
// with the arguments it was given and, for all but the reads that only
// feed later steps, what it returned.
type WorkflowResult struct {
	Workflow string         `json:"workflow"`
	Calls    []WorkflowCall `json:"calls"`
}

// WorkflowCall is one call a workflow made. A read whose result only feeds
// later steps (a step with As) leaves Result out: what it found shows in
// the calls it led to, and the whole result stays small.
type WorkflowCall struct {
	Call   string          `json:"call"`
	Args   json.RawMessage `json:"args"`
	Result any             `json:"result,omitempty"`
}

// shown is the result a workflow's result gives for a call of step s.
func (s Step) shown(out any) any {
	if s.As != "" && s.Op.ReadOnly {
		return nil
	}
	return out
}

// RunWorkflow runs a workflow's steps on st, each step's arguments checked
// against its operation's schema as a tool call's are. It stops at the
// first failure and returns it as a ToolError that names the step. st must
// be a private copy of the domain's store: the generated workflow method
// runs it on a clone, under the store's write lock, and keeps the clone's
// tables only when RunWorkflow succeeds, so a workflow applies all or
// nothing.
func RunWorkflow(st Store, name string, steps []Step, args any) (WorkflowResult, error) {
	res := WorkflowResult{Workflow: name, Calls: []WorkflowCall{}}
	env := map[string]any{}
	given, err := asJSON(args)
	if err != nil {
		return res, fmt.Errorf("workflow %s: encode arguments: %w", name, err)
	}
	inputs, _ := given.(map[string]any)
	for i, s := range steps {
		fail := func(what string, err error) (WorkflowResult, error) {
			return WorkflowResult{}, stepError(name, i, s.Op.Name, what, err)
		}
		with := map[string]any{}
		if err := decodeJSON([]byte(cmp.Or(s.With, "{}")), &with); err != nil {
			return fail("", fmt.Errorf("decode the generated arguments: %w", err))
		}
		if s.ForEach == "" {
			out, raw, err := callStep(st, s.Op, with, inputs, env, nil)
			if err != nil {
				return fail("", err)
			}
			res.Calls = append(res.Calls, WorkflowCall{Call: s.Op.Name, Args: raw, Result: s.shown(out)})
			if s.As != "" {
				if env[s.As], err = asJSON(out); err != nil {
					return fail("", err)
				}
			}
			continue
		}
		list, err := resolve(s.ForEach, inputs, env, nil)
		if err != nil {
			return fail("", err)
		}
		items, ok := list.([]any)
		if !ok && list != nil {
			return fail("", Errorf("%s is %s, not a list to call %s for each element of", s.ForEach, jsonType(list), s.Op.Name))
		}
		outs := []any{}
		for j, item := range items {
			out, raw, err := callStep(st, s.Op, with, inputs, env, item)
			if err != nil {
				return fail(fmt.Sprintf(", element %d of %s", j+1, s.ForEach), err)
			}
			res.Calls = append(res.Calls, WorkflowCall{Call: s.Op.Name, Args: raw, Result: s.shown(out)})
			v, err := asJSON(out)
			if err != nil {
				return fail("", err)
			}
			outs = append(outs, v)
		}
		if s.As != "" {
			env[s.As] = outs
		}
	}
	return res, nil
}

// stepError says which step failed and that nothing changed. It wraps err,
// so a ToolError stays one and the model reads it as the call's fault.
func stepError(workflow string, i int, op, where string, err error) error {
	return fmt.Errorf("workflow %s, step %d (%s%s): %w; nothing was changed", workflow, i+1, op, where, err)
}

// callStep binds one call's arguments, checks them as a tool call's are
// and runs it. It returns the result and the arguments it was given.
func callStep(st Store, op *Operation, with, inputs, env map[string]any, item any) (any, json.RawMessage, error) {
	args := map[string]any{}
	for k, v := range with {
		ref, ok := v.(string)
		if !ok || !strings.HasPrefix(ref, "$") {
			args[k] = v
			continue
		}
		name, _, _ := strings.Cut(ref[1:], ".")
		if _, bound := env[name]; !bound && name != "item" {
			if _, given := inputs[name]; !given {
				continue // an optional workflow argument left out: so is this one
			}
		}
		x, err := resolve(ref, inputs, env, item)
		if err != nil {
			return nil, nil, err
		}
		args[k] = x
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, nil, fmt.Errorf("encode arguments: %w", err)
	}
	t := &Tool{Name: op.Name, Operations: []*Operation{op}}
	_, checked, err := t.Prepare(raw)
	if err != nil {
		return nil, raw, err
	}
	out, err := st.Call(op.Name, checked)
	return out, checked, err
}

// resolve returns the value a binding names: a workflow argument, a value
// in an earlier step's result, or one in the current element.
func resolve(ref string, inputs, env map[string]any, item any) (any, error) {
	parts := strings.Split(strings.TrimPrefix(ref, "$"), ".")
	name := parts[0]
	v, ok := env[name]
	switch {
	case name == "item":
		v, ok = item, true
	case !ok:
		v, ok = inputs[name]
	}
	if !ok {
		return nil, Errorf("%s names no value", ref)
	}
	for _, p := range parts[1:] {
		switch c := v.(type) {
		case map[string]any:
			x, ok := c[p]
			if !ok {
				return nil, Errorf("%s: no %q in %s", ref, p, display(v))
			}
			v = x
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(c) {
				return nil, Errorf("%s: %q is not an index of a list of %d", ref, p, len(c))
			}
			v = c[n]
		default:
			return nil, Errorf("%s: %s has no %q", ref, display(v), p)
		}
	}
	return v, nil
}

// asJSON is v as its JSON decodes: what a binding's path walks. Numbers
// stay json.Number, so that an integer is passed on as written.
func asJSON(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode a result: %w", err)
	}
	var out any
	if err := decodeJSON(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func decodeJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
