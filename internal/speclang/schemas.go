package speclang

import (
	"fmt"

	"github.com/mcpgranite/granite/internal/combine"
	"github.com/mcpgranite/granite/internal/opkind"
)

// schemas computes every operation's argument schema and example, and
// every multi-operation tool's union of arguments and schema.
func (b *builder) schemas() {
	for _, o := range b.d.Operations {
		o.Schema = mustJSON(objectSchema(o.Args))
		o.Example = mustJSON(b.example(o))
	}
	for _, lv := range b.d.Levels {
		for _, t := range lv.Tools {
			if len(t.Operations) == 1 {
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

// objectSchema is the schema of an argument object.
func objectSchema(args []*Arg) Object {
	props := Object{}
	var required []string
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

// union computes the schema of a tool with an action (combine.Schema, which
// the runtime calls again when a domain registers) after checking that an
// argument several operations share has one Go type.
func (b *builder) union(lv *LevelTools, t *Tool) {
	first := map[string]*Arg{}
	users := map[string]string{}
	for _, o := range t.Operations {
		for _, a := range o.Args {
			m, ok := first[a.Name]
			if !ok {
				first[a.Name], users[a.Name] = a, o.Name
				continue
			}
			if m.GoType.String() != a.GoType.String() {
				b.errorf(b.opNode[o], "argument %q is %s in operation %q but %s in %q, both in %s tool %q; expected one type per argument name in a tool (rename one)",
					a.Name, a.JSONType, o.Name, m.JSONType, users[a.Name], lv.Level, t.Name)
			}
		}
	}
	ops := make([]combine.Op, len(t.Operations))
	for i, o := range t.Operations {
		ops[i] = combine.Op{Name: o.Name, Description: o.Description, Schema: o.Schema}
	}
	schema, err := combine.Schema(ops)
	if err != nil {
		panic(fmt.Sprintf("speclang: combine the schemas of %s tool %s: %v", lv.Level, t.Name, err)) // objectSchema wrote them
	}
	t.Schema = schema
}

func OpNames(ops []*Operation) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

// example is a valid argument object for o against the seed data: the
// first seed row's ID and values, the last row's values for updates so
// that the example changes something.
func (b *builder) example(o *Operation) Object {
	if o.Kind == opkind.Workflow {
		return b.workflowExample(o)
	}
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
