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
	cg := &claimGold{now: map[string]map[string][]any{}, old: map[string]map[string]any{}, fields: map[string][]claimField{}}
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
	seed := keyedRows(d, changes.seed)
	for _, final := range changes.finals {
		for key, row := range keyedRows(d, final) {
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
	for key, row := range seed {
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
	return cg
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
				if len(now) == 0 || slices.ContainsFunc(now, isNow) || fg.isOwnWord(key, v) {
					continue
				}
				said := sc.text[o.start:o.end]
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

// hedge says whether an occurrence of a fact's value is hedged: a second
// number offered for it ("142.8 kW or 86.3 kW") or a word of doubt in its
// clause ("may be 12%"); it returns the hedge in words.
func (sc *unitScan) hedge(o span) string {
	if sc.hedgedAt(o) {
		return "it states it as uncertain: " + strings.TrimSpace(sc.text[sc.clause(o).start:sc.clause(o).end])
	}
	for _, n := range sc.numbers {
		if n.start == o.start || sc.inDate(n) {
			continue
		}
		a, b := o, n.span
		if b.start < a.start {
			a, b = b, a
		}
		if a.end > b.start {
			continue
		}
		if orJoined(sc.text[a.end:b.start]) {
			return fmt.Sprintf("it offers %s and %s for the same quantity", sc.text[o.start:o.end], n.text)
		}
	}
	return ""
}

// orJoined reports whether the text between two values offers them as
// alternatives: "or", "maybe", "either" and units or symbols alone.
func orJoined(between string) bool {
	or := false
	for _, w := range wordTokens(between) {
		switch {
		case w.w == "or" || w.w == "maybe" || w.w == "perhaps" || w.w == "possibly":
			or = true
		case len(w.w) > 4 && !unitAbbrev[w.w]:
			return false
		}
	}
	return or || strings.Contains(between, "/") && len(wordTokens(between)) <= 2 && !strings.ContainsAny(between, ",;:")
}

var hedgeWords = map[string]bool{"may": true, "might": true, "maybe": true, "perhaps": true, "possibly": true, "potentially": true, "probably": true, "unclear": true, "uncertain": true, "unsure": true}

// hedgedAt reports whether a word of doubt governs a span: one of the
// three words before it in its clause ("may be 12%", "possibly SH003"),
// or of the three after it ("SH003 may be low").
func (sc *unitScan) hedgedAt(s span) bool {
	c := sc.clause(s)
	var before, after []string
	for _, w := range sc.words {
		switch {
		case w.start >= c.start && w.end <= s.start:
			before = append(before, w.w)
		case w.start >= s.end && w.end <= c.end:
			after = append(after, w.w)
		}
	}
	near := append(before[max(0, len(before)-3):], after[:min(3, len(after))]...)
	return slices.ContainsFunc(near, func(w string) bool { return hedgeWords[w] })
}

// clause is the stretch of a unit a span's statement takes: from the last
// boundary before it to the first after it (a sentence's end, a
// semicolon, a colon, a comma, a dash, "but", "while", "whereas",
// "although"); a list of names joined by commas and "and" is one name.
func (sc *unitScan) clause(s span) span {
	for _, g := range sc.allGroups() {
		if g.start <= s.start && s.end <= g.end {
			s = g.span
			break
		}
	}
	start, end := 0, len(sc.text)
	if i := strings.LastIndexAny(sc.text[:s.start], ".;:,!?()—–"); i >= 0 && !decimalPoint(sc.text, i) {
		start = i + 1
	}
	if i := strings.IndexAny(sc.text[s.end:], ".;:,!?()—–"); i >= 0 && !decimalPoint(sc.text, s.end+i) {
		end = s.end + i
	}
	for _, w := range sc.words {
		if !clauseWords[w.w] {
			continue
		}
		if w.end <= s.start && w.start >= start {
			start = w.end
		}
		if w.start >= s.end && w.end <= end {
			end = w.start
			break
		}
	}
	return span{start, end}
}

var clauseWords = map[string]bool{"but": true, "while": true, "whereas": true, "although": true, "though": true, "however": true,
	"because": true, "since": true, "so": true, "unless": true}

// namesOnly reports whether a unit is names of a class and little else: an item of a
// list of rows ("DR005 Car park pedestrian gate", "SH007").
func (sc *unitScan) namesOnly(class string) bool {
	names := sc.groupsOf(class)
	if len(names) == 0 {
		return false
	}
	other := 0
	for _, w := range sc.words {
		if !slices.ContainsFunc(names, func(m mention) bool { return m.start <= w.start && w.end <= m.end }) && !connectorWords[w.w] {
			other++
		}
	}
	return other <= 2
}

// decimalPoint reports whether the byte at i is a point or comma between
// digits (12.5, 142,8), which ends no clause.
func decimalPoint(text string, i int) bool {
	return (text[i] == '.' || text[i] == ',') && i > 0 && i+1 < len(text) && isDigit(text[i-1]) && isDigit(text[i+1])
}

// allGroups lists the unit's groups of names of every class.
func (sc *unitScan) allGroups() []mention {
	var out []mention
	classes := map[string]bool{}
	for _, m := range sc.mentions {
		for _, k := range m.keys {
			classes[classOf(k)] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		out = append(out, sc.groupsOf(c)...)
	}
	return out
}

// negatedAt reports whether a negation governs the clause of a span
// ("SH005 and SH006 are fine, SH007 is low": SH007's clause has none).
func (sc *unitScan) negatedAt(s span) bool {
	c := sc.clause(s)
	t := strings.ToLower(sc.text[c.start:c.end])
	if strings.Contains(t, "n't") || strings.Contains(t, "n’t") {
		return true
	}
	return slices.ContainsFunc(sc.words, func(w wordTok) bool { return w.start >= c.start && w.end <= c.end && negations[w.w] })
}

var pastBefore = map[string]bool{"from": true, "was": true, "were": true, "previously": true, "formerly": true, "originally": true, "earlier": true,
	"before": true, "had": true, "been": true, "old": true, "prior": true, "used": true, "initially": true, "longer": true}

// pastMarked reports whether a value is marked as a past one: one of the
// three words before it says so ("was", "from", "previously"), or an
// arrow or "to" follows it ("100 → 80", "available to standby").
func (sc *unitScan) pastMarked(s span) bool {
	var before []string
	for _, w := range sc.words {
		if w.end <= s.start {
			before = append(before, w.w)
		}
	}
	if slices.ContainsFunc(before[max(0, len(before)-3):], func(w string) bool { return pastBefore[w] }) {
		return true
	}
	// A table cell under "Was" or "Before".
	if i := strings.LastIndexByte(sc.text[:s.start], '|'); i >= 0 || strings.Contains(sc.text, " | ") {
		cell := wordTokens(sc.text[i+1 : s.start])
		if len(cell) > 0 && pastBefore[cell[0].w] {
			return true
		}
	}
	rest := strings.TrimLeft(sc.text[s.end:], " %*_°")
	for _, u := range []string{"→", "->", "=>", "⇒"} {
		if strings.HasPrefix(rest, u) {
			return true
		}
	}
	// "available to standby": "to" right after the value, no comma.
	return strings.HasPrefix(strings.ToLower(rest), "to ")
}

// predicated reports whether a short word follows a verb of state ("is
// on", "still off"), so it is a value and not a preposition.
func (sc *unitScan) predicated(s span) bool {
	prev := ""
	for _, w := range sc.words {
		if w.end <= s.start {
			prev = w.w
		}
	}
	switch prev {
	case "is", "are", "was", "were", "still", "now", "stays", "stay", "remains", "left", "turned", "switched", "set", "be":
		return true
	}
	return false
}

// inName reports whether a span lies inside a name the unit mentions.
func (sc *unitScan) inName(s span) bool {
	return slices.ContainsFunc(sc.mentions, func(m mention) bool { return m.start <= s.start && s.end <= m.end })
}

// readingsAt lists the readings of the number written at start ("1,180"
// reads 1180 and 1; "142,8" reads 142.8 and 142).
func (sc *unitScan) readingsAt(start int) []numberTok {
	var out []numberTok
	for _, n := range sc.numbers {
		if n.start == start {
			out = append(out, n)
		}
	}
	return out
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
		if sc.scope != nil {
			if g := sc.scope.groupsOf(class); len(g) > 0 {
				return g[len(g)-1].keys
			}
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

// cuedAround reports whether a number's quantity words stand next to it:
// in its clause before it, since the last value or name ("fuel 12%"), or
// right after it ("12% fuel", "4,480 h since service").
func (sc *unitScan) cuedAround(n numberTok, cues []string) bool {
	if len(cues) == 0 {
		return false
	}
	c := sc.clause(n.span)
	from := c.start
	for _, m := range sc.mentions {
		if m.end <= n.start {
			from = max(from, m.end)
		}
	}
	to := c.end
	for _, o := range sc.numbers {
		if o.end <= n.start && o.start != n.start {
			from = max(from, o.end)
		}
		if o.start >= n.end && o.start < to {
			to = o.start
		}
	}
	for _, m := range sc.mentions {
		if m.start >= n.end && m.start < to {
			to = m.start
		}
	}
	if from > n.start {
		from = n.start
	}
	// Every word of the field's name that is no unit must stand there:
	// "41.7% soil moisture" is no moisture target.
	var need []string
	for _, cue := range cues {
		if !unitWords[cue] {
			need = append(need, cue)
		}
	}
	if len(need) == 0 {
		return false
	}
	found := map[string]bool{}
	after := 0
	for _, w := range sc.words {
		in := w.start >= from && w.end <= n.start
		if w.start >= n.end && w.end <= to {
			after++
			in = after <= 3
		}
		if !in {
			continue
		}
		for _, cue := range need {
			if cueMatches(w.w, cue) {
				found[cue] = true
			}
		}
	}
	return len(found) == len(need)
}

// cueMatches reports whether a word says a field-name word: the same
// stem, or the word written out ("temperature" for temp).
func cueMatches(w, cue string) bool {
	return stem(w) == stem(cue) || len(cue) >= 4 && strings.HasPrefix(w, cue)
}

// unitWords are field-name words that name a unit, not a quantity: "9
// hours" says no more which hours than "9" does.
var unitWords = map[string]bool{"hours": true, "hour": true, "days": true, "day": true, "minutes": true, "minute": true, "seconds": true,
	"second": true, "weeks": true, "months": true, "years": true, "percent": true, "degrees": true, "metres": true, "meters": true, "litres": true,
	"liters": true, "volts": true, "watts": true, "amps": true, "kilometres": true, "kilometers": true}

// derivedWords, before a number in its clause, say it is some other
// quantity than the row's field: an average, a limit, what is left.
var derivedWords = map[string]bool{"average": true, "avg": true, "mean": true, "total": true, "sum": true, "combined": true, "overall": true,
	"limit": true, "threshold": true, "target": true, "left": true, "remaining": true, "difference": true, "more": true, "less": true,
	"above": true, "below": true, "under": true, "over": true, "than": true, "within": true, "max": true, "maximum": true, "min": true,
	"minimum": true, "up": true, "down": true, "by": true, "per": true, "each": true, "every": true, "across": true, "about": true, "approximately": true,
	"roughly": true, "nearly": true, "almost": true, "around": true, "another": true, "extra": true, "until": true, "after": true, "before": true,
	"least": true, "most": true, "highest": true, "lowest": true, "range": true, "between": true, "plus": true, "minus": true}

// derived reports whether a word of derivedWords stands in a number's
// clause before it, or right after it ("9 hours left").
func (sc *unitScan) derived(s span, field string) bool {
	c := sc.clause(s)
	after := 0
	own := strings.Split(field, "_")
	isDerived := func(w string) bool { return derivedWords[w] && !slices.Contains(own, w) }
	for _, w := range sc.words {
		switch {
		case w.start >= c.start && w.end <= s.start && isDerived(w.w):
			return true
		case w.start >= s.end && w.end <= c.end:
			after++
			if after <= 3 && isDerived(w.w) {
				return true
			}
		}
	}
	return false
}

var pronouns = map[string]bool{"it": true, "its": true, "it's": true, "she": true, "her": true, "he": true, "his": true, "him": true,
	"they": true, "their": true, "them": true, "this": true, "that": true}

// hasPronoun reports whether a unit refers back with a pronoun.
func (sc *unitScan) hasPronoun() bool {
	return slices.ContainsFunc(sc.words, func(w wordTok) bool { return pronouns[w.w] })
}

// quoted reports whether a span lies inside quotation marks: a title or
// a message, not a claim.
func (sc *unitScan) quoted(s span) bool {
	before := sc.text[:s.start]
	for _, q := range []string{`"`, "“", "”"} {
		if strings.Count(before, q)%2 == 1 {
			return true
		}
	}
	return strings.Contains(before, "“") && strings.Count(before, "“") > strings.Count(before, "”")
}

// fillerWords stand between a field's words or a row's name and the value
// stated for it ("status is now available", "VH009: available").
var fillerWords = map[string]bool{"is": true, "are": true, "now": true, "currently": true, "still": true, "stays": true, "remains": true,
	"at": true, "in": true, "on": true, "of": true, "the": true}

// afterCue reports whether a span follows a field's words with only
// filler between ("status: available", "mode is idle").
func (sc *unitScan) afterCue(s span, cues []string) bool {
	var before []wordTok
	for _, w := range sc.words {
		if w.end <= s.start {
			before = append(before, w)
		}
	}
	for i := len(before) - 1; i >= 0 && i >= len(before)-4; i-- {
		w := before[i]
		if slices.ContainsFunc(cues, func(c string) bool { return stem(w.w) == stem(c) }) {
			return !strings.ContainsAny(sc.text[w.end:s.start], ".;,|()")
		}
		if !fillerWords[w.w] {
			return false
		}
	}
	return false
}

// predicatedOf reports whether a span follows a name of an entity's row
// and a verb of state ("VH009 is available", "CM006 is now offline").
func (sc *unitScan) predicatedOf(s span, entity string) bool {
	var last *mention
	for i, g := range sc.groupsOf(entity) {
		if g.end <= s.start {
			last = &sc.groupsOf(entity)[i]
		}
	}
	if last == nil {
		return false
	}
	between := sc.text[last.end:s.start]
	if strings.ContainsAny(between, ".;,|()") {
		return false
	}
	ws := wordTokens(between)
	if len(ws) == 0 || len(ws) > 3 {
		return false
	}
	for _, w := range ws {
		if !fillerWords[w.w] && w.w != "was" && w.w != "were" && w.w != "been" && w.w != "has" && w.w != "had" {
			return false
		}
	}
	return ws[0].w != "at" && ws[0].w != "in" && ws[0].w != "on" && ws[0].w != "of"
}

// statesLater reports whether one of the values follows a span in its
// clause: a change told, old value first ("idle → running").
func (sc *unitScan) statesLater(s span, values []any) bool {
	c := sc.clause(s)
	end := max(c.end, min(len(sc.text), s.end+40))
	for _, v := range values {
		str, ok := v.(string)
		if !ok {
			continue
		}
		for _, o := range sc.wordOccurrences(words(str)) {
			if o.start >= s.end && o.end <= end {
				return true
			}
		}
	}
	return false
}

// changedLater reports whether a number the test accepts follows a span
// closely: a change told, old value first ("100 → 80").
func (sc *unitScan) changedLater(s span, now func(numberTok) bool) bool {
	for _, n := range sc.numbers {
		if n.start >= s.end && n.start <= s.end+40 && now(n) {
			return true
		}
	}
	return false
}

// apposition reports whether a mention stands in brackets that follow
// something other than a member, explaining it: "the living room (DV001,
// DV002, DV003)" says what the room holds, not which devices are members.
func (sc *unitScan) apposition(s span, isMember func(mention) bool) bool {
	open := strings.LastIndexByte(sc.text[:s.start], '(')
	if open < 0 || strings.IndexByte(sc.text[open:s.start], ')') >= 0 {
		return false
	}
	before := strings.TrimRight(sc.text[:open], " ")
	if before == "" {
		return false
	}
	for _, m := range sc.mentions {
		if m.end == len(before) && isMember(m) {
			return false // "DV011 (and DV001)"
		}
	}
	return true
}
