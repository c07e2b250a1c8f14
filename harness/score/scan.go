package score

import (
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
)

// mention is a place where a unit names rows or groups.
type mention struct {
	span
	keys []string
}

// unitScan is a unit read once: its words, numbers and mentions, and
// what it reads under.
type unitScan struct {
	// scope is its scope's text read once (nil: none), prev the unit
	// before it in its paragraph or item (nil: none), and doc what the
	// whole answer names.
	scope, prev *unitScan
	doc         *docScan
	list        int
	text        string
	words       []wordTok
	numbers     []numberTok
	mentions    []mention
	// groups caches groupsOf by class.
	groups map[string][]mention
}

// docScan is what a whole answer names: per class, the keys of the one
// subject it names, when it names one.
type docScan struct {
	single map[string][]string
}

// read reads an answer into its units' scans (see splitUnits).
func (li *labelIndex) read(answer string) []*unitScan {
	units := splitUnits(answer)
	doc := &docScan{single: map[string][]string{}}
	scopes := map[string]*unitScan{}
	scans := make([]*unitScan, len(units))
	named := map[string]map[string]bool{}
	note := func(sc *unitScan) {
		for _, m := range sc.mentions {
			for _, k := range m.keys {
				c := classOf(k)
				if named[c] == nil {
					named[c] = map[string]bool{}
				}
				named[c][k] = true
			}
		}
	}
	for i, u := range units {
		sc := li.scan(u.text)
		sc.doc, sc.list = doc, u.list
		if u.scope != "" {
			if scopes[u.scope] == nil {
				scopes[u.scope] = li.scan(u.scope)
			}
			sc.scope = scopes[u.scope]
		}
		if u.prev >= 0 {
			sc.prev = scans[u.prev]
		}
		scans[i] = sc
		note(sc)
	}
	for c, keys := range named {
		if len(keys) == 1 {
			for k := range keys {
				doc.single[c] = []string{k}
			}
		}
	}
	return scans
}

// idSpans lists the words that are shaped like IDs: one to eight ASCII
// letters, then one to nine digits, alone (SS003, TR0005; not SS003b).
func idSpans(text string) []span {
	var out []span
	for i := 0; i < len(text); i++ {
		if !isAlnum(text[i]) || i > 0 && isAlnum(text[i-1]) {
			continue
		}
		letters := i
		for letters < len(text) && isLetterASCII(text[letters]) {
			letters++
		}
		end := digitsEnd(text, letters)
		if l, d := letters-i, end-letters; l >= 1 && l <= 8 && d >= 1 && d <= 9 && (end == len(text) || !isAlnum(text[end])) {
			out = append(out, span{i, end})
		}
		for i < len(text) && isAlnum(text[i]) { // on to the next word
			i++
		}
	}
	return out
}

