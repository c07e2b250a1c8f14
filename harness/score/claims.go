package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
)

// An answer's claims must be true, not only its facts present. A claim
// is a statement that pairs a known subject (a row, by ID or name, named
// in its clause or inherited from its scope) with a value of a field the
// task is about (a field of an answer fact's subject, or one the task
// changes or its state conditions name):
//
//   - a number, after or before the words of the field's quantity
//     ("VH008 has 40% fuel", "fuel 40%"), must be the row's value in the
//     right final stores, or another value of the row (its other fields);
//     the row's value before the task changed it fails, unless the clause
//     marks it as past ("from 100 to 80", "was 100");
//   - a word that is one of an enum field's values ("VH009 is available")
//     must be the row's value in the right final stores, unless negated
//     ("not available"), marked as past ("was available", "from
//     available to standby") or contrasted in its clause;
//   - a value hedged fails: two values for one quantity ("142.8 kW or
//     86.3 kW"), or a fact stated as uncertain ("may be 12%").
//
// Names, models and units that contain numbers are names: a number inside
// a row's name ("Cola 330 ml, 24-pack") or joined to a word by a hyphen
// ("24-pack") states nothing.

// claimGold is what an answer's claims are checked against.
type claimGold struct {
	// now holds, per row key and field, the values the right final stores
	// give it; old, the seed's value where every right store changed it.
	now map[string]map[string][]any
	old map[string]map[string]any
	// fields lists, per entity, the fields the task is about.
	fields map[string][]claimField
	// asked holds, per row key and field, the values the right final
	// stores give it where now holds a store's own instead (over): a
	// claim of one says done what that store does not hold.
	asked map[string]map[string][]any
	d     *speclang.Domain
	// seed is the seed's rows by key, for over.
	seed map[string]map[string]any
}

// claimField is a field whose claims are checked.
type claimField struct {
	name   string
	cues   []string
	values []string // an enum's values, as words
	number bool
}

// newClaimGold reads what the task is about from the scenario, the
// subjects of its facts and the changes of its right stores.
func newClaimGold(d *speclang.Domain, s *speclang.Scenario, changes *changeGold, facts []*factCheck) *claimGold {
	cg := &claimGold{now: map[string]map[string][]any{}, old: map[string]map[string]any{}, fields: map[string][]claimField{}, d: d}
	if d == nil || changes == nil || len(changes.finals) == 0 {
		return cg
	}
	about := map[string]map[string]bool{} // entity → field
	mark := func(entity, field string) {
		if about[entity] == nil {
			about[entity] = map[string]bool{}
		}
		about[entity][field] = true
	}
	byPlural := map[string]*speclang.Entity{}
	for _, e := range d.Entities {
		byPlural[e.Plural] = e
	}
	for _, fc := range facts {
		for _, sub := range fc.subjects {
			if sub.kind == aboutRow {
				mark(sub.class, sub.field)
			}
		}
	}
	for _, c := range s.State {
		if e := byPlural[c.Collection]; e != nil {
			for f := range c.Fields {
				mark(e.Name, f)
			}
		}
	}
	for k, fs := range changes.sets {
		if e := byPlural[k.coll]; e != nil {
			for f := range fs {
				mark(e.Name, f)
			}
		}
	}
	for _, e := range d.Entities {
		for _, f := range e.Fields {
			if !about[e.Name][f.Name] {
				continue
			}
			cf := claimField{name: f.Name, cues: cueWords(f.Name)}
			switch f.Type {
			case speclang.TInteger, speclang.TNumber:
				cf.number = true
			case speclang.TEnum:
				for _, v := range f.Values {
					cf.values = append(cf.values, words(v))
				}
			default:
				continue
			}
			cg.fields[e.Name] = append(cg.fields[e.Name], cf)
		}
	}
	cg.seed = keyedRows(d, changes.seed)
	cg.read(changes.finals, nil)
	return cg
}

// read fills now from the stores and old from the seed, for the rows
// keep takes (nil: every row).
func (cg *claimGold) read(stores []map[string]map[string]map[string]any, keep func(key string) bool) {
	for _, store := range stores {
		for key, row := range keyedRows(cg.d, store) {
			if keep != nil && !keep(key) {
				continue
			}
			if cg.now[key] == nil {
				cg.now[key] = map[string][]any{}
			}
			for f, v := range row {
				if isScalar(v) && !slices.ContainsFunc(cg.now[key][f], func(w any) bool { return SameValue(w, v, false) }) {
					cg.now[key][f] = append(cg.now[key][f], v)
				}
			}
		}
	}
	for key, row := range cg.seed {
		if keep != nil && !keep(key) {
			continue
		}
		for f, v := range row {
			now := cg.now[key][f]
			if isScalar(v) && len(now) > 0 && !slices.ContainsFunc(now, func(w any) bool { return SameValue(w, v, false) }) {
				if cg.old[key] == nil {
					cg.old[key] = map[string]any{}
				}
				cg.old[key][f] = v
			}
		}
	}
}

