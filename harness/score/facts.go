package score

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// An answer states a fact when it states the value about the fact's
// subject. The answer is read as a document (document.go): each unit — a
// sentence, a list item, a table row — under the headings, lead line and
// parent items that scope it. In a unit, the subjects named (by ID, or by
// a part of the row's name that no other row of its entity shares, or a
// group's key) split it, and each value belongs to the subject it follows
// ("A: 3, B: 4", "A at 3 and B at 4"), or to the next one when a comma, a
// semicolon or "and" separates it from the one before ("3 for A, 4 for
// B"). Subjects joined only by "and", commas or brackets share the value
// after them ("both A and B at 20%"). A unit that names no subject of the
// fact's class goes on about its scope's, then the one its paragraph named
// last ("it"), then the answer's only one. Then:
//
//   - a row's or group's value counts only in a unit where it belongs to
//     that row or group, or, stated of no one named, where the fact's
//     subject is the one row the answer names that holds it;
//   - a value offered beside another, or stated as uncertain, is hedged
//     and fails ("3.1 or maybe 4.0 bar"); every other claim the answer
//     makes about a subject must be true too (claims.go);
//   - a set of rows ("which probes...") fails when a row outside it is
//     presented as a member: in a member's clause, or as a name alone in
//     their list, without a value that tells it apart or a negation in its
//     own clause (not, no, except, fine...);
//   - a count counts only within four words of what it counts (the
//     fact's words after "number of", or the entity's name), or right
//     after a label that names it;
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
	// promptNumbers are the numbers the prompt states.
	promptNumbers []numberTok
	// claims is what the answer's other claims are checked against.
	claims *claimGold
	// plurals names each entity's rows, for counts the oracle writes.
	plurals map[string]string
	// errs says, per fact, why its subject cannot be told; verify
	// reports them.
	errs []string
}

