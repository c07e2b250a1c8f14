package score

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
)

// Mutant is a wrong variant of a right recording: another answer, or
// another final store (nil: the recording's).
type Mutant struct {
	Kind   string
	Answer string
	Store  []byte
}

// Mutants derives wrong answers and stores from a right recording's answer
// and final store, scored against g (corpus_test.go).
func Mutants(g *Gold, s *speclang.Scenario, answer string, final []byte) []Mutant {
	var out []Mutant
	fg := g.facts
	// Swap the values of two facts about different subjects of a class.
	for i, a := range fg.facts {
		for _, b := range fg.facts[i+1:] {
			if kindOf1(a) != aboutRow && kindOf1(a) != aboutGroup || kindOf1(b) != kindOf1(a) || a.subjects[0].class != b.subjects[0].class || a.subjects[0].key == b.subjects[0].key {
				continue
			}
			av, ok1 := number(a.fact.Value)
			bv, ok2 := number(b.fact.Value)
			if !ok1 || !ok2 || av == bv {
				continue
			}
			if swapped, ok := swapNumbers(answer, av, bv); ok {
				out = append(out, Mutant{Kind: "swap", Answer: swapped})
			}
		}
	}
	for _, fc := range fg.facts {
		switch kindOf1(fc) {
		case aboutCount:
			v, _ := number(fc.fact.Value)
			if changed, ok := replaceNumber(answer, v, strconv.FormatFloat(v+1, 'f', -1, 64)); ok {
				out = append(out, Mutant{Kind: "count", Answer: changed})
			}
		case aboutMember:
			if other := nonMember(fg, fc); other != "" {
				member := fg.labels.say(fc.subjects[0].key)
				out = append(out, Mutant{Kind: "non-member", Answer: answer + "\n\nAlso " + member + " and " + other + "."})
			}
		}
	}
	// Drop every subject: each mention of a row or group becomes "it".
	if slices.ContainsFunc(fg.facts, func(fc *factCheck) bool {
		return (kindOf1(fc) == aboutRow || kindOf1(fc) == aboutGroup) && !fg.ownText(fc)
	}) {
		out = append(out, Mutant{Kind: "no-subject", Answer: dropSubjects(fg, answer)})
	}
	out = append(out, storeMutants(g, s, answer, final)...)
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

// nonMember names a row of a set's class that the set lacks.
func nonMember(fg *factGold, fc *factCheck) string {
	members := map[string]bool{}
	for _, other := range fg.facts {
		for _, s := range other.subjects {
			members[s.key] = true
		}
	}
	class := fc.subjects[0].class
	var keys []string
	for _, key := range fg.labels.ids {
		if classOf(key) == class && !members[key] {
			keys = append(keys, key)
		}
	}
	for _, ps := range fg.labels.groups {
		for _, p := range ps {
			for _, key := range p.keys {
				if classOf(key) == class && !members[key] && !slices.Contains(keys, key) {
					keys = append(keys, key)
				}
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	return fg.labels.say(keys[0])
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

// storeMutants change the recorded final store: a dictated text replaced,
// and a write to a row no right solution touches.
func storeMutants(g *Gold, s *speclang.Scenario, answer string, final []byte) []Mutant {
	var out []Mutant
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
					out = append(out, Mutant{Kind: "dictated", Answer: answer, Store: encode()})
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
					out = append(out, Mutant{Kind: "untouched-row", Answer: answer, Store: encode()})
					row[f] = n
					return out
				}
			}
		}
	}
	return out
}