// over is the claim gold with the rows keep names (nil: every row) read
// from one store instead of the right final stores: a claim about them
// is true when that store holds it, and one of a value the right stores
// give them and the store does not (asked) says done what was not. Only
// the rows of entities with claim fields are read again: no claim is of
// another's.
func (cg *claimGold) over(store map[string]map[string]map[string]any, keep map[string]bool) *claimGold {
	out := &claimGold{now: map[string]map[string][]any{}, old: map[string]map[string]any{}, fields: cg.fields,
		asked: map[string]map[string][]any{}, d: cg.d, seed: cg.seed}
	taken := func(key string) bool { return cg.fields[classOf(key)] != nil && (keep == nil || keep[key]) }
	for key, fields := range cg.now {
		if taken(key) {
			out.asked[key] = fields
		} else {
			out.now[key], out.old[key] = fields, cg.old[key]
		}
	}
	out.read([]map[string]map[string]map[string]any{store}, taken)
	for key, fields := range out.asked {
		held := map[string][]any{}
		for f, vs := range fields {
			for _, v := range vs {
				if !slices.ContainsFunc(out.now[key][f], func(w any) bool { return SameValue(w, v, false) }) {
					held[f] = append(held[f], v)
				}
			}
		}
		out.asked[key] = held
	}
	return out
}

// falseClaims lists, in words, every claim of an answer that is not true.
func (fg *factGold) falseClaims(scans []*unitScan) []string {
	cg := fg.claims
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, entity := range slices.Sorted(maps.Keys(cg.fields)) {
		fields := cg.fields[entity]
		for _, sc := range scans {
			for _, f := range fields {
				if f.number {
					fg.numberClaims(sc, entity, f, add)
				} else {
					fg.enumClaims(sc, entity, f, add)
				}
			}
		}
	}
	return out
}

// numberClaims checks the numbers a unit states for a field of an
// entity's rows.
func (fg *factGold) numberClaims(sc *unitScan, entity string, f claimField, add func(string)) {
	cg := fg.claims
	for i, n := range sc.numbers {
		if i > 0 && sc.numbers[i-1].start == n.start {
			continue // one claim per number written, whatever its readings
		}
		readings := sc.readingsAt(n.start)
		if slices.ContainsFunc(readings, sc.inDate) || sc.inName(n.span) || sc.quoted(n.span) || sc.derived(n.span, f.name) || !sc.cuedAround(n, f.cues) {
			continue
		}
		// A number of the prompt's is a threshold repeated, unless it is
		// a row's value from before the task changed it.
		inPrompt := slices.ContainsFunc(readings, fg.inPrompt)
		for _, key := range sc.claimOwners(n.span, entity) {
			now := cg.now[key][f.name]
			if len(now) == 0 || slices.ContainsFunc(readings, func(r numberTok) bool { return statesAny(r, now) }) {
				continue
			}
			if asked := cg.asked[key][f.name]; len(asked) > 0 && slices.ContainsFunc(readings, func(r numberTok) bool { return statesAny(r, asked) }) {
				if !sc.negatedAt(n.span) && !sc.saysNotDone(sc.clause(n.span)) {
					add(fmt.Sprintf("it states %s for %s's %s, as the task asked, but the store holds %s", n.text, fg.labels.say(key), f.name, valuesText(now)))
				}
				continue
			}
			if old, ok := cg.old[key][f.name]; ok && slices.ContainsFunc(readings, func(r numberTok) bool { return statesAny(r, []any{old}) }) {
				if !sc.pastMarked(n.span) && !sc.changedLater(n.span, func(o numberTok) bool { return statesAny(o, now) }) {
					add(fmt.Sprintf("it states %s for %s's %s, its value before the task changed it to %s", n.text, fg.labels.say(key), f.name, valuesText(now)))
				}
				continue
			}
			if inPrompt || slices.ContainsFunc(readings, func(r numberTok) bool { return fg.isTruth(key, r) }) {
				continue // a threshold, or another of the row's values
			}
			add(fmt.Sprintf("it states %s for %s's %s, which is %s", n.text, fg.labels.say(key), f.name, valuesText(now)))
		}
	}
}