func isLetterASCII(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// scan reads one text: a unit, or a scope.
func (li *labelIndex) scan(text string) *unitScan {
	sc := &unitScan{text: text, words: wordTokens(text), numbers: numberTokens(text)}
	taken := make([]bool, len(text))
	for _, m := range idSpans(text) {
		if key, ok := li.ids[strings.ToLower(text[m.start:m.end])]; ok {
			sc.mentions = append(sc.mentions, mention{m, []string{key}})
			for i := m.start; i < m.end; i++ {
				taken[i] = true
			}
		}
	}
	// Names of rows, then of groups, longest first at each word; a part
	// of a row's name that is also a group's name is the group's.
	sc.names(li.rows, taken, func(p phrase) bool {
		return !li.parts[strings.Join(p.words, " ")] ||
			!slices.ContainsFunc(li.groups[p.words[0]], func(g phrase) bool { return slices.Equal(g.words, p.words) })
	})
	sc.names(li.groups, taken, nil)
	slices.SortFunc(sc.mentions, func(a, b mention) int { return a.start - b.start })
	return sc
}

// names adds the mentions of an index's phrases, longest first at each
// word, outside the taken bytes (IDs).
func (sc *unitScan) names(pi phraseIndex, taken []bool, keep func(phrase) bool) {
	for i := 0; i < len(sc.words); {
		p, ok := pi.match(sc.words, i)
		if ok && keep != nil && !keep(p) {
			ok = false
		}
		if !ok {
			i++
			continue
		}
		s := span{sc.words[i].start, sc.words[i+len(p.words)-1].end}
		if !taken[s.start] && !taken[s.end-1] {
			sc.mentions = append(sc.mentions, mention{s, p.keys})
		}
		i += len(p.words)
	}
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// occurrences lists where a unit states a fact's value.
func (sc *unitScan) occurrences(f *speclang.Fact) []span {
	var out []span
	for _, form := range f.Forms() {
		if s, ok := form.(string); ok {
			out = append(out, sc.wordOccurrences(words(s))...)
			continue
		}
		if v, ok := number(form); ok {
			dv := decimals(formatNumber(v))
			for _, n := range sc.numbers {
				// The 05 of 2026-05-03 states no 5.
				if n.states(v, dv) && !sc.inDate(n) {
					out = append(out, n.span)
				}
			}
		}
	}
	return out
}

// wordOccurrences lists where a unit holds a phrase (as words).
func (sc *unitScan) wordOccurrences(phrase string) []span {
	want := strings.Fields(phrase)
	var out []span
	for i := 0; i+len(want) <= len(sc.words); i++ {
		ok := true
		for k, w := range want {
			if sc.words[i+k].w != w {
				ok = false
				break
			}
		}
		if ok && len(want) > 0 {
			out = append(out, span{sc.words[i].start, sc.words[i+len(want)-1].end})
		}
	}
	return out
}

// groupsOf joins the unit's mentions of one class into groups: mentions
// with only connectors between them ("A and B", "SS003 (North Ridge
// probe)") share what follows.
func (sc *unitScan) groupsOf(class string) []mention {
	if gs, ok := sc.groups[class]; ok {
		return gs
	}
	if sc.groups == nil {
		sc.groups = map[string][]mention{}
	}
	gs := sc.joinGroups(class)
	sc.groups[class] = gs
	return gs
}

func (sc *unitScan) joinGroups(class string) []mention {
	var out []mention
	for _, m := range sc.mentions {
		var keys []string
		for _, k := range m.keys {
			if classOf(k) == class {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		if n := len(out); n > 0 && onlyConnectors(sc.text[out[n-1].end:m.start], class) {
			out[n-1].end = m.end
			for _, k := range keys {
				if !slices.Contains(out[n-1].keys, k) {
					out[n-1].keys = append(out[n-1].keys, k)
				}
			}
			continue
		}
		out = append(out, mention{m.span, keys})
	}
	return out
}

var connectorWords = map[string]bool{"and": true, "or": true, "both": true, "nor": true, "plus": true, "as": true, "well": true, "also": true, "the": true}

// onlyConnectors reports whether a text between two mentions of a class
// joins them: connector words, and a group's own field ("zone west, zone
// east").
func onlyConnectors(between, class string) bool {
	field := strings.TrimSuffix(class, "=")
	for _, w := range wordTokens(between) {
		if !connectorWords[w.w] && (!strings.HasSuffix(class, "=") || w.w != field && w.w != field+"s") {
			return false
		}
	}
	return !strings.ContainsAny(between, ".;:!?")
}

// separates reports whether a text between a subject and a value ends the
// subject's clause: a comma, a semicolon, or "and", "but", "while".
func separates(between string) bool {
	if strings.ContainsAny(between, ",;") {
		return true
	}
	for _, w := range wordTokens(between) {
		switch w.w {
		case "and", "but", "while", "whereas", "then":
			return true
		}
	}
	return false
}

// owners says which rows or groups of a class a value at s belongs to.
func (sc *unitScan) owners(s span, class string) []string {
	gs := sc.groupsOf(class)
	if len(gs) == 0 {
		return sc.inherited(class)
	}
	prev := -1
	for i, g := range gs {
		if g.start < s.end && s.start < g.end {
			return g.keys // the value is part of the name
		}
		if g.start >= s.end {
			break
		}
		if g.end <= s.start {
			prev = i
		}
	}
	switch {
	case prev < 0:
		return gs[0].keys
	case prev == len(gs)-1:
		return gs[prev].keys
	}
	left, right := sc.text[gs[prev].end:s.start], sc.text[s.end:gs[prev+1].start]
	if separates(left) && !separates(right) {
		return gs[prev+1].keys
	}
	return gs[prev].keys
}

// scoped is the subject of a class the unit's scope names last (its
// innermost lead line or heading), or nil.
func (sc *unitScan) scoped(class string) []string {
	if sc.scope != nil {
		if g := sc.scope.groupsOf(class); len(g) > 0 {
			return g[len(g)-1].keys
		}
	}
	return nil
}

// inherited says whose values a unit that names no subject of a class
// states: its scope's (innermost), else the last one named before it in
// its paragraph or item ("She drove 7.5 hours"), else the answer's one
// subject of the class.
func (sc *unitScan) inherited(class string) []string {
	if keys := sc.scoped(class); keys != nil {
		return keys
	}
	if sc.prev != nil {
		if g := sc.prev.groupsOf(class); len(g) > 0 {
			return g[len(g)-1].keys
		}
		return sc.prev.inherited(class)
	}
	if sc.doc != nil {
		return sc.doc.single[class]
	}
	return nil
}

// clauseHasNumber reports whether the clause of a mention (between
// semicolons) states a number: a row named with a figure of its own is
// described, not presented as a member ("SH005 is warmer at 3.8 °C").
func (sc *unitScan) clauseHasNumber(m span) bool {
	start := strings.LastIndexByte(sc.text[:m.start], ';') + 1
	end := len(sc.text)
	if i := strings.IndexByte(sc.text[m.end:], ';'); i >= 0 {
		end = m.end + i
	}
	return slices.ContainsFunc(sc.numbers, func(n numberTok) bool { return n.start >= start && n.end <= end })
}

// contrastWords, just before a row, set it apart from what follows or
// precedes it ("moved from SH006 to SH007", "colder than SH005").
var contrastWords = map[string]bool{"from": true, "than": true, "instead": true, "unlike": true, "replacing": true, "rather": true, "over": true, "versus": true, "vs": true}

// contrasted reports whether one of the three words before a mention sets
// the row apart.
func (sc *unitScan) contrasted(m span) bool {
	var before []string
	for _, w := range sc.words {
		if w.end <= m.start {
			before = append(before, w.w)
		}
	}
	return slices.ContainsFunc(before[max(0, len(before)-3):], func(w string) bool { return contrastWords[w] })
}

// nearInClause lists the words within k words either side of a span in
// its sentence, not past a word that starts another clause ("so",
// "unless", "but").
func (sc *unitScan) nearInClause(s span, k int) []string {
	var before, after []string
	for _, w := range sc.words {
		switch {
		case w.end <= s.start:
			if clauseWords[w.w] {
				before = nil
				continue
			}
			before = append(before, w.w)
		case w.start >= s.end:
			if clauseWords[w.w] || len(after) >= k {
				return append(before[max(0, len(before)-k):], after...)
			}
			after = append(after, w.w)
		}
	}
	return append(before[max(0, len(before)-k):], after...)
}

// wordsBefore counts the words of a unit before a span.
func (sc *unitScan) wordsBefore(s span) int {
	n := 0
	for _, w := range sc.words {
		if w.end <= s.start {
			n++
		}
	}
	return n
}

// near lists the words within k words either side of a span.
func (sc *unitScan) near(s span, k int) []string {
	var before, after []string
	for _, w := range sc.words {
		switch {
		case w.end <= s.start:
			before = append(before, w.w)
		case w.start >= s.end:
			after = append(after, w.w)
		}
	}
	before = before[max(0, len(before)-k):]
	after = after[:min(k, len(after))]
	return append(before, after...)
}

var negations = map[string]bool{"not": true, "no": true, "none": true, "neither": true, "nor": true, "without": true, "except": true,
	"excluding": true, "besides": true, "fine": true, "normal": true, "ok": true, "okay": true, "healthy": true, "unaffected": true, "only": true}

// inDate reports whether a number is part of a date or a time of day
// (2026-09-22, 22:10).
func (sc *unitScan) inDate(n numberTok) bool {
	before, after := byte(' '), byte(' ')
	if n.start > 0 {
		before = sc.text[n.start-1]
	}
	if n.end < len(sc.text) {
		after = sc.text[n.end]
	}
	return strings.IndexByte("-:/T", before) >= 0 && n.start > 1 && isDigit(sc.text[n.start-2]) ||
		strings.IndexByte("-:/", after) >= 0 && n.end+1 < len(sc.text) && isDigit(sc.text[n.end+1])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
