package speclang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/opkind"
)

// schemas computes every operation's argument schema and example, and
// every multi-operation tool's union of arguments and schema.
func (b *builder) schemas() {
	for _, o := range b.d.Operations {
		o.Schema = mustJSON(objectSchema(o.Args, nil))
		o.Example = mustJSON(b.example(o))
	}
	for _, lv := range b.d.Levels {
		for _, t := range lv.Tools {
			if len(t.Operations) == 1 {
				t.Args = t.Operations[0].Args
				t.Schema = t.Operations[0].Schema
				continue
			}
			b.union(lv, t)
		}
	}
}

func mustJSON(v any) string {
	out, err := Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("generator: marshal schema: %v", err)) // an Object of plain values cannot fail
	}
	return string(out)
}

// objectSchema is the schema of an argument object; extra properties go
// first (the action of a union).
func objectSchema(args []*Arg, extra *kv) Object {
	props := Object{}
	var required []string
	if extra != nil {
		props = append(props, *extra)
		required = append(required, extra.K)
	}
	for _, a := range args {
		props = append(props, kv{a.Name, a.Schema})
		if a.Required {
			required = append(required, a.Name)
		}
	}
	s := Object{{"type", "object"}, {"properties", props}}
	if len(required) > 0 {
		s = append(s, kv{"required", required})
	}
	return append(s, kv{"additionalProperties", false})
}

// union merges the arguments of a tool's operations. An argument shared by
// several operations must have one Go type; its schema for the model is
// widened (enum values joined, differing bounds and patterns dropped) and
// the exact schema is still enforced per action.
func (b *builder) union(lv *LevelTools, t *Tool) {
	users := map[string][]string{}
	merged := map[string]*Arg{}
	for _, o := range t.Operations {
		for _, a := range o.Args {
			users[a.Name] = append(users[a.Name], o.Name)
			m, ok := merged[a.Name]
			if !ok {
				c := *a
				c.Schema = slices.Clone(a.Schema)
				c.Required = false
				merged[a.Name] = &c
				t.Args = append(t.Args, &c)
				continue
			}
			if m.GoType.String() != a.GoType.String() {
				b.errorf(b.opNode[o], "argument %q is %s in operation %q but %s in %q, both in %s tool %q; expected one type per argument name in a tool (rename one)",
					a.Name, a.JSONType, o.Name, m.JSONType, users[a.Name][0], lv.Level, t.Name)
				continue
			}
			widen(m, a)
		}
	}
	for _, a := range t.Args {
		if u := users[a.Name]; len(u) < len(t.Operations) {
			desc, _ := a.Schema.get("description")
			a.Schema = a.Schema.Set("description", UsedBy(fmt.Sprint(desc), u))
		}
	}
	var acts []string
	for _, o := range t.Operations {
		acts = append(acts, fmt.Sprintf("%s: %s%s", o.Name, strings.TrimSuffix(o.Description, "."), argWords(o)))
	}
	action := kv{"action", Object{
		{"type", "string"},
		{"description", "What to do. " + strings.Join(acts, " ")},
		{"enum", OpNames(t.Operations)},
	}}
	t.Schema = mustJSON(objectSchema(t.Args, &action))
}

// argWords lists which arguments an action takes and which it needs,
// since a union schema can only require "action" itself.
func argWords(o *Operation) string {
	var req, opt []string
	for _, a := range o.Args {
		if a.Required {
			req = append(req, a.Name)
		} else {
			opt = append(opt, a.Name)
		}
	}
	return ActionUsage(req, opt)
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

func OpNames(ops []*Operation) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

// widen merges argument a into m for the model-facing union schema; a
// default survives only where every operation has the same one, since the
// harness counts an argument at its default as left out.
func widen(m, a *Arg) {
	for _, k := range []string{"minimum", "maximum", "pattern", "format", "maxLength", "default"} {
		mv, mok := m.Schema.get(k)
		av, aok := a.Schema.get(k)
		if mok != aok || mok && fmt.Sprint(mv) != fmt.Sprint(av) {
			m.Schema = remove(m.Schema, k)
		}
	}
	if len(m.Enum) > 0 || len(a.Enum) > 0 {
		if len(m.Enum) == 0 || len(a.Enum) == 0 {
			m.Schema, m.Enum = remove(m.Schema, "enum"), nil
		} else {
			for _, v := range a.Enum {
				if !slices.Contains(m.Enum, v) {
					m.Enum = append(slices.Clone(m.Enum), v)
				}
			}
			m.Schema = m.Schema.Set("enum", m.Enum)
		}
	}
	md, _ := m.Schema.get("description")
	ad, _ := a.Schema.get("description")
	if md != ad && !strings.Contains(md.(string), ad.(string)) {
		m.Schema = m.Schema.Set("description", md.(string)+" / "+ad.(string))
	}
}

func remove(o Object, k string) Object {
	return slices.DeleteFunc(slices.Clone(o), func(e kv) bool { return e.K == k })
}

// example is a valid argument object for o against the seed data: the
// first seed row's ID and values, the last row's values for updates so
// that the example changes something.
func (b *builder) example(o *Operation) Object {
	e := o.Entity
	first, last := e.Seed[0], e.Seed[len(e.Seed)-1]
	ex := Object{}
	for _, a := range o.Args {
		switch a.Role {
		case RoleID:
			ex = append(ex, kv{a.Name, first.ID})
			if o.Kind == opkind.Delete {
				ex[len(ex)-1].V = last.ID
			}
		case RoleFilter:
			if a.Required {
				ex = append(ex, kv{a.Name, first.Values[a.Field.Name]})
			}
		case RoleValue:
			if a.Required || o.Kind == opkind.Update && len(ex) < 2 || o.Kind == opkind.UpdateWhere && len(ex) == 0 && len(o.Set) == 0 {
				ex = append(ex, kv{a.Name, last.Values[a.Field.Name]})
			}
		case RoleFunction, RoleAggField, RolePreset:
			ex = append(ex, kv{a.Name, a.Enum[0]})
		}
	}
	return ex
}
