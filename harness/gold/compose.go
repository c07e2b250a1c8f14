package gold

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// Atomic is L4 gold with every call of a composite operation (a preset)
// replaced by the atomic calls it performs on the store as the gold left
// it at that point: the list an agent needs to find the rows the
// composite's filters pick, then one update of each row it changes, with
// the fields it changes. Nothing is written by hand, and nothing is
// trusted: run from the same store, the atomic calls must end in the
// store the composite call ends in, or Atomic fails, naming the call.
func Atomic(d *speclang.Domain, dom *mcpdomain.Domain, calls []*speclang.Call) ([]*speclang.Call, error) {
	store := dom.NewStore()
	var out []*speclang.Call
	for i, c := range calls {
		op := operation(d, c.Op)
		if op == nil || op.Kind != opkind.Preset {
			if _, err := store.Call(c.Op, c.JSON()); err != nil {
				return nil, fmt.Errorf("gold call %d, %s: %w", i+1, c.Op, err)
			}
			out = append(out, c)
			continue
		}
		atomic, err := expandPreset(d, op, c, store)
		if err != nil {
			return nil, fmt.Errorf("gold call %d, %s: %w", i+1, c.Op, err)
		}
		want, got := store.CloneStore(), store.CloneStore()
		if _, err := want.Call(c.Op, c.JSON()); err != nil {
			return nil, fmt.Errorf("gold call %d, %s: %w", i+1, c.Op, err)
		}
		for _, a := range atomic {
			if _, err := got.Call(a.Op, a.JSON()); err != nil {
				return nil, fmt.Errorf("gold call %d, %s: its atomic call %s %s fails: %w", i+1, c.Op, a.Op, a.JSON(), err)
			}
		}
		if !bytes.Equal(want.Snapshot(), got.Snapshot()) {
			return nil, fmt.Errorf("gold call %d, %s %s: its atomic calls (%s) do not end in the store it ends in", i+1, c.Op, c.JSON(), callList(atomic))
		}
		store = got
		out = append(out, atomic...)
	}
	return out, nil
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
// field of set on row id, the first the spec declares.
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
			a := argFor(o, speclang.RoleValue, f)
			if a == nil || v == nil || o.Merge && a.Field.Type == speclang.TObject {
				break
			}
			args[a.Name] = v
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
// spec's, numbers by value.
func sameValue(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// callList names calls for a message: op {args}, op {args}.
func callList(calls []*speclang.Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Op + " " + string(c.JSON())
	}
	return strings.Join(parts, ", ")
}

// Composed is a scenario's gold at an interface's level, as its
// composition makes it: as written, or with every composite call
// expanded into the atomic calls it performs (Atomic), mapped onto
// the level.
func Composed(d *speclang.Domain, dom *mcpdomain.Domain, spec surface.Spec, s *speclang.Scenario) ([]*speclang.Call, error) {
	if spec.Get("composition") != "atomic" {
		return s.Gold[spec.Level], nil
	}
	l4, err := Atomic(d, dom, s.Gold[level.L4])
	if err != nil {
		return nil, err
	}
	return d.CallsAt(spec.Level, l4), nil
}
