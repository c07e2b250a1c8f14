package speclang

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/internal/opkind"
)

// shape is what a workflow binding's path may walk in a value known only
// at run time: an object's keys, a list's elements, or a scalar. A nil
// *shape is a value of unknown shape (a free-form object field), which
// any path walks. The shapes of results are those the runtime's result
// types marshal to (mcpdomain.ListResult and the others); a test of the
// generated code checks that every result it returns fits its shape.
type shape struct {
	keys   map[string]*shape // an object's keys; nil for a list or scalar
	elem   *shape            // a list's element, when list is set
	list   bool
	scalar bool
}

var scalarShape = &shape{scalar: true}

func listOf(elem *shape) *shape { return &shape{list: true, elem: elem} }

// object is an object whose named keys are scalars, and the keys of more
// besides.
func object(scalars string, more map[string]*shape) *shape {
	keys := map[string]*shape{}
	for _, k := range strings.Fields(scalars) {
		keys[k] = scalarShape
	}
	for k, v := range more {
		keys[k] = v
	}
	return &shape{keys: keys}
}

// rowShape is a row of e as an output shows it: its ID and fields.
func rowShape(e *Entity) *shape {
	s := object("id", nil)
	for _, f := range e.Fields {
		switch f.Type {
		case TObject:
			s.keys[f.Name] = nil
		case TArray:
			s.keys[f.Name] = listOf(scalarShape)
		default:
			s.keys[f.Name] = scalarShape
		}
	}
	return s
}

// resultShape is the shape of an operation's result; nil when unknown.
func resultShape(o *Operation) *shape {
	if o.Entity == nil && o.Kind != opkind.Workflow {
		return nil // its entity is reported undeclared
	}
	switch o.Kind {
	case opkind.Get, opkind.Create, opkind.Update:
		return rowShape(o.Entity)
	case opkind.List:
		return object("entity count total", map[string]*shape{"items": listOf(rowShape(o.Entity))})
	case opkind.UpdateWhere, opkind.Preset:
		return object("entity preset matched", map[string]*shape{"updated": listOf(scalarShape)})
	case opkind.Delete:
		return object("entity deleted", nil)
	case opkind.Aggregate:
		return object("entity function field group_by count value", map[string]*shape{"groups": listOf(object("key count value", nil))})
	case opkind.Workflow:
		return object("workflow", map[string]*shape{"calls": listOf(object("call", map[string]*shape{"args": nil, "result": nil}))})
	}
	return nil
}

// walk follows a binding's path (after its name) through s and returns
// the shape it ends at, or what is wrong with it.
func (s *shape) walk(path []string) (*shape, string) {
	for i, p := range path {
		at := strings.Join(append([]string{"$…"}, path[:i]...), ".") // "$…" stands for the binding's name
		switch {
		case s == nil:
			return nil, ""
		case s.keys != nil:
			next, ok := s.keys[p]
			if !ok {
				keys := make([]string, 0, len(s.keys))
				for k := range s.keys {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return nil, fmt.Sprintf("%s has no key %q; expected one of %s", at, p, strings.Join(keys, ", "))
			}
			s = next
		case s.list:
			if _, err := strconv.Atoi(p); err != nil {
				return nil, fmt.Sprintf("%s is a list, which has no key %q; expected an index (0, 1, …) or for_each over it", at, p)
			}
			s = s.elem
		default:
			return nil, fmt.Sprintf("%s is a single value, which has no key %q", at, p)
		}
	}
	return s, ""
}
