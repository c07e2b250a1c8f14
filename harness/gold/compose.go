package gold

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// Atomic is L4 gold with every call of a composite operation replaced by
// the atomic calls it performs on the store as the gold left it at that
// point. A preset becomes the list an agent needs to find the rows the
// composite's filters pick, then one update of each row it changes, with
// the fields it changes; a workflow becomes the calls it makes, its
// reads included (and a workflow it calls, expanded in turn). Nothing is
// written by hand, and nothing is trusted: run from the same store, the
// atomic calls must end in the store the composite call ends in, or
// Atomic fails, naming the call.
func Atomic(d *speclang.Domain, dom *mcpdomain.Domain, calls []*speclang.Call) ([]*speclang.Call, error) {
	out, _, err := atomicOn(d, dom.NewStore(), calls, "gold call")
	return out, err
}

// atomicOn expands calls made in order on store, which it changes as they
// do, and returns the atomic calls and the store after them; where names
// a call in a message ("gold call", "its workflow's call").
func atomicOn(d *speclang.Domain, store mcpdomain.Store, calls []*speclang.Call, where string) ([]*speclang.Call, mcpdomain.Store, error) {
	var out []*speclang.Call
	for i, c := range calls {
		at := fmt.Sprintf("%s %d, %s", where, i+1, c.Op)
		op := operation(d, c.Op)
		if op == nil || op.Kind != opkind.Preset && op.Kind != opkind.Workflow {
			if _, err := store.Call(c.Op, c.JSON()); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", at, err)
			}
			out = append(out, c)
			continue
		}
		want := store.CloneStore()
		res, err := want.Call(c.Op, c.JSON())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", at, err)
		}
		var atomic []*speclang.Call
		got := store.CloneStore()
		if op.Kind == opkind.Preset {
			if atomic, err = expandPreset(d, op, c, store); err == nil {
				for _, a := range atomic {
					if _, err = got.Call(a.Op, a.JSON()); err != nil {
						err = fmt.Errorf("its atomic call %s %s fails: %w", a.Op, a.JSON(), err)
						break
					}
				}
			}
		} else {
			atomic, got, err = atomicOn(d, got, workflowCalls(res), "its workflow's call")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", at, err)
		}
		if !bytes.Equal(want.Snapshot(), got.Snapshot()) {
			return nil, nil, fmt.Errorf("%s %s: its atomic calls (%s) do not end in the store it ends in", at, c.JSON(), callList(atomic))
		}
		store = got
		out = append(out, atomic...)
	}
	return out, store, nil
}

// workflowCalls are the calls a workflow's result says it made, in order.
func workflowCalls(res any) []*speclang.Call {
	wr, _ := res.(mcpdomain.WorkflowResult)
	out := make([]*speclang.Call, 0, len(wr.Calls))
	for _, c := range wr.Calls {
		args := map[string]any{}
		_ = json.Unmarshal(c.Args, &args) // the runtime wrote them
		out = append(out, &speclang.Call{Tool: c.Call, Op: c.Call, Args: args})
	}
	return out
}

