package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// What a clause of a unit says beyond its names and numbers: where it
// starts and ends, and whether it negates, hedges, marks a value as past,
// names a field's quantity, or quotes.

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
// alternatives: "or", "maybe", "perhaps" or "possibly" among units and
// symbols ("142.8 kW or 86.3 kW"); "162/95" is a blood pressure, not a
// hedge.
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
	return or
}

var hedgeWords = map[string]bool{"may": true, "might": true, "maybe": true, "perhaps": true, "possibly": true, "potentially": true, "probably": true, "unclear": true, "uncertain": true, "unsure": true}

// hedgedAt reports whether a word of doubt governs a span: one of the
// three words before it in its clause ("may be 12%", "possibly SH003"),
// or, for a name, of the two after it ("SH003 may be low"); a word of
// doubt after a value is about something else ("12% and probably needs
// a charge").
func (sc *unitScan) hedgedAt(s span) bool {
	return sc.hedgedWithin(s, 0)
}

// hedgedName is hedgedAt for a name, which a word after it may hedge.
func (sc *unitScan) hedgedName(s span) bool {
	return sc.hedgedWithin(s, 2)
}

func (sc *unitScan) hedgedWithin(s span, afterWords int) bool {
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
	near := append(before[max(0, len(before)-3):], after[:min(afterWords, len(after))]...)
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

// allGroups lists the unit's groups of names of every class, read once
// (every clause asks for them).
func (sc *unitScan) allGroups() []mention {
	if gs, ok := sc.groups[allClasses]; ok {
		return gs
	}
	out := []mention{}
	classes := map[string]bool{}
	for _, m := range sc.mentions {
		for _, k := range m.keys {
			classes[classOf(k)] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		out = append(out, sc.groupsOf(c)...)
	}
	if sc.groups == nil {
		sc.groups = map[string][]mention{}
	}
	sc.groups[allClasses] = out
	return out
}

// allClasses keys allGroups' list in the groups cache; no class is empty.
const allClasses = ""

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
