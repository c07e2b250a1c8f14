package score

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Task completion judges the task, not the bytes. A store that differs from
// every right final store can still be a right outcome: rows created in
// another order get other IDs, a note worded differently is still a note,
// an optional field may be left out, and a row created twice and the copy
// deleted leaves the ID counter further on. What must not happen is a
// change the task did not ask for. So the agent's store is compared with
// the seed, change by change, against what the right final stores change:
//
//   - a seeded row may be deleted only if some right store deletes it;
//   - a field of a seeded row may change only if some right store changes
//     that field of that row, and only to a value some right store gives it;
//   - every created row must match, one to one, a row the right stores
//     create, field by field against the values any right store gives it,
//     whatever ID it got (references to created rows follow the matching).
//
// Taking the values of every right store field by field is what lets two
// optional fields be left out together, or two alternatives be combined,
// although verify runs each variant alone. Free text (string fields that
// are not enums, IDs, references or timestamps, and have no pattern)
// compares as present or absent, since wording is not what a task asks
// for, unless the prompt dictates it (the right value appears in the
// prompt): then it must match after folding case, spacing and
// punctuation. A free-text field of a row the task changes or creates may
// hold the agent's own annotation (a reason in notes) unless a state
// condition speaks about that field. Changes a right store makes and the agent did not
// are not judged here: the state conditions say which of them the task
// needs.

// fieldKind says how values of a field compare when judging changes.
type fieldKind int

const (
	kindExact      fieldKind = iota // enums, booleans, IDs, unknown fields
	kindFreeText                    // present or absent
	kindText                        // strings with a pattern: trimmed, case-folded
	kindNumber                      // by value
	kindTimestamp                   // by instant
	kindReference                   // an ID, mapped when it names a created row
	kindStructured                  // objects and arrays, by SameValue's loose rules
)

// rowKey names one row of a store.
type rowKey struct{ coll, id string }

// changeGold is what the right final stores of a scenario change relative
// to the seed, prepared once per scenario and level.
type changeGold struct {
	seed  map[string]map[string]map[string]any // collection → id → row
	kinds map[string]map[string]fieldKind      // collection → field → kind
	// refs names, per collection and reference field, the collection of
	// the rows it points to.
	refs    map[string]map[string]string
	deletes map[rowKey]bool
	// sets holds, per seeded row and field, every value a right store
	// changes it to.
	sets map[rowKey]map[string][]any
	// creates holds, per row a right store creates (by its ID there), the
	// values each field has in the right stores that create it.
	creates map[rowKey]map[string][]any
	// createIDs lists the created rows of each collection, sorted.
	createIDs map[string][]string
	// finals are the right final stores, indexed, in order: decoded once
	// for every trial's explanation.
	finals []map[string]map[string]map[string]any
	// prompt is the scenario's prompt as words: free text it dictates
	// must be written as dictated.
	prompt string
	// spoken names, per collection, the fields state conditions speak
	// about, by row ID ("" for conditions that select by where).
	spoken map[string]map[string]map[string]bool
	// err is why the right stores could not be read; changes then judge
	// nothing and say so.
	err error
}

