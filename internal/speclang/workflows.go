package speclang

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/opkind"
)

// A workflow is declared in two passes: its own arguments with the other
// operations (workflowArgs), its steps once every operation is known
// (workflows), since a step may call an operation declared after it.

// refPattern is a binding: $name, then a path of keys or list indexes.
var refPattern = regexp.MustCompile(`^\$([a-z][a-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)$`)

// itemRef is the name of the current element inside for_each.
const itemRef = "item"

// workflowArgs builds a workflow's own arguments, each typed by the entity
// field it names, so that it is validated like any operation's.
func (b *builder) workflowArgs(o *Operation, n *node) {
	argsNode := n.get("arguments")
	declared := argsNode.mapKeys()
	required := map[string]bool{}
	for _, r := range n.get("required").list() {
		if argsNode.get(r.str()) == nil {
			b.errorf(r, "found required %q, which is not among this workflow's arguments; expected one of %s", r.str(), orNone(keyList(declared)))
		}
		required[r.str()] = true
	}
	for i, k := range declared {
		an := argsNode.vals[i]
		f := b.fieldRef(an.get("field"))
		if f == nil {
			continue
		}
		a := fieldArg(f, k.str(), RoleInput, required[k.str()], "")
		if d := strings.TrimSpace(an.get("description").str()); d != "" {
			a.Schema = a.Schema.Set("description", strings.Join(nonEmpty(d, constraintWords(f)), " "))
		}
		a.GoName = GoName(a.Name)
		o.Args = append(o.Args, a)
	}
}

// fieldRef resolves <entity>.<field>, the type of a workflow argument.
func (b *builder) fieldRef(n *node) *Field {
	if n == nil {
		return nil
	}
	en, fn, _ := strings.Cut(n.str(), ".")
	e := b.entities[en]
	if e == nil {
		b.errorf(n, "found field %q of entity %q, which is not declared; expected <entity>.<field> with an entity among %s", n.str(), en, strings.Join(b.entityNames(), ", "))
		return nil
	}
	f := b.fieldOf(e, fn)
	switch {
	case f == nil:
		b.errorf(n, "found field %q, which entity %q does not have; expected %s.<field> with one of %s", n.str(), e.Name, e.Name, b.fieldNames(e, func(*Field) bool { return true }))
		return nil
	case f.Type == TReference && f.Ref == nil:
		return nil // the dangling reference is reported where it is declared
	}
	return f
}

// keyList joins the keys of a mapping, "" for none.
func keyList(keys []*node) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.str()
	}
	return strings.Join(out, ", ")
}

// workflows resolves every workflow's steps, then refuses cycles, then
// derives what each does from what its steps do.
func (b *builder) workflows() {
	var wfs []*Operation
	for _, o := range b.d.Operations {
		if o.Kind == opkind.Workflow {
			wfs = append(wfs, o)
			b.steps(o, b.opNode[o])
		}
	}
	for _, o := range wfs {
		b.cycles(o)
	}
	done := map[*Operation]bool{}
	for _, o := range wfs {
		workflowTraits(o, done)
	}
}

// steps resolves a workflow's steps: each call, its bindings and its name.
func (b *builder) steps(o *Operation, n *node) {
	bound := map[string]*shape{} // the shapes of earlier steps' results, by as name
	var asNames []string
	for _, sn := range n.get("steps").list() {
		callNode := sn.get("call")
		callee := b.ops[callNode.str()]
		if callee == nil {
			b.errorf(callNode, "found a call to %q, which is not an operation of this domain; expected one of %s", callNode.str(), strings.Join(b.opNames(), ", "))
		}
		st := &Step{Call: callee, As: sn.get("as").str()}
		scope := refScope{wf: o, bound: bound, asNames: asNames}
		if fe := sn.get("for_each"); fe != nil {
			st.ForEach = fe.str()
			scope.inForEach, scope.item = true, b.forEach(fe, scope)
		}
		given := map[string]bool{}
		with := sn.get("with")
		for i, k := range with.mapKeys() {
			given[k.str()] = true
			vn := with.vals[i]
			var a *Arg
			if callee != nil {
				if a = argNamed(callee, k.str()); a == nil {
					b.errorf(k, "found argument %q, which %s does not take; expected one of %s", k.str(), callee.Name, argNameList(callee))
				}
			}
			if s, ok := vn.scalar.(string); ok && strings.HasPrefix(s, "$") {
				if wa, _ := b.ref(vn, scope); wa != nil && a != nil {
					b.sameType(vn, wa, a, callee)
				}
				if a != nil {
					st.With = append(st.With, Binding{Arg: a, Ref: s})
				}
				continue
			}
			if a != nil {
				if v, ok := b.literal(callee, a, vn); ok {
					st.With = append(st.With, Binding{Arg: a, Value: v})
				}
			}
		}
		if callee != nil {
			for _, a := range callee.Args {
				if a.Required && !given[a.Name] {
					b.errorf(callNode, "found no value for argument %q, which %s requires; expected it under with", a.Name, callee.Name)
				}
			}
		}
		if an := sn.get("as"); an != nil {
			_, taken := bound[st.As]
			switch {
			case taken:
				b.errorf(an, "found as %q, which an earlier step already names; expected a name unique in the workflow", st.As)
			case argNamed(o, st.As) != nil || st.As == itemRef:
				b.errorf(an, "found as %q, which is a workflow argument or $item; expected another name", st.As)
			}
			var result *shape
			if callee != nil {
				result = resultShape(callee)
			}
			if st.ForEach != "" {
				result = listOf(result)
			}
			bound[st.As] = result
			asNames = append(asNames, st.As)
		}
		if callee != nil {
			b.stepNode[st] = sn
			o.Steps = append(o.Steps, st)
		}
	}
}

