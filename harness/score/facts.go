package score

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// An answer states a fact when it states the value about the fact's
// subject. The text is read in units: a line, and within a line a
// sentence; a list item under a heading line (one ending in a colon, a
// Markdown heading or a bold line) reads as if it followed the heading. In
// a unit, the subjects named (by ID, or by a part of the row's name that
// no other row of its entity shares, or a group's key) split it, and each
// value belongs to the subject it follows ("A: 3, B: 4", "A at 3 and B at
// 4"), or to the next one when a comma, a semicolon or "and" separates it
// from the one before ("3 for A, 4 for B"). Subjects joined only by
// "and", commas or brackets share the value after them ("both A and B at
// 20%"). Only subjects like the fact's split: a probe's value after its
// field's name is still the probe's. Then:
//
//   - a row's or group's value counts only in a unit where it belongs to
//     that row or group;
//   - a stated value contradicted fails: in the sentence that states it,
//     another number that belongs to the same subject, after the words of
//     the same quantity, which is neither in the prompt nor any value the
//     gold's reads or the stores show ("3.1 or maybe 4.0 bar");
//   - a set of rows ("which probes...") fails when a unit names a row of
//     the set's entity outside the set without its true value or a
//     negation (not, no, except, fine...);
//   - a count counts only within four words of what it counts (the
//     fact's words after "number of", or the entity's name);
//   - a total over everything has no subject, and is stated anywhere.

// factGold is what a scenario's answers are judged by.
type factGold struct {
	facts  []*factCheck
	labels *labelIndex
	// truths holds, per subject key, every scalar value the gold's reads
	// and the stores show for it.
	truths map[string][]any
	// sets holds the member facts by the class of their rows.
	sets map[string]*factSet
	// enums names the enum fields ("entity.field").
	enums map[string]bool
	// promptNumbers are the numbers the prompt states, dataNumbers every
	// number the gold's reads and the stores show.
	promptNumbers, dataNumbers []numberTok
	// errs says, per fact, why its subject cannot be told; verify
	// reports them.
	errs []string
}

// factCheck is one answer fact and what it is about.
type factCheck struct {
	fact     *speclang.Fact
	subjects []subject
	nouns    []string
}

// newFactGold derives the subjects of a scenario's answer facts from the
// rows of the seed and the right stores (as changeGold read them) and
// from the gold's reads.
func newFactGold(d *speclang.Domain, s *speclang.Scenario, changes *changeGold, reads []GoldRead) *factGold {
	var stores []map[string]map[string]any // the seed's and right stores' rows, by key
	if changes != nil {
		for _, rows := range append([]map[string]map[string]map[string]any{changes.seed}, changes.finals...) {
			stores = append(stores, keyedRows(d, rows))
		}
	}
	fg := &factGold{labels: newLabelIndex(d, stores, reads), truths: map[string][]any{}, sets: map[string]*factSet{}, enums: map[string]bool{}, promptNumbers: numberTokens(s.Prompt)}
	if d != nil {
		for _, e := range d.Entities {
			for _, f := range e.Fields {
				fg.enums[e.Name+"."+f.Name] = f.Type == speclang.TEnum
			}
		}
	}
	// Truths are sets: the order they are gathered in does not matter.
	for _, rows := range stores {
		for key, row := range rows {
			fg.addTruths(key, row)
		}
	}
	for _, r := range reads {
		fg.readTruths(r.Output)
		eachGroup(r.Output, func(groupBy string, g map[string]any) {
			key := fg.labels.groupKey(groupBy, fmt.Sprint(g["key"]))
			fg.truths[key] = append(fg.truths[key], g["value"], g["count"])
		})
	}
	// Every number the data shows, once, for contradictions.
	var all []float64
	for _, r := range reads {
		all = append(all, numbersIn(r.Output)...)
	}
	for _, key := range slices.Sorted(maps.Keys(fg.truths)) {
		for _, v := range fg.truths[key] {
			if x, ok := number(v); ok {
				all = append(all, x)
			}
		}
	}
	slices.Sort(all)
	for _, x := range slices.Compact(all) {
		fg.dataNumbers = append(fg.dataNumbers, numberTok{x: x, dx: decimals(formatNumber(x))})
	}
	for _, f := range s.Answer {
		fc := &factCheck{fact: f}
		subs, why := fg.choose(f, fg.candidates(f, reads))
		if why != "" {
			fg.errs = append(fg.errs, fmt.Sprintf("answer fact %s (%s): %s", jsonString(f.Value), f.What, why))
		}
		fc.subjects = subs
		for _, sub := range subs {
			if sub.kind == aboutCount {
				fc.nouns = countNouns(d, sub.class, f.What)
			}
		}
		fg.facts = append(fg.facts, fc)
		if len(subs) > 0 && subs[0].kind == aboutMember {
			set := fg.sets[subs[0].class]
			if set == nil {
				set = &factSet{members: map[string]bool{}}
				fg.sets[subs[0].class] = set
			}
			set.facts = append(set.facts, fc)
			for _, sub := range subs {
				set.members[sub.key] = true
			}
		}
	}
	return fg
}

