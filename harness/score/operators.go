package score

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The operators' helpers: each finds its place in an answer by the
// answer's structure (lines, list items, numbers, names) and by what the
// gold knows.

// otherNumber writes a number that is not v, at v's precision: the value a
// wrong answer states instead.
func otherNumber(v float64) string {
	d := decimals(formatNumber(v))
	x := math.Round((v*1.5+3)*math.Pow10(d)) / math.Pow10(d)
	return strconv.FormatFloat(x, 'f', d, 64)
}

// firstStated is where an answer first states a fact's number, outside
// dates and names, with the unit glued to it ("12%"); ok is false when it
// states none.
func firstStated(text string, v float64) (span, bool) {
	sc := &unitScan{text: text}
	for _, n := range numberTokens(text) {
		if !n.states(v, decimals(formatNumber(v))) || sc.inDate(n) {
			continue
		}
		end := n.end
		for end < len(text) && !strings.ContainsRune(" \t\n,.;:)]*|", rune(text[end])) {
			end++
		}
		return span{n.start, end}, true
	}
	return span{}, false
}

// afterFirst inserts text after the first place an answer states a
// fact's number about its subject (or anywhere, for a total).
func afterFirst(fg *factGold, answer string, fc *factCheck, insert string) (string, bool) {
	v, ok := number(fc.fact.Value)
	if !ok {
		return "", false
	}
	for _, sc := range fg.labels.read(answer) {
		at := strings.Index(answer, sc.text)
		if at < 0 {
			continue // a table row or JSON, read rewritten
		}
		for _, o := range sc.occurrences(fc.fact) {
			if kindOf1(fc) != aboutTotal && !slices.Contains(sc.owners(o, fc.subjects[0].class), fc.subjects[0].key) {
				continue
			}
			if s, ok := firstStated(answer[at+o.start:], v); ok {
				end := at + o.start + s.end
				return answer[:end] + insert + answer[end:], true
			}
		}
	}
	return "", false
}