// refScope is what a binding of one step may refer to.
type refScope struct {
	wf      *Operation
	bound   map[string]*shape
	asNames []string
	// inForEach says the step has for_each; item is then the shape of its
	// elements.
	inForEach bool
	item      *shape
}

// ref checks a binding against what is bound where it is written. It
// returns the workflow argument it names, if it names one, and the shape
// of the value it names (nil: unknown).
func (b *builder) ref(n *node, sc refScope) (*Arg, *shape) {
	m := refPattern.FindStringSubmatch(n.str())
	if m == nil {
		b.errorf(n, "found %q, which is not a binding; expected $<argument>, $<as>.<path> or $item.<path> (keys and list indexes joined by dots)", n.str())
		return nil, nil
	}
	name, path := m[1], strings.Split(strings.TrimPrefix(m[2], "."), ".")
	if m[2] == "" {
		path = nil
	}
	declared := b.opNode[sc.wf].get("arguments")
	if wa := argNamed(sc.wf, name); wa != nil || declared.get(name) != nil {
		if len(path) > 0 {
			b.errorf(n, "found %q, a path into workflow argument %q; expected $%s alone", n.str(), name, name)
			return nil, nil
		}
		if wa != nil && wa.Field != nil {
			return wa, fieldShapeOf(wa.Field)
		}
		return wa, nil // nil when its field is not one, which is reported where it is declared
	}
	var root *shape
	switch result, ok := sc.bound[name]; {
	case ok:
		root = result
	case name == itemRef && !sc.inForEach:
		b.errorf(n, "found %q outside for_each; expected $item only in a step with for_each", n.str())
		return nil, nil
	case name == itemRef:
		root = sc.item
	default:
		b.errorf(n, "found %q, but $%s is bound to nothing here; expected a workflow argument (%s), an earlier step's as (%s) or $item inside for_each",
			n.str(), name, orNone(keyList(declared.mapKeys())), orNone(strings.Join(sc.asNames, ", ")))
		return nil, nil
	}
	s, problem := root.walk(path)
	if problem != "" {
		b.errorf(n, "found %q, but %s", n.str(), strings.Replace(problem, "$…", "$"+name, 1))
	}
	return nil, s
}

// fieldShapeOf is the shape of a workflow argument's value.
func fieldShapeOf(f *Field) *shape {
	switch f.Type {
	case TObject:
		return nil
	case TArray:
		return listOf(scalarShape)
	}
	return scalarShape
}

// forEach checks the list a step iterates over, an earlier result or a
// workflow argument, never $item itself, and returns its elements' shape.
func (b *builder) forEach(n *node, sc refScope) *shape {
	sc.inForEach = false // the list is known before the first element is
	_, s := b.ref(n, sc)
	if s != nil && !s.list {
		b.errorf(n, "found for_each over %s, which is not a list; expected a list in an earlier step's result (like $found.items) or an array argument", n.str())
		return nil
	}
	if s == nil {
		return nil
	}
	return s.elem
}

// sameType checks that a workflow argument bound to a called operation's
// argument has its type, and is required where that one is.
func (b *builder) sameType(n *node, wa, a *Arg, callee *Operation) {
	switch {
	case wa.JSONType != a.JSONType:
		b.errorf(n, "found %q, %s %s, for argument %q of %s, which takes %s %s; expected a workflow argument of the same type",
			n.str(), article(wa.JSONType), wa.JSONType, a.Name, callee.Name, article(a.JSONType), a.JSONType)
	case a.Required && !wa.Required:
		b.errorf(n, "found optional workflow argument %q for argument %q, which %s requires; expected %q under the workflow's required", n.str(), a.Name, callee.Name, wa.Name)
	}
}