// newChangeGold reads the seed and the right final stores of a scenario.
func newChangeGold(d *speclang.Domain, s *speclang.Scenario, seed []byte, finals [][]byte) *changeGold {
	g := &changeGold{kinds: map[string]map[string]fieldKind{}, refs: map[string]map[string]string{},
		deletes: map[rowKey]bool{}, sets: map[rowKey]map[string][]any{}, creates: map[rowKey]map[string][]any{},
		createIDs: map[string][]string{}, spoken: map[string]map[string]map[string]bool{}}
	if s != nil {
		g.prompt = " " + words(s.Prompt) + " "
		for _, c := range s.State {
			if g.spoken[c.Collection] == nil {
				g.spoken[c.Collection] = map[string]map[string]bool{}
			}
			if g.spoken[c.Collection][c.ID] == nil {
				g.spoken[c.Collection][c.ID] = map[string]bool{}
			}
			for f := range c.Where {
				g.spoken[c.Collection][c.ID][f] = true
			}
			for f := range c.Fields {
				g.spoken[c.Collection][c.ID][f] = true
			}
		}
	}
	if d != nil {
		for _, e := range d.Entities {
			g.kinds[e.Plural], g.refs[e.Plural] = map[string]fieldKind{}, map[string]string{}
			for _, f := range e.Fields {
				g.kinds[e.Plural][f.Name] = kindOf(f)
				if f.Type == speclang.TReference && f.Ref != nil {
					g.refs[e.Plural][f.Name] = f.Ref.Plural
				}
			}
		}
	}
	seedRows, err := mcpdomain.Rows(seed)
	if err != nil {
		g.err = err
		return g
	}
	g.seed = indexRows(seedRows)
	for _, fin := range finals {
		rows, err := mcpdomain.Rows(fin)
		if err != nil {
			g.err = err
			return g
		}
		g.finals = append(g.finals, indexRows(rows))
		ch := diffStores(g.seed, g.finals[len(g.finals)-1])
		for k := range ch.deleted {
			g.deletes[k] = true
		}
		for k, fields := range ch.updated {
			if g.sets[k] == nil {
				g.sets[k] = map[string][]any{}
			}
			for f, v := range fields {
				g.sets[k][f] = append(g.sets[k][f], v)
			}
		}
		for k, row := range ch.created {
			if g.creates[k] == nil {
				g.creates[k] = map[string][]any{}
				g.createIDs[k.coll] = append(g.createIDs[k.coll], k.id)
			}
			// A field this right store leaves unset is absent from its
			// row, and unset is one of the right values.
			for _, f := range g.fieldsOf(k.coll, row) {
				g.creates[k][f] = append(g.creates[k][f], row[f])
			}
		}
	}
	for _, ids := range g.createIDs {
		slices.Sort(ids)
	}
	return g
}

// fieldsOf lists the fields of a collection's rows: the entity's, or a
// row's own keys when the domain is not known.
func (g *changeGold) fieldsOf(coll string, row map[string]any) []string {
	if kinds, ok := g.kinds[coll]; ok && len(kinds) > 0 {
		return append(slices.Collect(maps.Keys(kinds)), "id")
	}
	return slices.Collect(maps.Keys(row))
}

// kindOf says how a field's values compare.
func kindOf(f *speclang.Field) fieldKind {
	switch f.Type {
	case speclang.TString:
		if f.Pattern != "" {
			return kindText
		}
		return kindFreeText
	case speclang.TInteger, speclang.TNumber:
		return kindNumber
	case speclang.TTimestamp:
		return kindTimestamp
	case speclang.TReference:
		return kindReference
	case speclang.TObject, speclang.TArray:
		return kindStructured
	}
	return kindExact
}

// indexRows indexes a decoded snapshot's rows by collection and ID.
func indexRows(rows map[string][]map[string]any) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for coll, rs := range rows {
		out[coll] = make(map[string]map[string]any, len(rs))
		for _, r := range rs {
			id, _ := r["id"].(string)
			out[coll][id] = r
		}
	}
	return out
}

// storeChanges is how a store differs from the seed.
type storeChanges struct {
	deleted map[rowKey]bool
	// updated holds the fields of seeded rows that changed, with their new
	// values; created the rows the seed lacks.
	updated map[rowKey]map[string]any
	created map[rowKey]map[string]any
}

func diffStores(seed, final map[string]map[string]map[string]any) storeChanges {
	ch := storeChanges{deleted: map[rowKey]bool{}, updated: map[rowKey]map[string]any{}, created: map[rowKey]map[string]any{}}
	for coll, rows := range seed {
		for id, before := range rows {
			after, ok := final[coll][id]
			if !ok {
				ch.deleted[rowKey{coll, id}] = true
				continue
			}
			// Both sides are decoded from the same canonical encoder:
			// equal values are deeply equal.
			for _, f := range unionKeys(before, after) {
				if !reflect.DeepEqual(before[f], after[f]) {
					if ch.updated[rowKey{coll, id}] == nil {
						ch.updated[rowKey{coll, id}] = map[string]any{}
					}
					ch.updated[rowKey{coll, id}][f] = after[f]
				}
			}
		}
	}
	for coll, rows := range final {
		for id, row := range rows {
			if _, ok := seed[coll][id]; !ok {
				ch.created[rowKey{coll, id}] = row
			}
		}
	}
	return ch
}

// unionKeys lists the keys of two rows, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// maxMatchings bounds the ways of matching created rows that are tried; a
// scenario creates a handful of rows, so the bound is never reached by a
// reasonable trajectory, and one past it is judged unmatched.
const maxMatchings = 100_000

