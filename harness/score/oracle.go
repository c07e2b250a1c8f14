package score

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The oracle answers with the scenario's facts, each bound to its subject
// as the gold's reads tell it: under a lead line per subject, the members
// of a set as a list, a count beside what it counts. The same facts in
// other document forms (a table, prose with pronouns, JSON, German with
// decimal commas) are the right rewrites every scenario's verdict must
// accept.

// OracleAnswer is what the oracle answers: the scenario's facts, a lead
// line per subject with its facts as items. Under faults that took rows
// offline (UnderFaults) it leaves out the facts about them and says, row
// by row, that what the task asked of it was not done.
func (g *Gold) OracleAnswer() string {
	if len(g.offline) == 0 {
		return g.facts.render("lead-bullets")
	}
	fg := *g.facts
	fg.facts = slices.DeleteFunc(slices.Clone(fg.facts), func(fc *factCheck) bool { return g.offlineFact(fc) != "" })
	var b strings.Builder
	if len(fg.facts) == 0 {
		b.WriteString("Every other change you asked for is made.")
	} else {
		b.WriteString(fg.render("lead-bullets"))
	}
	for _, key := range slices.Sorted(maps.Keys(g.offline)) {
		fmt.Fprintf(&b, "\n\n%s: not done, it is not answering (offline).", fg.labels.say(key))
	}
	return b.String()
}

// oracleFact is one fact as the oracle writes it.
type oracleFact struct {
	kind    subjectKind
	subject string // the subject named (an ID, a group key, a set's words)
	key     string
	what    string
	value   any
	noun    string // what a count counts
}

// oracleFacts lists the facts to write, members of a set together.
func (fg *factGold) oracleFacts() []oracleFact {
	var out []oracleFact
	for _, fc := range fg.facts {
		of := oracleFact{kind: kindOf1(fc), what: fc.fact.What, value: fc.fact.Value}
		if len(fc.subjects) > 0 {
			of.key = fc.subjects[0].key
			of.subject = fg.labels.say(of.key)
			if of.kind == aboutCount {
				of.noun = fg.plurals[fc.subjects[0].class]
			}
		}
		out = append(out, of)
	}
	return out
}

// render writes the facts in one document form (see Operators).
func (fg *factGold) render(form string) string {
	facts := fg.oracleFacts()
	if len(facts) == 0 {
		return "Done: every change you asked for is made."
	}
	var b strings.Builder
	value := func(v any) string { return oracleValue(v, form == "german") }
	switch form {
	case "table":
		b.WriteString("| Subject | Asked | Value |\n|---|---|---|\n")
		for _, f := range facts {
			switch f.kind {
			case aboutMember:
				fmt.Fprintf(&b, "| %s | %s | %s |\n", f.subject, f.what, f.subject)
			case aboutCount:
				fmt.Fprintf(&b, "| %s | %s | %s %s |\n", f.noun, f.what, value(f.value), f.noun)
			case aboutTotal:
				fmt.Fprintf(&b, "| all | %s | %s |\n", f.what, value(f.value))
			default:
				fmt.Fprintf(&b, "| %s | %s | %s |\n", f.subject, f.what, value(f.value))
			}
		}
	case "prose":
		last := ""
		for _, f := range facts {
			switch f.kind {
			case aboutMember:
				fmt.Fprintf(&b, "%s is one you asked for (%s).\n", f.subject, f.what)
			case aboutCount:
				fmt.Fprintf(&b, "There are %s %s (%s).\n", value(f.value), f.noun, f.what)
			case aboutTotal:
				fmt.Fprintf(&b, "The %s is %s.\n", f.what, value(f.value))
			default:
				if f.key == last {
					// A later fact about the same subject, by pronoun.
					fmt.Fprintf(&b, "Its %s is %s.\n", f.what, value(f.value))
				} else {
					fmt.Fprintf(&b, "For %s, the %s is %s.\n", f.subject, f.what, value(f.value))
				}
			}
			last = f.key
		}
	case "json":
		obj := map[string]any{}
		for _, f := range facts {
			switch f.kind {
			case aboutMember:
				list, _ := obj[f.what].([]any)
				obj[f.what] = append(list, f.subject)
			case aboutCount, aboutTotal:
				obj[f.what] = f.value
			default:
				m, _ := obj[f.subject].(map[string]any)
				if m == nil {
					m = map[string]any{}
				}
				m[f.what] = f.value
				obj[f.subject] = m
			}
		}
		out, _ := json.MarshalIndent(obj, "", "  ")
		b.Write(out)
	default: // lead-bullets, german
		if form == "german" {
			b.WriteString("Hier ist das Ergebnis.\n\n")
		}
		var order []string
		bySubject := map[string][]oracleFact{}
		for _, f := range facts {
			k := f.subject
			if f.kind == aboutMember || f.kind == aboutCount || f.kind == aboutTotal {
				k = ""
			}
			if _, ok := bySubject[k]; !ok {
				order = append(order, k)
			}
			bySubject[k] = append(bySubject[k], f)
		}
		for _, k := range order {
			if k != "" {
				fmt.Fprintf(&b, "**%s**:\n", k)
			}
			for _, f := range bySubject[k] {
				switch f.kind {
				case aboutMember:
					fmt.Fprintf(&b, "- %s: %s\n", f.what, f.subject)
				case aboutCount:
					fmt.Fprintf(&b, "- %s: %s %s\n", f.what, value(f.value), f.noun)
				default:
					fmt.Fprintf(&b, "- %s: %s\n", f.what, value(f.value))
				}
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// oracleValue writes a fact's value: numbers as JSON writes them, or with
// a decimal comma and thousands points.
func oracleValue(v any, comma bool) string {
	x, ok := number(v)
	if !ok {
		return readableValue(v)
	}
	s := formatNumber(x)
	if !comma {
		return s
	}
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "." + whole[i:]
	}
	if neg {
		whole = "-" + whole
	}
	if frac != "" {
		return whole + "," + frac
	}
	return whole
}