// literal checks a literal against the argument it is given for, as a
// seed value is checked against its field.
func (b *builder) literal(callee *Operation, a *Arg, n *node) (any, bool) {
	bad := func(expected string) (any, bool) {
		b.errorf(n, "found %s for argument %q of %s; expected %s", n.text(), a.Name, callee.Name, expected)
		return nil, false
	}
	if a.Field != nil && a.Role != RoleID {
		return b.value(a.Field, n)
	}
	v := n.scalar
	switch {
	case n.isMap || n.isSeq || v == nil:
		return bad("a " + a.JSONType)
	case len(a.Enum) > 0:
		if s, ok := v.(string); !ok || !slices.Contains(a.Enum, s) {
			return bad("one of " + strings.Join(a.Enum, ", "))
		}
	case a.JSONType == "integer":
		i, ok := v.(int64)
		if !ok || i < 1 || a.Role == RoleLimit && int(i) > callee.Limit {
			return bad(a.Hint)
		}
	case a.JSONType == "string":
		if _, ok := v.(string); !ok {
			return bad(a.Hint)
		}
	}
	return v, true
}

// cycles reports a workflow that calls itself, directly or through other
// workflows, at its step that starts the loop.
func (b *builder) cycles(o *Operation) {
	for _, st := range o.Steps {
		if st.Call.Kind != opkind.Workflow {
			continue
		}
		if path := callPath(st.Call, o, map[*Operation]bool{}); path != nil {
			chain := append([]string{o.Name}, path...)
			b.errorf(b.stepNode[st].get("call"), "found a call to %q, which leads back to %q (%s); expected workflows that do not call themselves, directly or through another workflow",
				st.Call.Name, o.Name, strings.Join(chain, " → "))
			return
		}
	}
}

// callPath returns the workflows from one to target, both included, that
// a chain of steps passes through; nil when none leads there.
func callPath(from, target *Operation, seen map[*Operation]bool) []string {
	if from == target {
		return []string{from.Name}
	}
	if seen[from] {
		return nil
	}
	seen[from] = true
	for _, st := range from.Steps {
		if st.Call.Kind != opkind.Workflow {
			continue
		}
		if rest := callPath(st.Call, target, seen); rest != nil {
			return append([]string{from.Name}, rest...)
		}
	}
	return nil
}

// workflowTraits derives a workflow's annotations and default category
// from its steps: it reads only if every step reads, is destructive if a
// step is. Steps may feed one another, so a writing workflow is not
// promised idempotent even when each of its steps is.
func workflowTraits(o *Operation, done map[*Operation]bool) {
	if done[o] {
		return
	}
	done[o] = true
	o.ReadOnly = true
	for _, st := range o.Steps {
		if st.Call.Kind == opkind.Workflow {
			workflowTraits(st.Call, done)
		}
		o.ReadOnly = o.ReadOnly && st.Call.ReadOnly
		o.Destructive = o.Destructive || st.Call.Destructive
	}
	o.Idempotent = o.ReadOnly
	if o.Category == "" {
		o.Category = "action_execution"
		if o.ReadOnly {
			o.Category = "status_query"
		}
	}
}

// workflowExample is a valid call of a workflow: each argument with the
// value its field has in the first seed row that has one. Optional ones
// are given too: a workflow whose steps each set what is given (every
// setting optional) does nothing, and refuses, without them.
func (b *builder) workflowExample(o *Operation) Object {
	ex := Object{}
	for _, a := range o.Args {
		if v, ok := b.seedValue(a.Field); ok {
			ex = append(ex, kv{a.Name, v})
		}
	}
	return ex
}

// seedValue is a value of field f in the seed data.
func (b *builder) seedValue(f *Field) (any, bool) {
	for _, e := range b.d.Entities {
		if !slices.Contains(e.Fields, f) {
			continue
		}
		for _, r := range e.Seed {
			if v, ok := r.Values[f.Name]; ok {
				return v, true
			}
		}
	}
	return nil, false
}

func argNamed(o *Operation, name string) *Arg {
	for _, a := range o.Args {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func argNameList(o *Operation) string {
	names := make([]string, len(o.Args))
	for i, a := range o.Args {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// WithJSON is the JSON object of a step's arguments as the runtime reads
// it (mcpdomain.Step.With): each binding as written, each literal as its
// value, in spec order.
func (s *Step) WithJSON() string {
	with := Object{}
	for _, bd := range s.With {
		var v any = bd.Ref
		if bd.Ref == "" {
			v = bd.Value
		}
		with = append(with, kv{bd.Arg.Name, v})
	}
	return mustJSON(with)
}
