package score

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
)

// A verdict is proven by mutation: from a right solution (a recording of
// real agent work, or the oracle's), a catalogue of operators derives
// wrong answers and stores, each of which must score TC 0, and right
// rewrites of the answer, each of which must score TC 1. Operators work on
// the answer's structure and on what the gold knows (its facts, their
// subjects, the task's changes), never on one scenario's text.

// Operator is one way of deriving a variant from a right solution.
type Operator struct {
	Name string
	// Right says its variants are right and must score TC 1; the others
	// are wrong and must score 0.
	Right bool
	Doc   string
}

// Operators is the catalogue, wrong ones first.
var Operators = []Operator{
	{"swap", false, "the values of two facts about different subjects of one class exchanged"},
	{"wrong-value", false, "a fact's value written as another number wherever it stands"},
	{"count", false, "a count one more than it is"},
	{"no-subject", false, "every row or group named written as \"it\", where the values need their subject"},
	{"drop-fact", false, "every line that states one fact left out"},
	{"non-member", false, "a row outside the asked-for set named beside a member"},
	{"non-member-item", false, "a row outside the set added as an item of the list of members"},
	{"negation-elsewhere", false, "a non-member beside a member, with a negation in another clause"},
	{"maybe-members", false, "every candidate listed as one that may be a member"},
	{"hedge-member", false, "each member written as \"possibly\" one"},
	{"hedge", false, "a second value offered for a fact (\"12 or 18\")"},
	{"old-value", false, "a row the task changed stated with its value from before"},
	{"level-words", false, "words that contradict a level in percent beside it (\"12%, almost full\")"},
	{"dump", false, "every tool result as the answer, rows before and after the task"},
	{"dictated", false, "a text the prompt dictates written otherwise in the store"},
	{"untouched-row", false, "a write to a row no right solution touches"},
	{"reordered", true, "the answer's blocks in reverse order"},
	{"decimal-comma", true, "every number written with a decimal comma and thousands points"},
	{"lead-bullets", true, "the facts under a lead line per subject (the oracle's answer)"},
	{"table", true, "the facts as a Markdown table"},
	{"prose", true, "the facts as sentences, later ones about a subject by pronoun"},
	{"json", true, "a JSON object of exactly the facts asked for"},
	{"german", true, "the facts in German words with decimal commas"},
}

// rightOperator says whether an operator's variants are right.
func rightOperator(name string) bool {
	for _, o := range Operators {
		if o.Name == name {
			return o.Right
		}
	}
	return false
}

// Base is a right solution that variants start from: its answer, its
// final store and the outputs of its calls, in order.
type Base struct {
	Answer  string
	Store   []byte
	Outputs []string
	// Oracle says the answer is the oracle's (OracleAnswer): the facts'
	// other document forms are derived too.
	Oracle bool
}

// Variant is one answer and store an operator derived from a base.
type Variant struct {
	Operator string
	Right    bool
	Answer   string
	// Store is nil when the variant keeps the base's.
	Store []byte
}