// factSet is the member facts of one entity (or one grouping) together:
// the set of rows a prompt asks for.
type factSet struct {
	facts   []*factCheck
	members map[string]bool
}

// addTruths keeps a row's values as its truths, and as the truths of
// each group it is in (its enum fields' values: the lab building's meters'
// readings are the lab's).
func (fg *factGold) addTruths(key string, row map[string]any) {
	var groups []string
	class := classOf(key)
	for k, v := range row {
		if s, ok := v.(string); ok && fg.enums[class+"."+k] {
			groups = append(groups, groupKeyOf(k, s))
		}
	}
	for k, v := range row {
		if k != "id" && isScalar(v) {
			fg.truths[key] = append(fg.truths[key], v)
			for _, g := range groups {
				fg.truths[g] = append(fg.truths[g], v)
			}
		}
	}
}

// readTruths keeps the values a read shows for each row.
func (fg *factGold) readTruths(v any) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok {
			if key, known := fg.labels.ids[strings.ToLower(id)]; known {
				fg.addTruths(key, x)
			}
		}
		for _, v := range x {
			fg.readTruths(v)
		}
	case []any:
		for _, e := range x {
			fg.readTruths(e)
		}
	}
}

// numbersIn lists every number in a decoded output.
func numbersIn(v any) []float64 {
	switch x := v.(type) {
	case map[string]any:
		var out []float64
		for _, v := range x {
			out = append(out, numbersIn(v)...)
		}
		return out
	case []any:
		var out []float64
		for _, e := range x {
			out = append(out, numbersIn(e)...)
		}
		return out
	}
	if n, ok := number(v); ok {
		return []float64{n}
	}
	return nil
}

