package mcpdomain

import (
	"fmt"
	"strconv"
	"strings"
)

// Table holds the rows of one entity in ascending ID order. It is not
// goroutine-safe on its own: the generated Store guards all of its tables
// with one lock, so that an operation touching several tables is atomic.
type Table[T any] struct {
	entity string
	prefix string
	digits int
	rows   []T
	index  map[string]int
	next   int
	id     func(*T) *string
	clone  func(T) T
}

// NewTable returns a table over rows, which the table takes ownership of.
// id points at a row's ID field; clone deep-copies a row. The next ID
// continues after the highest seed ID, so IDs are never reused.
func NewTable[T any](entity, prefix string, digits int, rows []T, id func(*T) *string, clone func(T) T) Table[T] {
	t := Table[T]{entity: entity, prefix: prefix, digits: digits, rows: rows, id: id, clone: clone, next: 1}
	t.reindex()
	for i := range t.rows {
		if n, ok := t.seq(*id(&t.rows[i])); ok && n >= t.next {
			t.next = n + 1
		}
	}
	return t
}

func (t *Table[T]) reindex() {
	t.index = make(map[string]int, len(t.rows))
	for i := range t.rows {
		t.index[*t.id(&t.rows[i])] = i
	}
}

// seq returns the number after the prefix of id.
func (t *Table[T]) seq(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, t.prefix))
	return n, err == nil && strings.HasPrefix(id, t.prefix)
}

// Len returns the number of rows.
func (t *Table[T]) Len() int { return len(t.rows) }

// Next returns the number the next inserted ID will carry.
func (t *Table[T]) Next() int { return t.next }

// Rows returns the rows in ID order. Callers must not modify them.
func (t *Table[T]) Rows() []T { return t.rows }

// IDs returns every ID in order.
func (t *Table[T]) IDs() []string {
	ids := make([]string, len(t.rows))
	for i := range t.rows {
		ids[i] = *t.id(&t.rows[i])
	}
	return ids
}

// Ptr returns the row with the given ID for in-place change; arg names the
// argument that carried the ID, for the error message.
func (t *Table[T]) Ptr(arg, id string) (*T, error) {
	i, ok := t.index[id]
	if !ok {
		return nil, NotFound(arg, t.entity, id, t.IDs())
	}
	return &t.rows[i], nil
}

// Get returns a copy of the row with the given ID.
func (t *Table[T]) Get(arg, id string) (T, error) {
	p, err := t.Ptr(arg, id)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.clone(*p), nil
}

// Check reports an error when id names no row; used for references.
func (t *Table[T]) Check(arg, id string) error {
	_, err := t.Ptr(arg, id)
	return err
}

// List returns copies of the rows keep accepts, at most limit of them
// (limit <= 0: all), with the number that matched before the limit.
func (t *Table[T]) List(limit int, keep func(*T) bool) ListResult[T] {
	res := ListResult[T]{Entity: t.entity, Items: []T{}}
	for i := range t.rows {
		if !keep(&t.rows[i]) {
			continue
		}
		res.Total++
		if limit <= 0 || len(res.Items) < limit {
			res.Items = append(res.Items, t.clone(t.rows[i]))
		}
	}
	res.Count = len(res.Items)
	return res
}

// Each calls fn for every row keep accepts, in ID order.
func (t *Table[T]) Each(keep func(*T) bool, fn func(*T)) {
	for i := range t.rows {
		if keep(&t.rows[i]) {
			fn(&t.rows[i])
		}
	}
}

// Update applies set to every row keep accepts and returns their IDs.
func (t *Table[T]) Update(keep func(*T) bool, set func(*T)) []string {
	ids := []string{}
	for i := range t.rows {
		if keep(&t.rows[i]) {
			set(&t.rows[i])
			ids = append(ids, *t.id(&t.rows[i]))
		}
	}
	return ids
}

// Insert gives row the next ID, appends it and returns a copy.
func (t *Table[T]) Insert(row T) T {
	*t.id(&row) = fmt.Sprintf("%s%0*d", t.prefix, t.digits, t.next)
	t.next++
	t.rows = append(t.rows, row)
	t.index[*t.id(&row)] = len(t.rows) - 1
	return t.clone(row)
}

// Delete removes the row with the given ID.
func (t *Table[T]) Delete(arg, id string) (DeleteResult, error) {
	i, ok := t.index[id]
	if !ok {
		return DeleteResult{}, NotFound(arg, t.entity, id, t.IDs())
	}
	t.rows = append(t.rows[:i:i], t.rows[i+1:]...)
	t.reindex()
	return DeleteResult{Entity: t.entity, Deleted: id}, nil
}

// Clone returns a deep copy that shares nothing with t.
func (t *Table[T]) Clone() Table[T] {
	c := *t
	c.rows = make([]T, len(t.rows))
	for i, r := range t.rows {
		c.rows[i] = t.clone(r)
	}
	c.index = make(map[string]int, len(t.index))
	for k, v := range t.index {
		c.index[k] = v
	}
	return c
}