// dropFact leaves out every line of an answer that states a fact: its
// value, or for a member its name.
func dropFact(fg *factGold, fc *factCheck, answer string) (string, bool) {
	var kept []string
	dropped := false
	for _, line := range strings.Split(answer, "\n") {
		sc := fg.labels.scan(line)
		states := len(sc.occurrences(fc.fact)) > 0
		if kindOf1(fc) == aboutMember {
			states = states || slices.ContainsFunc(sc.mentions, func(m mention) bool { return slices.Contains(m.keys, fc.subjects[0].key) })
		}
		if states {
			dropped = true
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n"), dropped
}

// nonMembers names the rows (or groups) of a set's class outside it, at
// most three, sorted.
func nonMembers(fg *factGold, set *factSet, class string) []string {
	var keys []string
	for _, key := range fg.labels.ids {
		if classOf(key) == class && !set.members[key] {
			keys = append(keys, key)
		}
	}
	for _, ps := range fg.labels.groups {
		for _, p := range ps {
			for _, key := range p.keys {
				if classOf(key) == class && !set.members[key] && !slices.Contains(keys, key) {
					keys = append(keys, key)
				}
			}
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys[:min(3, len(keys))] {
		out = append(out, fg.labels.say(k))
	}
	return out
}

// nonMember names a row of a fact's set's class that the set lacks.
func nonMember(fg *factGold, fc *factCheck) string {
	if others := nonMembers(fg, fg.sets[fc.subjects[0].class], fc.subjects[0].class); len(others) > 0 {
		return others[0]
	}
	return ""
}

// listItemAfter adds an item naming other after the first list item that
// names a member, written with the same marker.
func listItemAfter(fg *factGold, answer, member, other string) (string, bool) {
	lines := strings.Split(answer, "\n")
	for i, line := range lines {
		m := listItem.FindString(line)
		if m == "" {
			continue
		}
		if slices.ContainsFunc(fg.labels.scan(line).mentions, func(x mention) bool { return slices.Contains(x.keys, member) }) {
			out := append(slices.Clone(lines[:i+1]), m+other)
			return strings.Join(append(out, lines[i+1:]...), "\n"), true
		}
	}
	return "", false
}

// hedgeMembers writes "possibly" before every name of a set's member.
func hedgeMembers(fg *factGold, answer string, set *factSet) (string, bool) {
	lines := strings.Split(answer, "\n")
	changed := false
	for i, line := range lines {
		sc := fg.labels.scan(line)
		var b strings.Builder
		last := 0
		for _, m := range sc.mentions {
			if m.start < last || !slices.ContainsFunc(m.keys, func(k string) bool { return set.members[k] }) {
				continue
			}
			b.WriteString(line[last:m.start] + "possibly ")
			last, changed = m.start, true
		}
		b.WriteString(line[last:])
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n"), changed
}

// oldValueLine states a row the task changed with its value from before
// the change, as a row of a tool's output reads ("VH006: status
// available"); ok is false when the task changes no field whose claims
// are checked.
func oldValueLine(g *Gold) (string, bool) {
	cg := g.facts.claims
	for _, key := range slices.Sorted(maps.Keys(cg.old)) {
		for _, f := range cg.fields[classOf(key)] {
			if old, ok := cg.old[key][f.name]; ok {
				v := readableValue(old)
				if s, ok := old.(string); ok {
					v = words(s)
				}
				return g.facts.labels.say(key) + ": " + strings.ReplaceAll(f.name, "_", " ") + " " + v, true
			}
		}
	}
	return "", false
}

// dump is every output of a solution's calls as its answer, when one of
// them shows a row the task changed as it was before; ok is false
// otherwise (a dump of reads alone may be a right answer).
func (g *Gold) dump(outputs []string) (string, bool) {
	cg := g.facts.claims
	stale := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if id, ok := x["id"].(string); ok {
				if key, known := g.facts.labels.ids[strings.ToLower(id)]; known {
					for _, f := range cg.fields[classOf(key)] {
						if old, ok := cg.old[key][f.name]; ok && x[f.name] != nil && SameValue(x[f.name], old, false) {
							stale = true
						}
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, o := range outputs {
		var v any
		if json.Unmarshal([]byte(o), &v) == nil {
			walk(v)
		}
	}
	return strings.Join(outputs, "\n"), stale && len(outputs) > 0
}

// reorderBlocks writes an answer's blocks (paragraphs, lists with their
// lead lines, tables) in reverse order; ok is false when it has one.
func reorderBlocks(answer string) (string, bool) {
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(answer), "\n") {
		if strings.TrimSpace(line) == "" {
			// A lead line keeps the block after it.
			if n := len(cur); n > 0 && leads(cur[n-1]) {
				cur = append(cur, "")
				continue
			}
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	if len(blocks) < 2 {
		return "", false
	}
	slices.Reverse(blocks)
	return strings.Join(blocks, "\n\n"), true
}

// leads reports whether a line scopes the lines after it.
func leads(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasSuffix(t, ":") || boldLine.MatchString(line) || headingLine.MatchString(line)
}

// decimalCommas writes every number with decimals or thousands separators
// as languages with a decimal comma do (1,180.9 → 1.180,9; 21.5 → 21,5);
// ok is false when the answer has none.
func decimalCommas(answer string) (string, bool) {
	var b strings.Builder
	changed := false
	for i, line := range strings.Split(answer, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		sc := &unitScan{text: line}
		last := 0
		// The longest reading at each place is the number written.
		longest := map[int]numberTok{}
		var starts []int
		for _, n := range numberTokens(line) {
			if l, ok := longest[n.start]; !ok || n.end > l.end {
				if !ok {
					starts = append(starts, n.start)
				}
				longest[n.start] = n
			}
		}
		for _, start := range starts {
			n := longest[start]
			if n.start < last || sc.inDate(n) || !strings.ContainsAny(n.text, ".,") {
				continue
			}
			swapped := strings.Map(func(r rune) rune {
				switch r {
				case '.':
					return ','
				case ',':
					return '.'
				}
				return r
			}, n.text)
			b.WriteString(line[last:n.start] + swapped)
			last, changed = n.end, true
		}
		b.WriteString(line[last:])
	}
	return b.String(), changed
}
