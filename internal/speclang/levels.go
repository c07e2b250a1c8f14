package speclang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
)

// levelRange is each level's tool count by definition; a domain may
// deviate on purpose, so a deviation is a warning.
var levelRange = map[level.Level][2]int{level.L4: {8, 10}, level.L3: {4, 4}, level.L2: {2, 2}, level.L1: {1, 1}}

func (b *builder) levels(n *node) {
	d := b.d
	l4 := &LevelTools{Level: level.L4}
	for _, o := range d.Operations {
		l4.Tools = append(l4.Tools, &Tool{Name: o.Name, GoName: o.GoName, Description: o.Description, Operations: []*Operation{o}})
	}
	d.Levels = append(d.Levels, l4)
	for _, name := range level.Levels[1:] {
		lv := &LevelTools{Level: name}
		if ln := n.get(string(name)); ln != nil {
			for _, tn := range ln.list() {
				if t := b.levelTool(name, tn); t != nil {
					lv.Tools = append(lv.Tools, t)
				}
			}
		} else {
			lv.Tools = b.derivedTools(name)
		}
		d.Levels = append(d.Levels, lv)
	}
	for _, lv := range d.Levels {
		b.checkLevel(lv, n.get(string(lv.Level)))
	}
}

// levelTool resolves one tool entry of L3, L2 or L1.
func (b *builder) levelTool(lv level.Level, n *node) *Tool {
	t := &Tool{Name: n.get("name").str(), GoName: n.get("go_name").str(), Description: strings.TrimSpace(n.get("description").str())}
	var given []string
	for _, k := range []string{"operations", "category", "nature"} {
		if n.get(k) != nil {
			given = append(given, k)
		}
	}
	switch {
	case len(given) > 1:
		b.errorf(n, "found %s on tool %q; expected exactly one of operations, category or nature", strings.Join(given, " and "), t.Name)
		return nil
	case len(given) == 0 && lv != level.L1:
		b.errorf(n, "found tool %q with no operations; expected operations, category or nature", t.Name)
		return nil
	}
	switch {
	case n.get("operations") != nil:
		for _, on := range n.get("operations").list() {
			o := b.ops[on.str()]
			if o == nil {
				b.errorf(on, "found operation %q, which is not declared; expected one of %s", on.str(), strings.Join(b.opNames(), ", "))
				continue
			}
			t.Operations = append(t.Operations, o)
		}
	case n.get("category") != nil:
		c := n.get("category").str()
		t.Operations = b.opsWhere(func(o *Operation) bool { return o.Category == c })
		if len(t.Operations) == 0 {
			b.errorf(n.get("category"), "found category %q, which no operation has; expected a category with operations", c)
		}
	case n.get("nature") != nil:
		read := n.get("nature").str() == "read"
		t.Operations = b.opsWhere(func(o *Operation) bool { return o.ReadOnly == read })
		if len(t.Operations) == 0 {
			b.errorf(n.get("nature"), "found nature %q, which no operation has; expected reads and writes both present", n.get("nature").str())
		}
	default:
		t.Operations = b.d.Operations
	}
	return t
}