// Variants derives every variant of a right solution the catalogue can
// make for the scenario g scores.
func (g *Gold) Variants(b Base) []Variant {
	var out []Variant
	add := func(op, answer string, store []byte) {
		out = append(out, Variant{Operator: op, Right: rightOperator(op), Answer: answer, Store: store})
	}
	fg := g.facts
	answer := b.Answer
	// Swap the values of two facts about different subjects of a class.
	for i, a := range fg.facts {
		for _, c := range fg.facts[i+1:] {
			if kindOf1(a) != aboutRow && kindOf1(a) != aboutGroup || kindOf1(c) != kindOf1(a) || a.subjects[0].class != c.subjects[0].class || a.subjects[0].key == c.subjects[0].key {
				continue
			}
			av, ok1 := number(a.fact.Value)
			cv, ok2 := number(c.fact.Value)
			if !ok1 || !ok2 || av == cv {
				continue
			}
			if swapped, ok := swapNumbers(answer, av, cv); ok {
				add("swap", swapped, nil)
			}
		}
	}
	for _, fc := range fg.facts {
		v, isNumber := number(fc.fact.Value)
		switch kindOf1(fc) {
		case aboutCount:
			if changed, ok := replaceNumber(answer, v, formatNumber(v+1)); ok {
				add("count", changed, nil)
			}
		case aboutMember:
			if other := nonMember(fg, fc); other != "" {
				member := fg.labels.say(fc.subjects[0].key)
				add("non-member", answer+"\n\nAlso "+member+" and "+other+".", nil)
				add("negation-elsewhere", answer+"\n\n"+member+" and "+other+" qualify, and everything else is normal.", nil)
				if item, ok := listItemAfter(fg, answer, fc.subjects[0].key, other); ok {
					add("non-member-item", item, nil)
				}
			}
		default:
			if !isNumber {
				break
			}
			other := otherNumber(v)
			if changed, ok := replaceNumber(answer, v, other); ok {
				add("wrong-value", changed, nil)
			}
			if hedged, ok := afterFirst(fg, answer, fc, " or "+other); ok {
				add("hedge", hedged, nil)
			}
			if fc.level {
				words := ", almost full"
				if v > 30 {
					words = ", almost empty"
				}
				if v <= 30 || v >= 70 {
					if qualified, ok := afterFirst(fg, answer, fc, words); ok {
						add("level-words", qualified, nil)
					}
				}
			}
		}
		if dropped, ok := dropFact(fg, fc, answer); ok {
			add("drop-fact", dropped, nil)
		}
	}
	// Every candidate of a set listed as maybe one, and each member
	// hedged.
	for _, class := range slices.Sorted(maps.Keys(fg.sets)) {
		set := fg.sets[class]
		if others := nonMembers(fg, set, class); len(others) > 0 {
			var all []string
			for k := range set.members {
				all = append(all, fg.labels.say(k))
			}
			slices.Sort(all)
			add("maybe-members", answer+"\n\nThese may be what you asked for: "+strings.Join(append(all, others...), ", ")+".", nil)
		}
		if hedged, ok := hedgeMembers(fg, answer, set); ok {
			add("hedge-member", hedged, nil)
		}
	}
	// Drop every subject: each mention of a row or group becomes "it".
	if slices.ContainsFunc(fg.facts, func(fc *factCheck) bool {
		return (kindOf1(fc) == aboutRow || kindOf1(fc) == aboutGroup) && !fg.ownText(fc)
	}) {
		add("no-subject", dropSubjects(fg, answer), nil)
	}
	if line, ok := oldValueLine(g); ok {
		add("old-value", answer+"\n\n"+line, nil)
	}
	if dump, ok := g.dump(b.Outputs); ok {
		add("dump", dump, nil)
	}
	for _, m := range storeMutants(g, answer, b.Store) {
		add(m.op, answer, m.store)
	}
	// Right rewrites.
	if r, ok := reorderBlocks(answer); ok {
		add("reordered", r, nil)
	}
	if r, ok := decimalCommas(answer); ok {
		add("decimal-comma", r, nil)
	}
	if b.Oracle {
		for _, form := range []string{"table", "prose", "json", "german"} {
			add(form, fg.render(form), nil)
		}
	}
	return out
}

// swapNumbers exchanges the written forms of two values in a text.
func swapNumbers(text string, a, b float64) (string, bool) {
	// Values that state each other (8 and 8.3) make no swap.
	if statesEither(a, b) {
		return "", false
	}
	toks := numberTokens(text)
	sc := &unitScan{text: text}
	var out strings.Builder
	last, swapped := 0, false
	for _, n := range toks {
		var with string
		switch {
		case n.states(a, decimals(formatNumber(a))) && !n.states(b, decimals(formatNumber(b))):
			with = formatNumber(b)
		case n.states(b, decimals(formatNumber(b))) && !n.states(a, decimals(formatNumber(a))):
			with = formatNumber(a)
		default:
			continue
		}
		if sc.inDate(n) {
			continue
		}
		out.WriteString(text[last:n.start])
		out.WriteString(with)
		last, swapped = n.end, true
	}
	out.WriteString(text[last:])
	return out.String(), swapped
}

func statesEither(a, b float64) bool {
	ta, tb := numberTokens(formatNumber(a)), numberTokens(formatNumber(b))
	return len(ta) == 1 && ta[0].states(b, decimals(formatNumber(b))) || len(tb) == 1 && tb[0].states(a, decimals(formatNumber(a)))
}

// replaceNumber writes another number wherever a text states v.
func replaceNumber(text string, v float64, with string) (string, bool) {
	var out strings.Builder
	last, done := 0, false
	sc := &unitScan{text: text}
	for _, n := range numberTokens(text) {
		if n.states(v, decimals(formatNumber(v))) && !sc.inDate(n) {
			out.WriteString(text[last:n.start] + with)
			last, done = n.end, true
		}
	}
	out.WriteString(text[last:])
	return out.String(), done
}

// dropSubjects writes "it" for every row or group an answer names.
func dropSubjects(fg *factGold, answer string) string {
	var lines []string
	for _, line := range strings.Split(answer, "\n") {
		sc := fg.labels.scan(line)
		var b strings.Builder
		last := 0
		for _, m := range sc.mentions {
			if m.start < last {
				continue
			}
			b.WriteString(line[last:m.start] + "it")
			last = m.end
		}
		b.WriteString(line[last:])
		lines = append(lines, b.String())
	}
	return strings.Join(lines, "\n")
}

// storeMutant is a final store an operator changed.
type storeMutant struct {
	op    string
	store []byte
}