// factCheck is one answer fact and what it is about.
type factCheck struct {
	fact     *speclang.Fact
	subjects []subject
	nouns    []string
	// level says the fact's quantity is a level in percent that fills
	// and empties (a battery's charge).
	level bool
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
		fg.plurals = map[string]string{}
		for _, e := range d.Entities {
			fg.plurals[e.Name] = e.Plural
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
	for _, f := range s.Answer {
		fc := &factCheck{fact: f}
		subs, why := fg.choose(f, fg.candidates(f, reads))
		if why != "" {
			fg.errs = append(fg.errs, fmt.Sprintf("answer fact %s (%s): %s", jsonString(f.Value), f.What, why))
		}
		fc.subjects = subs
		// A level in percent: a battery's charge, a tank's fuel.
		for _, sub := range subs {
			percent := strings.HasSuffix(sub.field, "_pct") || fieldUnit(d, sub.class, sub.field) == "percent"
			about := strings.Fields(words(f.What) + " " + strings.ReplaceAll(sub.field, "_", " "))
			fc.level = fc.level || percent && slices.ContainsFunc(about, func(w string) bool { return slices.Contains(levelWords, w) })
		}
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
	fg.claims = newClaimGold(d, s, changes, fg.facts)
	return fg
}

// fieldUnit is the unit of an entity's field, or "".
func fieldUnit(d *speclang.Domain, entity, field string) string {
	if d == nil {
		return ""
	}
	for _, e := range d.Entities {
		for _, fl := range e.Fields {
			if e.Name == entity && fl.Name == field {
				return fl.Unit
			}
		}
	}
	return ""
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

// kindOf1 is what kind of thing a fact is about.
func kindOf1(fc *factCheck) subjectKind {
	if len(fc.subjects) == 0 {
		return aboutTotal
	}
	return fc.subjects[0].kind
}

// factVerdict is the judgement of one fact on an answer.
type factVerdict struct {
	check *factCheck
	// why is empty when the answer states the fact.
	why string
}

// verdict says whether an answer, read into its units' scans, states a
// fact about its subject.
func (fg *factGold) verdict(fc *factCheck, scans []*unitScan) factVerdict {
	why := fg.judgeOne(fc, scans)
	if why == "" {
		why = fg.hedged(fc, scans)
	}
	return factVerdict{fc, why}
}

func (fg *factGold) judgeOne(fc *factCheck, scans []*unitScan) string {
	f := fc.fact
	if len(fc.subjects) == 0 || fc.subjects[0].kind == aboutTotal {
		if !stated(scans, f) {
			return "it is not in the answer"
		}
		for _, sc := range scans {
			if w := fg.qualified(fc, sc); w != "" {
				return w
			}
		}
		return ""
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
				if w := fg.qualified(fc, sc); w != "" {
					return w
				}
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
		case seen && fg.ownText(fc):
			// A text only its subject holds names it: the alert
			// "Living room CO2 above 900 ppm" is the one event.
			return ""
		case seen && fg.onlyHolder(fc, scans):
			// A value stated of no one named ("the north depot's truck,
			// which has 58% fuel") is the one named subject's that holds
			// it.
			return ""
		case seen:
			return fmt.Sprintf("it states the value without naming %s in the same sentence, line or row", fg.labels.say(fc.subjects[0].key))
		}
		return "it is not in the answer"
	}
	return ""
}

// onlyHolder reports whether the fact's subject is named somewhere in the
// answer and no other row or group of its class the answer names holds
// the fact's value.
func (fg *factGold) onlyHolder(fc *factCheck, scans []*unitScan) bool {
	key, class := fc.subjects[0].key, fc.subjects[0].class
	named := map[string]bool{}
	for _, sc := range scans {
		for _, m := range sc.mentions {
			for _, k := range m.keys {
				if classOf(k) == class {
					named[k] = true
				}
			}
		}
	}
	if !named[key] {
		return false
	}
	for k := range named {
		if k == key {
			continue
		}
		for _, v := range fg.truths[k] {
			if factEquals(fc.fact, v) {
				return false
			}
		}
	}
	return true
}

// hedged says why a stated fact is hedged: a value of it offered beside
// another, or stated as uncertain (see unitScan.hedge); "" when it is not.
func (fg *factGold) hedged(fc *factCheck, scans []*unitScan) string {
	for _, sc := range scans {
		for _, o := range sc.occurrences(fc.fact) {
			if h := sc.hedge(o); h != "" {
				return h
			}
		}
		if kindOf1(fc) == aboutMember {
			for _, m := range sc.mentions {
				if slices.ContainsFunc(fc.subjects, func(s subject) bool { return slices.Contains(m.keys, s.key) }) && sc.hedgedName(m.span) {
					c := sc.clause(m.span)
					return "it states " + fg.labels.say(fc.subjects[0].key) + " as uncertain: " + strings.TrimSpace(sc.text[c.start:c.end])
				}
			}
		}
	}
	return ""
}

// ownText reports whether a text fact's value is held by its subject
// alone among the rows of its entity in the seed and the right stores,
// so that stating it names the subject.
func (fg *factGold) ownText(fc *factCheck) bool {
	v, ok := fc.fact.Value.(string)
	if !ok || words(v) == "" || fc.subjects[0].kind != aboutRow {
		return false
	}
	class := fc.subjects[0].class
	holders := map[string]bool{}
	for key, vals := range fg.truths {
		if classOf(key) != class || strings.Contains(key, "=") {
			continue
		}
		for _, x := range vals {
			if s, ok := x.(string); ok && statesValue(s, v) {
				holders[key] = true
			}
		}
	}
	return len(holders) == 1 && holders[fc.subjects[0].key]
}

// fullWords and emptyWords say a level in words; a percentage stated
// beside words that say the opposite contradicts itself ("12%, almost
// full").
var fullWords, emptyWords = []string{"full", "fully charged", "topped up"}, []string{"empty", "flat", "depleted", "low"}

// levelWords say a percentage is a level that fills and empties.
var levelWords = []string{"battery", "charge", "fuel", "soc", "tank", "fill", "level"}

// qualified says why the words about a percentage fact's subject in a
// unit contradict its value; "" when they do not.
func (fg *factGold) qualified(fc *factCheck, sc *unitScan) string {
	v, ok := number(fc.fact.Value)
	if !ok || !fc.level {
		return ""
	}
	var level []string
	switch {
	case v <= 30:
		level = fullWords
	case v >= 70:
		level = emptyWords
	default:
		return ""
	}
	key := ""
	if kindOf1(fc) != aboutTotal {
		key = fc.subjects[0].key
	}
	for _, o := range sc.occurrences(fc.fact) {
		if key != "" && !slices.Contains(sc.owners(o, classOf(key)), key) {
			continue
		}
		near := sc.nearInClause(o, 4)
		for _, w := range level {
			ws := strings.Fields(w)
			for i := 0; i+len(ws) <= len(near); i++ {
				// "not full", "far from empty" say no such level.
				negated := slices.ContainsFunc(near[max(0, i-2):i], func(w string) bool { return w == "not" || w == "no" || w == "never" || w == "far" || w == "t" })
				if slices.Equal(near[i:i+len(ws)], ws) && !negated {
					return fmt.Sprintf("it says %q beside %s, which is no such level", w, jsonString(fc.fact.Value))
				}
			}
		}
	}
	return ""
}

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

// inPrompt reports whether a written number is one of the prompt's (a
// threshold the answer repeats).
func (fg *factGold) inPrompt(n numberTok) bool {
	return slices.ContainsFunc(fg.promptNumbers, func(p numberTok) bool { return p.states(n.x, n.dx) })
}

func (fg *factGold) isTruth(key string, n numberTok) bool {
	return statesAny(n, fg.truths[key])
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
			near := sc.near(o, 4)
			// A count at the start of an item reads after its lead line
			// ("Open alarms:" then "- 5").
			if sc.scope != nil && sc.wordsBefore(o) < 4 {
				near = append(near, sc.scope.near(span{len(sc.scope.text), len(sc.scope.text)}, 4)...)
			}
			for _, w := range near {
				if slices.Contains(fc.nouns, stem(w)) {
					return ""
				}
			}
		}
	}
	if seen {
		if labelled(scans, fc) {
			return ""
		}
		return fmt.Sprintf("it states the number, but not next to what it counts (%s)", strings.Join(slices.DeleteFunc(slices.Clone(fc.nouns), func(s string) bool { return s == "" }), ", "))
	}
	return "it is not in the answer"
}