func (b *builder) opsWhere(keep func(*Operation) bool) []*Operation {
	var out []*Operation
	for _, o := range b.d.Operations {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

func (b *builder) opNames() []string {
	out := make([]string, len(b.d.Operations))
	for i, o := range b.d.Operations {
		out[i] = o.Name
	}
	return out
}

// derivedTools builds a level the spec leaves out.
func (b *builder) derivedTools(lv level.Level) []*Tool {
	d := b.d
	switch lv {
	case level.L3:
		var out []*Tool
		for _, c := range categories {
			ops := b.opsWhere(func(o *Operation) bool { return o.Category == c })
			if len(ops) > 0 {
				out = append(out, &Tool{Name: d.Name + "_" + c, Operations: ops,
					Description: fmt.Sprintf("%s: %s.", d.Title, strings.ReplaceAll(c, "_", " "))})
			}
		}
		return out
	case level.L2:
		var out []*Tool
		if ops := b.opsWhere(func(o *Operation) bool { return o.ReadOnly }); len(ops) > 0 {
			out = append(out, &Tool{Name: d.Name + "_query", Operations: ops, Description: fmt.Sprintf("Read anything in %s; nothing changes.", d.Title)})
		}
		if ops := b.opsWhere(func(o *Operation) bool { return !o.ReadOnly }); len(ops) > 0 {
			out = append(out, &Tool{Name: d.Name + "_control", Operations: ops, Description: fmt.Sprintf("Change %s.", d.Title)})
		}
		return out
	default:
		return []*Tool{{Name: d.Name, Operations: d.Operations, Description: fmt.Sprintf("Query and control %s.", d.Title)}}
	}
}

// checkLevel reports unreachable operations, operations exposed twice,
// duplicate tool names and a tool count off the level's definition.
func (b *builder) checkLevel(lv *LevelTools, n *node) {
	at := n
	if at == nil {
		at = b.root.get("operations")
	}
	owner := map[*Operation]string{}
	seen := map[string]bool{}
	for i, t := range lv.Tools {
		tn := at
		if n != nil && i < len(n.items) {
			tn = n.items[i]
		}
		if seen[t.Name] {
			b.errorf(tn, "found tool %q a second time at %s; expected unique tool names per level", t.Name, lv.Level)
		}
		seen[t.Name] = true
		acts := map[string]bool{}
		for _, o := range t.Operations {
			if acts[o.Name] {
				b.errorf(tn, "found action %q twice in tool %q; expected each action once", o.Name, t.Name)
			}
			acts[o.Name] = true
			if prev, ok := owner[o]; ok && prev != t.Name {
				b.errorf(tn, "found operation %q in tools %q and %q at %s; expected each operation in one tool per level", o.Name, prev, t.Name, lv.Level)
			}
			owner[o] = t.Name
		}
	}
	for _, o := range b.d.Operations {
		if _, ok := owner[o]; !ok {
			b.errorf(at, "operation %q is unreachable at %s; expected every operation in one of its tools (%s)", o.Name, lv.Level, strings.Join(toolNames(lv), ", "))
		}
	}
	// The definition counts the level's atomic tools: a workflow is a
	// composition over them, a tool at L4 beside them (what composition
	// atomic takes away).
	r := levelRange[lv.Level]
	atomic := slices.DeleteFunc(slices.Clone(lv.Tools), func(t *Tool) bool {
		return len(t.Operations) == 1 && t.Operations[0].Kind == opkind.Workflow
	})
	if c := len(atomic); c < r[0] || c > r[1] {
		want := fmt.Sprintf("%d", r[0])
		if r[0] != r[1] {
			want = fmt.Sprintf("%d to %d", r[0], r[1])
		}
		b.warnf(at, "%s has %d tools besides its workflows; its definition has %s (fine if deliberate)", lv.Level, c, want)
	}
}

func toolNames(lv *LevelTools) []string {
	out := make([]string, len(lv.Tools))
	for i, t := range lv.Tools {
		out[i] = t.Name
	}
	return out
}

// goNames fixes the Go name of every tool and checks that the generated
// package's identifiers are valid and distinct.
func (b *builder) goNames() {
	type decl struct {
		what string
		at   *node
	}
	taken := map[string]decl{}
	claim := func(name, what string, at *node) {
		switch {
		case !validGoIdent(name):
			b.errorf(at, "%s becomes Go identifier %q, which is not valid; expected a go_name override", what, name)
		case reservedGoNames[name]:
			b.errorf(at, "%s becomes Go identifier %q, which the generated package declares itself; expected a go_name override", what, name)
		default:
			if prev, ok := taken[name]; ok {
				b.errorf(at, "%s becomes Go identifier %q, as does %s; expected a go_name override on one of them", what, name, prev.what)
				return
			}
			taken[name] = decl{what, at}
		}
	}
	for _, e := range b.d.Entities {
		en := b.entityNode[e]
		claim(e.GoName, fmt.Sprintf("entity %q", e.Name), en)
		fields := map[string]string{"ID": "id"}
		for _, f := range e.Fields {
			fn := b.fieldDecl[f]
			if !validGoIdent(f.GoName) {
				b.errorf(fn, "field %q becomes Go identifier %q, which is not valid; expected a go_name override", f.Name, f.GoName)
			} else if prev, ok := fields[f.GoName]; ok {
				b.errorf(fn, "field %q becomes Go field %q, as does field %q; expected a go_name override", f.Name, f.GoName, prev)
			}
			fields[f.GoName] = f.Name
		}
	}
	for _, en := range b.d.Enums {
		f := b.enumDecl[en]
		what := fmt.Sprintf("the enum type of field %q", f.Name)
		claim(en.GoName, what, b.fieldDecl[f])
		consts := map[string]string{}
		for _, v := range en.Values {
			if prev, ok := consts[v.GoName]; ok {
				b.errorf(b.fieldDecl[f], "values %q and %q of field %q both become Go identifier %q; expected values that differ in more than punctuation",
					prev, v.Value, f.Name, v.GoName)
				continue
			}
			consts[v.GoName] = v.Value
			claim(v.GoName, fmt.Sprintf("value %q of %s", v.Value, what), b.fieldDecl[f])
		}
	}
	for _, o := range b.d.Operations {
		on := b.opNode[o]
		if reservedStoreMethods[o.GoName] {
			b.errorf(on, "operation %q becomes Store method %q, which Store already has; expected a go_name override", o.Name, o.GoName)
		}
		claim(o.GoName+"Args", fmt.Sprintf("arguments of operation %q", o.Name), on)
	}
	// A tool's Go name names nothing generated any more (a tool with an
	// action gets its schema at run time, one with a single operation
	// shares the operation's), so it is only filled in.
	for _, lv := range b.d.Levels {
		for _, t := range lv.Tools {
			if t.GoName == "" {
				t.GoName = GoName(t.Name)
			}
		}
	}
}