// unasked returns the changes of a final store (decoded) that no right
// store makes, each said in words; none means the agent changed nothing
// the task did not ask for.
func (g *changeGold) unasked(final map[string]map[string]map[string]any) []string {
	if g.err != nil {
		return []string{"the right final stores cannot be read: " + g.err.Error()}
	}
	ch := diffStores(g.seed, final)
	var why []string
	for _, k := range sortedKeys(ch.deleted) {
		if !g.deletes[k] {
			why = append(why, fmt.Sprintf("deleted %s %s, which no right solution deletes", k.coll, k.id))
		}
	}
	// Created rows are matched to the right stores' created rows; the
	// matching also decides what a reference to a created row means in
	// the changes of seeded rows. The first matching that explains every
	// change wins; otherwise the reasons of the first complete one (or of
	// none) are reported.
	created := sortedKeys(ch.created)
	m := &matcher{g: g, ch: ch, created: created, mapping: map[rowKey]string{}, used: map[rowKey]bool{}}
	// Changes of seeded rows that name no created row do not depend on
	// the matching: judge them once.
	if fixed := m.updates(false); len(fixed) > 0 {
		return append(why, fixed...)
	}
	m.search(0)
	switch {
	case m.ok:
		return why
	case m.best != nil:
		return append(why, m.best...)
	}
	return append(why, m.unmatched()...)
}

// matcher searches the one-to-one matchings of an agent's created rows to
// the right stores' created rows.
type matcher struct {
	g       *changeGold
	ch      storeChanges
	created []rowKey
	mapping map[rowKey]string // agent's created row → right store's ID
	used    map[rowKey]bool   // right stores' created rows taken
	tries   int
	ok      bool
	best    []string
}

func (m *matcher) search(i int) {
	if m.ok || m.tries >= maxMatchings {
		return
	}
	if i == len(m.created) {
		m.tries++
		why := m.updates(true)
		if len(why) == 0 {
			for _, k := range m.created {
				if d := m.rowDiff(k, m.mapping[k], true); d != "" {
					why = append(why, d)
				}
			}
		}
		if len(why) == 0 {
			m.ok = true
		} else if m.best == nil {
			m.best = why
		}
		return
	}
	k := m.created[i]
	for _, id := range m.g.createIDs[k.coll] {
		target := rowKey{k.coll, id}
		if m.used[target] || m.rowDiff(k, id, false) != "" {
			continue
		}
		m.used[target], m.mapping[k] = true, id
		m.search(i + 1)
		delete(m.used, target)
		delete(m.mapping, k)
		if m.ok {
			return
		}
	}
}

// unmatched explains a store whose created rows cannot all be matched.
func (m *matcher) unmatched() []string {
	var why []string
	taken := map[rowKey]bool{}
	for _, k := range m.created {
		// The closest right row (fewest fields apart) explains best.
		var best []string
		matched, again := false, false
		for _, id := range m.g.createIDs[k.coll] {
			d := m.rowDiffs(k, id, false)
			if len(d) == 0 && !taken[rowKey{k.coll, id}] {
				taken[rowKey{k.coll, id}], matched = true, true
				break
			}
			again = again || len(d) == 0
			if len(d) > 0 && (best == nil || len(d) < len(best)) {
				best = d
			}
		}
		switch {
		case matched:
		case len(m.g.createIDs[k.coll]) == 0:
			why = append(why, fmt.Sprintf("created %s %s, and no right solution creates %s", k.coll, k.id, k.coll))
		case again || best == nil:
			why = append(why, fmt.Sprintf("created %s %s, one more than a right solution creates", k.coll, k.id))
		default:
			why = append(why, strings.Join(best, "; and "))
		}
	}
	if len(why) == 0 {
		why = append(why, "the created rows match no right solution's together")
	}
	return why
}

// rowDiff says why the agent's created row k is not the right stores'
// created row id, or "". Until the matching is complete (full false), a
// reference to another created row is taken on trust.
func (m *matcher) rowDiff(k rowKey, id string, full bool) string {
	if d := m.rowDiffs(k, id, full); len(d) > 0 {
		return d[0]
	}
	return ""
}