// enumClaims checks the words a unit states for an enum field of an
// entity's rows, where it states them as the field's value: right after
// the field's words ("status: available", a table column's header) or
// after the row's name and a verb of state ("VH009 is available").
func (fg *factGold) enumClaims(sc *unitScan, entity string, f claimField, add func(string)) {
	cg := fg.claims
	var spans []span
	for _, v := range f.values {
		if v == "" {
			continue
		}
		for _, o := range sc.wordOccurrences(v) {
			// "on route" holds "on": the longer value is the one stated.
			if slices.ContainsFunc(spans, func(s span) bool { return s.start <= o.start && o.end <= s.end }) {
				continue
			}
			spans = append(spans, o)
			// A short or common word ("on") is a value only after the
			// field's words.
			if !sc.afterCue(o, f.cues) && (stopWords[v] || len(v) < 3 || !sc.predicatedOf(o, entity)) {
				continue
			}
			if sc.inName(o) || sc.quoted(o) || sc.negatedAt(o) || sc.pastMarked(o) || sc.hedgedAt(o) {
				continue
			}
			for _, key := range sc.claimOwners(o, entity) {
				now := cg.now[key][f.name]
				isNow := func(w any) bool { s, ok := w.(string); return ok && words(s) == v }
				if len(now) == 0 || slices.ContainsFunc(now, isNow) {
					continue
				}
				said := sc.text[o.start:o.end]
				if slices.ContainsFunc(cg.asked[key][f.name], isNow) {
					if !sc.saysNotDone(sc.clause(o)) {
						add(fmt.Sprintf("it states %s as %q, as the task asked, but the store holds %s", fg.labels.say(key), said, valuesText(now)))
					}
					continue
				}
				if fg.isOwnWord(key, v) {
					continue
				}
				if old, ok := cg.old[key][f.name].(string); ok && words(old) == v {
					// "MS0006 (active) is cancelled": a change told.
					if sc.statesLater(o, now) {
						continue
					}
					add(fmt.Sprintf("it states %s as %q, its %s before the task changed it to %s", fg.labels.say(key), said, f.name, valuesText(now)))
					continue
				}
				add(fmt.Sprintf("it states %s as %q, but its %s is %s", fg.labels.say(key), said, f.name, valuesText(now)))
			}
		}
	}
}

// isOwnWord reports whether a word is the value of any of a row's fields
// in the right final stores.
func (fg *factGold) isOwnWord(key, w string) bool {
	for _, vs := range fg.claims.now[key] {
		for _, v := range vs {
			if s, ok := v.(string); ok && words(s) == w {
				return true
			}
		}
	}
	return false
}

func statesAny(n numberTok, values []any) bool {
	return slices.ContainsFunc(values, func(v any) bool {
		x, ok := number(v)
		return ok && n.states(x, decimals(formatNumber(x)))
	})
}

func valuesText(vs []any) string {
	var out []string
	for _, v := range vs {
		out = append(out, readableValue(v))
	}
	return strings.Join(out, " or ")
}

// claimOwners says which rows of an entity a value at s is claimed of:
// the subject before it in its unit (as owners reads it), or, where none
// is before it, the first after it in the same clause ("12% fuel for
// VH008"), or the subject the unit inherits when it names none.
func (sc *unitScan) claimOwners(s span, class string) []string {
	gs := sc.groupsOf(class)
	if len(gs) == 0 {
		// A claim's subject is its scope's, or the one a pronoun
		// refers to; an answer's other unnamed values (an average, a
		// limit) are no claims about a row.
		if keys := sc.scoped(class); keys != nil {
			return keys
		}
		if sc.prev != nil && sc.hasPronoun() {
			return sc.inherited(class)
		}
		return nil
	}
	// "FD004 ...: its probe SS006 reads 41.7%": the value is the probe's.
	// A group's name (an enum's value, "lab") is a value, not a subject.
	nearest := -1
	for i, m := range sc.mentions {
		if m.end <= s.start && slices.ContainsFunc(m.keys, func(k string) bool { return strings.Contains(k, "/") }) {
			nearest = i
		}
	}
	if nearest >= 0 && sc.mentions[nearest].start >= sc.clause(s).start && !slices.ContainsFunc(sc.mentions[nearest].keys, func(k string) bool { return classOf(k) == class }) {
		return nil // another row is the clause's subject
	}
	if gs[0].start >= s.end {
		c := sc.clause(s)
		if gs[0].start < c.end {
			return gs[0].keys
		}
		return nil
	}
	return sc.owners(s, class)
}