// storeMutants change the recorded final store: a dictated text replaced,
// and a write to a row no right solution touches.
func storeMutants(g *Gold, answer string, final []byte) []storeMutant {
	var out []storeMutant
	var raw map[string]any
	if json.Unmarshal(final, &raw) != nil {
		return nil
	}
	store := map[string][]map[string]any{}
	for coll, v := range raw {
		rows, _ := v.([]any)
		for _, r := range rows {
			if m, ok := r.(map[string]any); ok {
				store[coll] = append(store[coll], m)
			}
		}
	}
	ch := g.changes
	encode := func() []byte {
		b, _ := json.Marshal(raw)
		return b
	}
	// A dictated text: a free-text field whose value the prompt dictates.
	dictated := false
	for _, coll := range slices.Sorted(maps.Keys(store)) {
		for _, row := range store[coll] {
			for f, v := range row {
				id, _ := row["id"].(string)
				k := rowKey{coll, id}
				written := ch.seed[coll][id] == nil || len(ch.sets[k][f]) > 0
				if sv, ok := v.(string); ok && written && !dictated && ch.kinds[coll][f] == kindFreeText && ch.dictated(sv) {
					row[f], dictated = "Something else entirely", true
					out = append(out, storeMutant{"dictated", encode()})
					row[f] = sv
				}
			}
		}
	}
	// A write to a seeded row no right store changes.
	for _, coll := range slices.Sorted(maps.Keys(store)) {
		for _, row := range store[coll] {
			id, _ := row["id"].(string)
			if len(ch.sets[rowKey{coll, id}]) > 0 || ch.deletes[rowKey{coll, id}] || ch.seed[coll][id] == nil {
				continue
			}
			for _, f := range slices.Sorted(maps.Keys(row)) {
				if n, ok := row[f].(float64); ok && ch.kinds[coll][f] == kindNumber {
					row[f] = n + 1
					out = append(out, storeMutant{"untouched-row", encode()})
					row[f] = n
					return out
				}
			}
		}
	}
	return out
}

// VariantVerdict is a variant as scored.
type VariantVerdict struct {
	Variant
	TC  float64
	Why []string
}

// AsRequired reports whether the verdict is the one the variant's
// operator requires: TC 1 for a right rewrite, 0 for a wrong variant.
func (v VariantVerdict) AsRequired() bool { return v.Right == (v.TC == 1) }

// Mutate scores every variant of a right solution against g (see
// Variants); the oracle's own answer is scored too, as lead-bullets.
func (g *Gold) Mutate(b Base) ([]VariantVerdict, error) {
	vs := g.Variants(b)
	if b.Oracle {
		vs = append([]Variant{{Operator: "lead-bullets", Right: true, Answer: b.Answer}}, vs...)
	}
	out := make([]VariantVerdict, 0, len(vs))
	for _, v := range vs {
		store := b.Store
		if v.Store != nil {
			store = v.Store
		}
		rec := &results.Record{StopReason: results.StopAnswer, FinalAnswer: v.Answer, Calls: []results.Call{}}
		m, err := Score(rec, g, store)
		if err != nil {
			return nil, fmt.Errorf("%s variant: %w", v.Operator, err)
		}
		out = append(out, VariantVerdict{Variant: v, TC: m.TC, Why: m.Why})
	}
	return out, nil
}

// MutationScore tallies, per operator, the variants made and those whose
// verdict is as required.
type MutationScore struct {
	ops map[string]*OperatorScore
}

// OperatorScore is one operator's tally; Failures name each variant whose
// verdict is not as required, with why.
type OperatorScore struct {
	Operator   string   `json:"operator"`
	Right      bool     `json:"right"`
	Made       int      `json:"made"`
	AsRequired int      `json:"as_required"`
	Failures   []string `json:"failures,omitempty"`
}

// Add counts a solution's verdicts, labelled (scenario, level, source) in
// failures.
func (s *MutationScore) Add(label string, verdicts []VariantVerdict) {
	if s.ops == nil {
		s.ops = map[string]*OperatorScore{}
	}
	for _, v := range verdicts {
		o := s.ops[v.Operator]
		if o == nil {
			o = &OperatorScore{Operator: v.Operator, Right: v.Right}
			s.ops[v.Operator] = o
		}
		o.Made++
		if v.AsRequired() {
			o.AsRequired++
			continue
		}
		want, got := "TC 0", "TC 1"
		if v.Right {
			want, got = "TC 1", "TC 0: "+strings.Join(v.Why, "; ")
		}
		// Wrong variants change the answer's end as often as not: show it.
		answer := v.Answer
		if len(answer) > 400 {
			answer = "…" + answer[len(answer)-400:]
		}
		o.Failures = append(o.Failures, fmt.Sprintf("%s: the %s variant must score %s, scores %s\n%s", label, v.Operator, want, got, answer))
	}
}

// Operators lists the tallies in the catalogue's order.
func (s *MutationScore) Operators() []OperatorScore {
	var out []OperatorScore
	for _, op := range Operators {
		if o := s.ops[op.Name]; o != nil {
			out = append(out, *o)
		}
	}
	return out
}

// OK reports whether every variant's verdict is as required.
func (s *MutationScore) OK() bool {
	for _, o := range s.ops {
		if o.AsRequired != o.Made {
			return false
		}
	}
	return true
}