// rowDiffs says every way in which the agent's created row k is not the
// right stores' created row id.
func (m *matcher) rowDiffs(k rowKey, id string, full bool) []string {
	got := m.ch.created[k]
	want := m.g.creates[rowKey{k.coll, id}]
	keys := slices.Collect(maps.Keys(want))
	for f := range got {
		if _, ok := want[f]; !ok {
			keys = append(keys, f)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, f := range keys {
		if f == "id" {
			continue
		}
		accept := want[f]
		if len(accept) == 0 {
			accept = []any{nil}
		}
		if !slices.ContainsFunc(accept, present) && m.g.ownNote(k, f) {
			continue // the agent's own annotation on a row it creates
		}
		if !m.accepts(k.coll, f, got[f], accept, full) {
			out = append(out, fmt.Sprintf("created %s %s with %s = %s; a right solution creates it (as %s) with %s = %s", k.coll, k.id, f, jsonString(got[f]), id, f, values(accept)))
		}
	}
	return out
}

// updates says which changed fields of seeded rows no right store
// changes that way: those that reference a created row under the current
// matching (dependent), or all the others.
func (m *matcher) updates(dependent bool) []string {
	var why []string
	for _, k := range sortedKeys(m.ch.updated) {
		fields := m.ch.updated[k]
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if m.namesCreated(k.coll, f, fields[f]) != dependent {
				continue
			}
			accept, ok := m.g.sets[k][f]
			switch {
			case !ok && m.g.ownNote(k, f):
				// The agent's own annotation on a row the task changes.
			case !ok:
				why = append(why, fmt.Sprintf("set %s %s %s to %s, which no right solution changes", k.coll, k.id, f, jsonString(fields[f])))
			case !m.accepts(k.coll, f, fields[f], accept, true):
				why = append(why, fmt.Sprintf("set %s %s %s to %s; a right solution sets %s", k.coll, k.id, f, jsonString(fields[f]), values(accept)))
			}
		}
	}
	return why
}

// namesCreated reports whether a reference field's value is a row the
// agent created.
func (m *matcher) namesCreated(coll, field string, v any) bool {
	s, ok := v.(string)
	if !ok || m.g.kinds[coll][field] != kindReference {
		return false
	}
	_, created := m.ch.created[rowKey{m.g.refs[coll][field], s}]
	return created
}

// accepts reports whether a field's value is one of the right values, by
// the field's kind.
func (m *matcher) accepts(coll, field string, got any, accept []any, full bool) bool {
	kind, ok := m.g.kinds[coll][field]
	if !ok {
		kind = kindExact
	}
	for _, want := range accept {
		if m.same(coll, field, kind, got, want, full) {
			return true
		}
	}
	return false
}

func (m *matcher) same(coll, field string, kind fieldKind, got, want any, full bool) bool {
	switch kind {
	case kindFreeText:
		if m.g.dictated(want) {
			gs, _ := got.(string)
			return words(gs) == words(want.(string))
		}
		return present(got) == present(want)
	case kindText, kindStructured, kindNumber, kindTimestamp:
		return SameValue(got, want, false)
	case kindReference:
		gs, _ := got.(string)
		target := rowKey{m.g.refs[coll][field], gs}
		if _, created := m.ch.created[target]; created && gs != "" {
			mapped, ok := m.mapping[target]
			if !ok {
				// Not matched yet: a reference to a created row can only
				// be right if the right store's is one too.
				ws, _ := want.(string)
				_, wantCreated := m.g.creates[rowKey{target.coll, ws}]
				return !full && wantCreated
			}
			return mapped == want
		}
	}
	return SameValue(got, want, true)
}

// dictated reports whether a right free-text value is one the prompt
// dictates (a title, a destination, a message to send): it then must be
// written as dictated, up to case, spacing and punctuation.
func (g *changeGold) dictated(want any) bool {
	s, ok := want.(string)
	return ok && words(s) != "" && strings.Contains(g.prompt, " "+words(s)+" ")
}

// ownNote reports whether a free-text field of a row the task changes may
// hold the agent's own words: the field is free text and no state
// condition speaks about it (a condition on the row, or on its entity's
// rows by where).
func (g *changeGold) ownNote(k rowKey, field string) bool {
	if g.kinds[k.coll][field] != kindFreeText {
		return false
	}
	_, seeded := g.seed[k.coll][k.id]
	if seeded && len(g.sets[k]) == 0 {
		return false // a row the task does not touch
	}
	spoken := g.spoken[k.coll]
	return !spoken[""][field] && !(seeded && spoken[k.id][field])
}

// present reports whether a free-text value says anything.
func present(v any) bool {
	s, ok := v.(string)
	if ok {
		return strings.TrimSpace(s) != ""
	}
	return v != nil
}

// values lists right values for a message.
func values(vs []any) string {
	var out []string
	for _, v := range vs {
		s := jsonString(v)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return "one of " + strings.Join(out, ", ")
}

func sortedKeys[V any](m map[rowKey]V) []rowKey {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b rowKey) int {
		if c := strings.Compare(a.coll, b.coll); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return keys
}