// countNouns are the words a count may be stated next to: the fact's own
// words for what it counts and the entity's name, singular or plural.
func countNouns(d *speclang.Domain, entity, what string) []string {
	var out []string
	ws := countWords(what)
	if ws == nil {
		// A count the fact does not call one: any of its words.
		ws = strings.Fields(words(what))
	}
	for _, w := range ws {
		if !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	if d != nil {
		for _, e := range d.Entities {
			if e.Name == entity {
				out = append(out, stem(words(e.Name)), stem(words(e.Plural)))
			}
		}
	}
	return out
}

// stem folds a plural to its singular, well enough for nouns of counts.
func stem(w string) string {
	if i := strings.LastIndexByte(w, ' '); i >= 0 {
		w = w[i+1:]
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// factVerdict is the judgement of one fact on an answer.
type factVerdict struct {
	check *factCheck
	// why is empty when the answer states the fact.
	why string
}

// judge reads an answer and says, fact by fact, whether it states it.
func (fg *factGold) judge(answer string) []factVerdict {
	units := splitUnits(answer)
	scans := make([]*unitScan, len(units))
	for i, u := range units {
		scans[i] = fg.labels.scan(u)
		if u.cont && i > 0 {
			scans[i].prev = scans[i-1]
		}
	}
	var out []factVerdict
	for _, fc := range fg.facts {
		out = append(out, factVerdict{fc, fg.judgeOne(fc, scans)})
	}
	return out
}

func (fg *factGold) judgeOne(fc *factCheck, scans []*unitScan) string {
	f := fc.fact
	if len(fc.subjects) == 0 || fc.subjects[0].kind == aboutTotal {
		if stated(scans, f) {
			return ""
		}
		return "it is not in the answer"
	}
	switch fc.subjects[0].kind {
	case aboutCount:
		return fg.judgeCount(fc, scans)
	case aboutMember:
		return fg.judgeMember(fc, scans)
	}
	keys := map[string]bool{}
	for _, s := range fc.subjects {
		keys[s.key] = true
	}
	stated, seen := false, false
	var elsewhere []string
	for _, sc := range scans {
		for _, o := range sc.occurrences(f) {
			owners := sc.owners(o, classOf(fc.subjects[0].key))
			if slices.ContainsFunc(owners, func(k string) bool { return keys[k] }) {
				stated = true
			} else {
				seen = true
				if len(owners) > 0 {
					elsewhere = append(elsewhere, fg.labels.say(owners[0]))
				}
			}
		}
	}
	if !stated {
		switch {
		case len(elsewhere) > 0:
			return fmt.Sprintf("it states the value about %s, not about %s", elsewhere[0], fg.labels.say(fc.subjects[0].key))
		case seen:
			return fmt.Sprintf("it states the value without naming %s in the same sentence, line or row", fg.labels.say(fc.subjects[0].key))
		}
		return "it is not in the answer"
	}
	if c := fg.contradiction(fc, scans); c != "" {
		return c
	}
	return ""
}

// contradiction finds a second value stated for a fact's subject and
// quantity: a number that belongs to the subject, after the words of the
// fact's quantity, that is no value the subject has.
func (fg *factGold) contradiction(fc *factCheck, scans []*unitScan) string {
	if _, ok := number(fc.fact.Value); !ok {
		return "" // a second number is no hedge on a text
	}
	for _, s := range fc.subjects {
		cues := cueWords(s.field)
		if len(cues) == 0 {
			continue
		}
		for _, sc := range scans {
			// A hedge is made where the value is stated: "3.1 or 4.0 bar".
			if !slices.ContainsFunc(sc.occurrences(fc.fact), func(o span) bool { return slices.Contains(sc.owners(o, s.class), s.key) }) {
				continue
			}
			for _, n := range sc.numbers {
				owners := sc.owners(n.span, s.class)
				if !slices.Contains(owners, s.key) || !sc.cued(n, cues) || sc.inDate(n) {
					continue
				}
				if factEqualsAt(fc.fact, n) || fg.anyTruth(n) || fg.inPrompt(n) {
					continue
				}
				return fmt.Sprintf("it also states %s for %s, which is not its value", n.text, fg.labels.say(s.key))
			}
		}
	}
	return ""
}

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

// factEqualsAt reports whether a number written in the answer states the
// fact's value.
func factEqualsAt(f *speclang.Fact, n numberTok) bool {
	for _, form := range f.Forms() {
		if v, ok := number(form); ok && n.states(v, decimals(formatNumber(v))) {
			return true
		}
	}
	return false
}

// anyTruth reports whether a written number is a value of anything the
// gold's reads or the stores show: a subject's other quantity, or another
// row's, which the binding already judges.
func (fg *factGold) anyTruth(n numberTok) bool {
	return slices.ContainsFunc(fg.dataNumbers, func(d numberTok) bool { return n.states(d.x, d.dx) })
}

// inPrompt reports whether a written number is one of the prompt's (a
// threshold the answer repeats).
func (fg *factGold) inPrompt(n numberTok) bool {
	return slices.ContainsFunc(fg.promptNumbers, func(p numberTok) bool { return p.states(n.x, n.dx) })
}

func (fg *factGold) isTruth(key string, n numberTok) bool {
	for _, v := range fg.truths[key] {
		if x, ok := number(v); ok && n.states(x, decimals(formatNumber(x))) {
			return true
		}
	}
	return false
}

// stated reports whether any unit states a fact's value, about whatever:
// Stated on the units already read.
func stated(scans []*unitScan, f *speclang.Fact) bool {
	return slices.ContainsFunc(scans, func(sc *unitScan) bool { return len(sc.occurrences(f)) > 0 })
}

// judgeCount accepts a count stated within four words of what it counts.
func (fg *factGold) judgeCount(fc *factCheck, scans []*unitScan) string {
	seen := false
	for _, sc := range scans {
		for _, o := range sc.occurrences(fc.fact) {
			seen = true
			for _, w := range sc.near(o, 4) {
				if slices.Contains(fc.nouns, stem(w)) {
					return ""
				}
			}
		}
	}
	if seen {
		return fmt.Sprintf("it states the number, but not next to what it counts (%s)", strings.Join(slices.DeleteFunc(slices.Clone(fc.nouns), func(s string) bool { return s == "" }), ", "))
	}
	return "it is not in the answer"
}

// judgeMember accepts a member of a set named anywhere, unless the answer
// presents a row outside the set as one of its members.
func (fg *factGold) judgeMember(fc *factCheck, scans []*unitScan) string {
	named := stated(scans, fc.fact)
	for _, sc := range scans {
		for _, m := range sc.mentions {
			for _, s := range fc.subjects {
				named = named || slices.Contains(m.keys, s.key)
			}
		}
	}
	if !named {
		return "it is not in the answer"
	}
	class := fc.subjects[0].class
	set := fg.sets[class]
	// One verdict per set: its first member reports a non-member.
	if set.facts[0] != fc {
		return ""
	}
	members := set.members
	for _, sc := range scans {
		// A row outside the set is presented as a member when it is
		// named beside a member, with no value of its own and no
		// negation.
		namesMember := slices.ContainsFunc(sc.mentions, func(m mention) bool {
			return slices.ContainsFunc(m.keys, func(k string) bool { return members[k] })
		})
		if !namesMember || sc.negated() {
			continue
		}
		for _, m := range sc.mentions {
			for _, k := range m.keys {
				if classOf(k) != class || members[k] || fg.truthStated(sc, k) || sc.contrasted(m.span) || sc.clauseHasNumber(m.span) {
					continue
				}
				return fmt.Sprintf("it presents %s as one of them, which it is not", fg.labels.say(k))
			}
		}
	}
	return ""
}

// truthStated reports whether a unit states a value of a row (or group)
// about it, showing whether it qualifies.
func (fg *factGold) truthStated(sc *unitScan, key string) bool {
	for _, n := range sc.numbers {
		if slices.Contains(sc.owners(n.span, classOf(key)), key) && fg.isTruth(key, n) {
			return true
		}
	}
	for _, v := range fg.truths[key] {
		s, ok := v.(string)
		// Its name or key says which row it is, not what it holds.
		if !ok || len(s) > 40 || words(s) == "" || words(s) == words(fg.labels.display[key]) || slices.Contains(fg.labels.names[key], words(s)) {
			continue
		}
		for _, o := range sc.wordOccurrences(words(s)) {
			if slices.Contains(sc.owners(o, classOf(key)), key) {
				return true
			}
		}
	}
	return false
}

// unit is one sentence, list item, line or table row of an answer; head
// is the heading line a list item reads under, or ""; cont says it is a
// later sentence of its line.
type unit struct {
	head, text string
	cont       bool
}

var (
	headingLine = regexp.MustCompile(`^\s*(#{1,6}\s.*|\*\*[^*]+\*\*:?|__[^_]+__:?|.*:)\s*$`)
	listItem    = regexp.MustCompile(`^(\s+\S|\s*([-*+•]|\d+[.)])\s)`)
)

// splitUnits splits an answer into lines and sentences; a line of JSON
// reads as a line per row (see readable).
func splitUnits(answer string) []unit {
	var lines []string
	for _, line := range strings.Split(answer, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			line = readable(t)
		}
		lines = append(lines, strings.Split(line, "\n")...)
	}
	var out []unit
	head := ""
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			head = ""
			continue
		}
		item := listItem.MatchString(line)
		h := ""
		if item {
			h = head
		}
		for i, s := range sentences(line) {
			out = append(out, unit{head: h, text: s, cont: i > 0})
		}
		switch {
		case item: // the items of a heading keep it
		case headingLine.MatchString(line):
			head = line
		default:
			head = ""
		}
	}
	return out
}