// labelled reports whether a count stands right after a label that names
// what it counts ("number of robots in the machining zone: 3").
func labelled(scans []*unitScan, fc *factCheck) bool {
	for _, sc := range scans {
		for _, o := range sc.occurrences(fc.fact) {
			colon := strings.LastIndexByte(sc.text[:o.start], ':')
			if colon < 0 || strings.TrimSpace(strings.Trim(sc.text[colon+1:o.start], " *_")) != "" {
				continue
			}
			from := strings.LastIndexAny(sc.text[:colon], ".;|:") + 1
			for _, w := range wordTokens(sc.text[from:colon]) {
				if slices.Contains(fc.nouns, stem(w.w)) {
					return true
				}
			}
		}
	}
	return false
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
	isMember := func(m mention) bool {
		return slices.ContainsFunc(m.keys, func(k string) bool { return members[k] })
	}
	// The lists an item of which names a member: their other items that
	// are names alone are presented as members too ("- SH003", "- SH007").
	memberLists := map[int]bool{}
	for _, sc := range scans {
		if sc.list != 0 && slices.ContainsFunc(sc.mentions, isMember) {
			memberLists[sc.list] = true
		}
	}
	for _, sc := range scans {
		// A row outside the set is presented as a member when it is
		// named in the clause of a member, or as an item of a list of
		// them, with no value of its own that tells it apart and no
		// negation in its clause.
		// An item that leads items of its own heads them, and presents
		// nothing ("- SS006:").
		// Only an item's first sentence is the item.
		nameOnly := memberLists[sc.list] && sc.prev == nil && sc.namesOnly(class) && !strings.HasSuffix(strings.TrimSpace(sc.text), ":")
		for _, m := range sc.mentions {
			c := sc.clause(m.span)
			beside := slices.ContainsFunc(sc.mentions, func(o mention) bool { return isMember(o) && o.start >= c.start && o.end <= c.end })
			if !beside && !nameOnly || sc.apposition(m.span, isMember) {
				continue
			}
			for _, k := range m.keys {
				if classOf(k) != class || members[k] || sc.negatedAt(m.span) || fg.truthStated(sc, k, members) || sc.contrasted(m.span) || sc.clauseHasNumber(m.span) {
					continue
				}
				return fmt.Sprintf("it presents %s as one of them, which it is not", fg.labels.say(k))
			}
		}
	}
	return ""
}

// truthStated reports whether a unit states a value of a row (or group)
// about it that tells it apart from the members of the set: a number it
// holds, or a text no member holds in the same field (every probe of the
// set is in the north zone too, so "north" tells nothing).
func (fg *factGold) truthStated(sc *unitScan, key string, members map[string]bool) bool {
	for _, n := range sc.numbers {
		if slices.Contains(sc.owners(n.span, classOf(key)), key) && fg.isTruth(key, n) {
			return true
		}
	}
	held := func(k, field, s string) bool {
		return slices.ContainsFunc(fg.claims.now[k][field], func(v any) bool { x, ok := v.(string); return ok && words(x) == words(s) })
	}
	shared := func(s string) bool {
		if strings.Contains(key, "=") {
			// A group's values are its rows': shared when a member
			// group's rows hold it too.
			for m := range members {
				if slices.ContainsFunc(fg.truths[m], func(v any) bool { x, ok := v.(string); return ok && words(x) == words(s) }) {
					return true
				}
			}
			return false
		}
		for field := range fg.claims.now[key] {
			if !held(key, field, s) {
				continue
			}
			for m := range members {
				if held(m, field, s) {
					return true
				}
			}
		}
		return false
	}
	for _, v := range fg.truths[key] {
		s, ok := v.(string)
		// Its name or key says which row it is, not what it holds.
		if !ok || len(s) > 40 || words(s) == "" || words(s) == words(fg.labels.display[key]) || slices.Contains(fg.labels.names[key], words(s)) || shared(s) {
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

// explainFacts turns the verdicts and the false claims into the record's
// explanation and reasons.
func explainFacts(m *results.Metrics, verdicts []factVerdict, falseClaims []string) {
	m.FactsOK = len(falseClaims) == 0
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
	for _, c := range falseClaims {
		explain(m).FalseClaims = append(explain(m).FalseClaims, c)
		m.Why = append(m.Why, "the answer claims what is not so: "+c)
	}
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