// expandPreset is the atomic calls of one preset call on store.
func expandPreset(d *speclang.Domain, op *speclang.Operation, c *speclang.Call, store mcpdomain.Store) ([]*speclang.Call, error) {
	mode, _ := c.Args[op.PresetArg].(string)
	i := slices.IndexFunc(op.Presets, func(p *speclang.Preset) bool { return p.Name == mode })
	if i < 0 {
		return nil, fmt.Errorf("no preset %q", mode)
	}
	preset := op.Presets[i]
	// The composite's own filters pick the rows; the list finds them.
	filters := map[string]any{}
	for _, a := range op.Args {
		if v, ok := c.Args[a.Name]; ok && a.Role == speclang.RoleFilter {
			filters[a.Field.Name] = v
		}
	}
	list, err := listCall(d, op.Entity, filters)
	if err != nil {
		return nil, err
	}
	rows, err := mcpdomain.Rows(store.Snapshot())
	if err != nil {
		return nil, err
	}
	out := []*speclang.Call{list}
	for _, row := range rows[op.Entity.Plural] {
		if !matches(row, filters) {
			continue
		}
		// The steps apply in order, each to the row as the ones before
		// it left it (a machine started by one step is a running one to
		// the next).
		after := maps.Clone(row)
		for _, step := range preset.Steps {
			if holds(after, step.Where) {
				for _, a := range step.Set {
					after[a.Field.Name] = a.Value
				}
			}
		}
		set := map[string]any{}
		for f, v := range after {
			if cur, ok := row[f]; !ok || !sameValue(cur, v) {
				set[f] = v
			}
		}
		if len(set) == 0 {
			continue
		}
		id, _ := row["id"].(string)
		u, err := updateCall(d, op.Entity, id, set)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// listCall is a call of a list operation of entity that filters by every
// field of filters, the first the spec declares.
func listCall(d *speclang.Domain, e *speclang.Entity, filters map[string]any) (*speclang.Call, error) {
	for _, o := range d.Operations {
		if o.Kind != opkind.List || o.Entity != e {
			continue
		}
		args := map[string]any{}
		for f, v := range filters {
			if a := argFor(o, speclang.RoleFilter, f); a != nil {
				args[a.Name] = v
			}
		}
		if len(args) == len(filters) {
			return &speclang.Call{Tool: o.Name, Op: o.Name, Args: args}, nil
		}
	}
	return nil, fmt.Errorf("no list operation of %s filters by %s, the rows the composite acts on cannot be found in atomic calls", e.Plural, strings.Join(slices.Sorted(maps.Keys(filters)), ", "))
}

// updateCall is a call of an update operation of entity that sets every
// field of set on row id (or removes it, through clear_<field>, where the
// value is nil), the first the spec declares.
func updateCall(d *speclang.Domain, e *speclang.Entity, id string, set map[string]any) (*speclang.Call, error) {
	for _, o := range d.Operations {
		if o.Kind != opkind.Update || o.Entity != e {
			continue
		}
		idArg := slices.IndexFunc(o.Args, func(a *speclang.Arg) bool { return a.Role == speclang.RoleID })
		if idArg < 0 {
			continue
		}
		args := map[string]any{o.Args[idArg].Name: id}
		for f, v := range set {
			role, value := speclang.RoleValue, v
			if v == nil {
				role, value = speclang.RoleClear, true // the composite removes the value
			}
			a := argFor(o, role, f)
			if a == nil || o.Merge && a.Field.Type == speclang.TObject {
				break
			}
			args[a.Name] = value
		}
		if len(args) == len(set)+1 {
			return &speclang.Call{Tool: o.Name, Op: o.Name, Args: args}, nil
		}
	}
	return nil, fmt.Errorf("no update operation of %s sets %s, which the composite sets", e.Plural, strings.Join(slices.Sorted(maps.Keys(set)), ", "))
}

// argFor is o's argument of role on field, or nil.
func argFor(o *speclang.Operation, role speclang.ArgRole, field string) *speclang.Arg {
	for _, a := range o.Args {
		if a.Role == role && a.Field != nil && a.Field.Name == field {
			return a
		}
	}
	return nil
}

// operation is d's operation named name, or nil.
func operation(d *speclang.Domain, name string) *speclang.Operation {
	for _, o := range d.Operations {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// matches reports whether a row holds every filter's value.
func matches(row map[string]any, filters map[string]any) bool {
	for f, v := range filters {
		if cur, ok := row[f]; !ok || !sameValue(cur, v) {
			return false
		}
	}
	return true
}

// holds reports whether a row meets a where clause: each field holds its
// value, or is unset where the value is nil.
func holds(row map[string]any, where []speclang.Assign) bool {
	for _, w := range where {
		cur, ok := row[w.Field.Name]
		if w.Value == nil {
			if ok {
				return false
			}
			continue
		}
		if !ok || !sameValue(cur, w.Value) {
			return false
		}
	}
	return true
}

// sameValue compares a value decoded from a snapshot with one of the
// spec's exactly, as the harness compares values (score.SameValue).
func sameValue(a, b any) bool { return score.SameValue(a, b, true) }

// callList names calls for a message: op {args}, op {args}.
func callList(calls []*speclang.Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Op + " " + string(c.JSON())
	}
	return strings.Join(parts, ", ")
}

// Composed is a scenario's gold at an interface's level, as its
// composition makes it: as written; with every composite call expanded
// into the atomic calls it performs (Atomic); or with each run of calls a
// workflow makes called as that workflow (Composite); mapped onto the
// level.
func Composed(d *speclang.Domain, dom *mcpdomain.Domain, spec surface.Spec, s *speclang.Scenario) ([]*speclang.Call, error) {
	var l4 []*speclang.Call
	var err error
	switch spec.Get("composition") {
	case "atomic":
		l4, err = Atomic(d, dom, s.Gold[level.L4])
	case "composite":
		l4, err = Composite(d, dom, s.Gold[level.L4])
	default:
		return s.Gold[spec.Level], nil
	}
	if err != nil {
		return nil, err
	}
	return d.CallsAt(spec.Level, l4), nil
}

// Composite is L4 gold with each run of calls that one call of a workflow
// makes, from the store at that point, replaced by that call: the task in
// fewer calls. A run is replaced when, from the same store, the workflow
// ends in the store the run ends in, every write of the run is one the
// workflow makes and the other way round (both in their atomic form: a
// preset is the updates it makes), and every read of the run is covered
// by a read of the workflow (covers): nothing the run did or found is
// lost.
// The workflow's arguments are read off the run's calls, where its steps
// bind them; the longest run that matches wins, workflows in spec order.
func Composite(d *speclang.Domain, dom *mcpdomain.Domain, calls []*speclang.Call) ([]*speclang.Call, error) {
	var workflows []*speclang.Operation
	for _, o := range d.Operations {
		if o.Kind == opkind.Workflow {
			workflows = append(workflows, o)
		}
	}
	store := dom.NewStore()
	var out []*speclang.Call
	for i := 0; i < len(calls); {
		var best *speclang.Call
		var bestLen int
		for _, w := range workflows {
			if c, n := contract(d, w, store, calls[i:]); n > bestLen {
				best, bestLen = c, n
			}
		}
		if bestLen < 2 {
			if _, err := store.Call(calls[i].Op, calls[i].JSON()); err != nil {
				return nil, fmt.Errorf("gold call %d, %s: %w", i+1, calls[i].Op, err)
			}
			out = append(out, calls[i])
			i++
			continue
		}
		if _, err := store.Call(best.Op, best.JSON()); err != nil {
			return nil, fmt.Errorf("gold calls %d-%d as %s: %w", i+1, i+bestLen, best.Op, err)
		}
		out = append(out, best)
		i += bestLen
	}
	return out, nil
}

// contract is the call of workflow w that does what the longest run at
// the start of calls does from store, and the run's length; 0 when no
// run of two or more calls is w's.
func contract(d *speclang.Domain, w *speclang.Operation, store mcpdomain.Store, calls []*speclang.Call) (*speclang.Call, int) {
	args := map[string]any{}
	for _, a := range w.Args {
		if v, ok := boundValue(w, a, calls); ok {
			args[a.Name] = v
		} else if a.Required {
			return nil, 0
		}
	}
	c := &speclang.Call{Tool: w.Name, Op: w.Name, Args: args}
	after := store.CloneStore()
	res, err := after.Call(w.Name, c.JSON())
	if err != nil {
		return nil, 0
	}
	made, _, err := atomicOn(d, store.CloneStore(), workflowCalls(res), "its workflow's call")
	if err != nil {
		return nil, 0
	}
	want := after.Snapshot()
	// The run is compared in its atomic form too, so a preset it calls
	// is the updates the workflow would make.
	run := store.CloneStore()
	var ran []*speclang.Call
	best := 0
	for n, g := range calls {
		var expanded []*speclang.Call
		if expanded, run, err = atomicOn(d, run, []*speclang.Call{g}, "gold call"); err != nil {
			break
		}
		ran = append(ran, expanded...)
		if n+1 >= 2 && bytes.Equal(run.Snapshot(), want) && sameWork(d, ran, made) {
			best = n + 1
		}
	}
	return c, best
}

// boundValue is the value of workflow argument a in the first of calls
// to an operation whose argument a workflow step binds to $a.
func boundValue(w *speclang.Operation, a *speclang.Arg, calls []*speclang.Call) (any, bool) {
	for _, s := range w.Steps {
		for _, b := range s.With {
			if b.Ref != "$"+a.Name {
				continue
			}
			for _, c := range calls {
				if v, ok := c.Args[b.Arg.Name]; ok && c.Op == s.Call.Name {
					return v, true
				}
			}
		}
	}
	return nil, false
}

// sameWork reports whether a run of gold calls writes what the
// workflow's calls made write, neither more nor less, and reads nothing
// they do not find too.
func sameWork(d *speclang.Domain, run, made []*speclang.Call) bool {
	key := func(c *speclang.Call) string { return c.Op + " " + string(c.JSON()) }
	writes := func(cs []*speclang.Call) []string {
		var out []string
		for _, c := range cs {
			if o := operation(d, c.Op); o != nil && !o.ReadOnly {
				out = append(out, key(c))
			}
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(writes(run), writes(made)) {
		return false
	}
	for _, c := range run {
		if o := operation(d, c.Op); o != nil && o.ReadOnly && !slices.ContainsFunc(made, func(m *speclang.Call) bool { return covers(m, c) }) {
			return false
		}
	}
	return true
}

// covers reports whether read m stands for read c in a workflow: the same
// operation, and no argument both give with different values, so that m
// reads the rows c is about (those of the same item, room or line), if
// through other filters besides.
func covers(m, c *speclang.Call) bool {
	if m.Op != c.Op {
		return false
	}
	for k, v := range m.Args {
		if cv, ok := c.Args[k]; ok && !sameValue(cv, v) {
			return false
		}
	}
	return true
}