// sentences splits a line after ., ! or ? followed by a space and a
// capital (or an opening bracket, quote or emphasis).
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line)-2; i++ {
		c := line[i]
		if c != '.' && c != '!' && c != '?' || line[i+1] != ' ' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(strings.TrimLeft(line[i+1:], " "))
		if unicode.IsUpper(r) || strings.ContainsRune("*(\"'[`", r) {
			out = append(out, line[start:i+1])
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// labelIndex knows every name of the rows and groups a scenario may talk
// about.
type labelIndex struct {
	// ids maps a lower-case ID to its row key.
	ids map[string]string
	// rows and groups index the phrases that name rows and groups by
	// their first word, longest first.
	rows, groups phraseIndex
	// names holds each key's full names (as words), and display its ID.
	names   map[string][]string
	display map[string]string
}

// phraseIndex holds phrases by their first word, longest first.
type phraseIndex map[string][]phrase

// phrase is a run of words and the keys it names.
type phrase struct {
	words []string
	keys  []string
}

// add makes a phrase (as words) name a key.
func (pi phraseIndex) add(text, key string) {
	ws := strings.Fields(text)
	if len(ws) == 0 {
		return
	}
	list := pi[ws[0]]
	for i := range list {
		if slices.Equal(list[i].words, ws) {
			if !slices.Contains(list[i].keys, key) {
				list[i].keys = append(list[i].keys, key)
			}
			return
		}
	}
	list = append(list, phrase{ws, []string{key}})
	slices.SortStableFunc(list, func(a, b phrase) int { return len(b.words) - len(a.words) })
	pi[ws[0]] = list
}

// match returns the longest phrase starting at word i, if any.
func (pi phraseIndex) match(ws []wordTok, i int) (phrase, bool) {
	for _, p := range pi[ws[i].w] {
		if i+len(p.words) > len(ws) {
			continue
		}
		ok := true
		for k, w := range p.words[1:] {
			if ws[i+1+k].w != w {
				ok = false
				break
			}
		}
		if ok {
			return p, true
		}
	}
	return phrase{}, false
}

// displayField is the field that names an entity's rows for people: name
// or label (also by the parts of it no other row shares), else title
// (named whole: a title is composed like a sentence); "" when the entity
// has none, and its rows are named by ID alone.
func displayField(e *speclang.Entity) (field string, parts bool) {
	for _, want := range []string{"name", "label", "title"} {
		for _, f := range e.Fields {
			if f.Name == want && f.Type == speclang.TString {
				return f.Name, want != "title"
			}
		}
	}
	return "", false
}

// newLabelIndex indexes the IDs and names of every row of the seed and the
// right stores, and the keys of the groups of the gold's statistics.
func newLabelIndex(d *speclang.Domain, stores []map[string]map[string]any, reads []GoldRead) *labelIndex {
	li := &labelIndex{ids: map[string]string{}, rows: phraseIndex{}, groups: phraseIndex{}, names: map[string][]string{}, display: map[string]string{}}
	if d == nil {
		return li
	}
	type display struct {
		field string
		parts bool
	}
	fields := map[string]display{}
	for _, e := range d.Entities {
		f, p := displayField(e)
		fields[e.Name] = display{f, p}
	}
	names := map[string]map[string]string{} // entity → key → name, as words
	for _, rows := range stores {
		for key, row := range rows {
			entity := classOf(key)
			id := key[len(entity)+1:]
			li.ids[strings.ToLower(id)], li.display[key] = key, id
			if name, ok := row[fields[entity].field].(string); ok && words(name) != "" {
				if names[entity] == nil {
					names[entity] = map[string]string{}
				}
				names[entity][key] = strings.ToLower(name)
			}
		}
	}
	for _, entity := range slices.Sorted(maps.Keys(names)) {
		rows := names[entity]
		padded := map[string]string{}
		for key, name := range rows {
			padded[key] = " " + words(name) + " "
		}
		for _, key := range slices.Sorted(maps.Keys(rows)) {
			full := words(rows[key])
			li.names[key] = append(li.names[key], full)
			li.rows.add(full, key)
			if fields[entity].parts {
				for _, p := range uniqueParts(rows[key], key, padded) {
					li.rows.add(p, key)
				}
			}
		}
	}
	for _, r := range reads {
		eachGroup(r.Output, func(groupBy string, g map[string]any) {
			k := fmt.Sprint(g["key"])
			if key := li.groupKey(groupBy, k); strings.Contains(key, "=") {
				li.add(words(k), key)
				li.display[key] = k
			}
		})
	}
	return li
}

// eachGroup calls fn with every group of every statistic in a decoded
// output.
func eachGroup(v any, fn func(groupBy string, g map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if groupBy, ok := x["group_by"].(string); ok {
			gs, _ := x["groups"].([]any)
			for _, g := range gs {
				if gm, ok := g.(map[string]any); ok {
					fn(groupBy, gm)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			eachGroup(x[k], fn)
		}
	case []any:
		for _, e := range x {
			eachGroup(e, fn)
		}
	}
}

// add makes a phrase name a key: a row's, or a group's (groups are named
// apart from rows: "lab" names the lab building inside "Lab building
// feeder", a meter's name).
func (li *labelIndex) add(phrase, key string) {
	if strings.Contains(key, "=") {
		li.groups.add(phrase, key)
	} else {
		li.rows.add(phrase, key)
	}
}

// groupKey names a statistic's group; a group keyed by a row's ID (a
// statistic grouped by field_id) is that row.
func (li *labelIndex) groupKey(groupBy, key string) string {
	if row, ok := li.ids[strings.ToLower(key)]; ok {
		return row
	}
	return groupKeyOf(groupBy, key)
}

// uniqueParts lists the runs of words of a row's name that no other row of
// its entity has in its name (padded: each name as words, between
// spaces): "A1 spindle vibration" names one sensor. Runs start and end
// where the name's own words do (the 4 of "B4" is no run); a run of one
// word must be five letters or more, and no run starts or ends with a stop
// word or is made of numbers and single letters alone.
func uniqueParts(name, key string, padded map[string]string) []string {
	ws := strings.Fields(name)
	var out []string
	for i := range ws {
		for j := i + 1; j <= len(ws) && j-i <= 6; j++ {
			run := ws[i:j]
			if i == 0 && j == len(ws) || stopWords[words(run[0])] || stopWords[words(run[len(run)-1])] {
				continue
			}
			p := words(strings.Join(run, " "))
			if len(run) == 1 && (len(p) < 5 || strings.ContainsAny(p, "0123456789 ")) || !slices.ContainsFunc(strings.Fields(p), func(w string) bool {
				return len(w) > 1 && !strings.ContainsAny(w, "0123456789")
			}) {
				continue
			}
			unique := true
			for other, name := range padded {
				if other != key && strings.Contains(name, " "+p+" ") {
					unique = false
					break
				}
			}
			if unique {
				out = append(out, p)
			}
		}
	}
	return out
}

// keysIn lists the keys a text names.
func (li *labelIndex) keysIn(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range li.scan(unit{text: text}).mentions {
		for _, k := range m.keys {
			out[k] = true
		}
	}
	return out
}

// say names a key for people: its ID or group key.
func (li *labelIndex) say(key string) string {
	if d, ok := li.display[key]; ok {
		if strings.Contains(key, "=") {
			return classOf(key)[:len(classOf(key))-1] + " " + d
		}
		return d
	}
	return key
}

// mention is a place where a unit names rows or groups.
type mention struct {
	span
	keys []string
}

// unitScan is a unit read once: its words, numbers and mentions.
type unitScan struct {
	// prev is the sentence before on the same line, if any.
	prev     *unitScan
	text     string
	words    []wordTok
	numbers  []numberTok
	mentions []mention
	// groups caches groupsOf by class.
	groups map[string][]mention
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

// scan reads a unit; a list item under a heading reads as the heading, a
// colon, then the item.
func (li *labelIndex) scan(u unit) *unitScan {
	text := u.text
	if u.head != "" {
		text = strings.TrimRight(strings.TrimSpace(u.head), ":") + ": " + u.text
	}
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
	// Names of rows, then of groups, longest first at each word.
	sc.names(li.rows, taken)
	sc.names(li.groups, taken)
	slices.SortFunc(sc.mentions, func(a, b mention) int { return a.start - b.start })
	return sc
}

// names adds the mentions of an index's phrases, longest first at each
// word, outside the taken bytes (IDs).
func (sc *unitScan) names(pi phraseIndex, taken []bool) {
	for i := 0; i < len(sc.words); {
		p, ok := pi.match(sc.words, i)
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
				if n.states(v, dv) {
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
		if n := len(out); n > 0 && onlyConnectors(sc.text[out[n-1].end:m.start]) {
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

// onlyConnectors reports whether a text between two mentions joins them.
func onlyConnectors(between string) bool {
	for _, w := range wordTokens(between) {
		if !connectorWords[w.w] {
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
		// A sentence that names none goes on about the last one the
		// sentence before it on the line named ("She drove 7.5 hours").
		if sc.prev != nil {
			if pg := sc.prev.groupsOf(class); len(pg) > 0 {
				return pg[len(pg)-1].keys
			}
		}
		return nil
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

// cued reports whether the words since the last value or subject before a
// number name its quantity.
func (sc *unitScan) cued(n numberTok, cues []string) bool {
	from := 0
	for _, m := range sc.mentions {
		if m.end <= n.start {
			from = max(from, m.end)
		}
	}
	for _, o := range sc.numbers {
		if o.end <= n.start {
			from = max(from, o.end)
		}
	}
	for _, w := range wordTokens(sc.text[from:n.start]) {
		for _, c := range cues {
			if stem(w.w) == stem(c) {
				return true
			}
		}
	}
	return false
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

// negated reports whether a unit says something is not so.
func (sc *unitScan) negated() bool {
	if strings.Contains(strings.ToLower(sc.text), "n't") || strings.Contains(sc.text, "n’t") {
		return true
	}
	return slices.ContainsFunc(sc.words, func(w wordTok) bool { return negations[w.w] })
}

// explainFacts turns the verdicts into the record's explanation and
// reasons.
func explainFacts(m *results.Metrics, verdicts []factVerdict) {
	m.FactsOK = true
	for _, v := range verdicts {
		if v.why == "" {
			continue
		}
		m.FactsOK = false
		f := v.check.fact
		mf := missingFact(f)
		if len(v.check.subjects) > 0 && v.check.subjects[0].kind != aboutTotal {
			mf.About = v.check.subjects[0].String()
		}
		mf.Said = v.why
		explain(m).MissingFacts = append(explain(m).MissingFacts, mf)
		about := ""
		if mf.About != "" {
			about = " about " + mf.About
		}
		m.Why = append(m.Why, fmt.Sprintf("the answer does not state %s (%s)%s: %s", jsonString(f.Value), f.What, about, v.why))
	}
}

// readable reads a line of JSON in an answer (a subject may answer with a
// tool's output) the way a careful agent would write it: a line per row
// ("VH008: fuel_pct 12, status available"), a statistic with a line per
// group, and a count next to what it counts, so that each value is stated
// about its subject. Any other line is kept as it is.
func readable(result string) string {
	var v any
	if json.Unmarshal([]byte(result), &v) != nil {
		return result
	}
	var b strings.Builder
	writeReadable(&b, v)
	return strings.TrimRight(b.String(), "\n")
}

func writeReadable(b *strings.Builder, v any) {
	x, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok {
			for _, e := range list {
				writeReadable(b, e)
			}
			return
		}
		fmt.Fprintf(b, "%s\n", jsonString(v))
		return
	}
	entity, _ := x["entity"].(string)
	if groups, ok := x["groups"].([]any); ok || x["function"] != nil {
		fmt.Fprintf(b, "%s of %s over %s %s rows: %s\n", readableValue(x["function"]), readableValue(x["field"]), readableValue(x["count"]), entity, readableValue(x["value"]))
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			fmt.Fprintf(b, "- %s %s: %s (%s %s rows)\n", readableValue(x["group_by"]), readableValue(gm["key"]), readableValue(gm["value"]), readableValue(gm["count"]), entity)
		}
		return
	}
	if items, ok := x["items"].([]any); ok {
		fmt.Fprintf(b, "%s %s rows:\n", readableValue(x["count"]), entity)
		for _, it := range items {
			b.WriteString("- ")
			writeReadable(b, it)
		}
		return
	}
	id, hasID := x["id"].(string)
	if !hasID {
		fmt.Fprintf(b, "%s\n", jsonString(v))
		return
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if k != "id" {
			parts = append(parts, k+" "+readableValue(x[k]))
		}
	}
	fmt.Fprintf(b, "%s: %s\n", id, strings.Join(parts, ", "))
}

// readableValue writes a string as it is and anything else as JSON (1000000,
// not fmt's 1e+06).
func readableValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonString(v)
}

// Stated reports whether a text states a fact in any of its forms.
func Stated(text string, f *speclang.Fact) bool {
	for _, form := range f.Forms() {
		if statesValue(text, form) {
			return true
		}
	}
	return false
}

func statesValue(text string, v any) bool {
	switch x := v.(type) {
	case float64:
		return statesNumber(text, x, decimals(strconv.FormatFloat(x, 'f', -1, 64)))
	case int64:
		return statesNumber(text, float64(x), 0)
	case int:
		return statesNumber(text, float64(x), 0)
	case string:
		w := words(x)
		return w != "" && strings.Contains(" "+words(text)+" ", " "+w+" ")
	default:
		return strings.Contains(text, fmt.Sprint(v))
	}
}
