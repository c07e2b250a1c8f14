package score

import (
	"slices"

	"github.com/mcpgranite/granite/harness/paper"
)

// paperGold is the gold as the reference implementation's metrics read
// it (paper.GoldOf): the calls as written, and the strings its completion
// asks of the answer, the scenario's contains or, without them, those the
// facts give (see contains).
func (g *Gold) paperGold(facts *factGold) *paper.Gold {
	contains := g.Scenario.Contains
	if len(contains) == 0 {
		contains = facts.contains()
	}
	return paper.GoldOf(g.Calls, contains)
}

// contains derives the reference's expected strings from the answer
// facts: each fact's value as the oracle writes it (21.5, on, 22:10),
// each once. It leaves out what a right answer may say otherwise, since
// all of the strings must occur: a fact with alternatives ("Hallway
// light" or DV011), and a member of an asked set, which a right answer
// names by ID or by name. So it asks less than the facts do, and nothing a
// right answer may leave unsaid.
func (fg *factGold) contains() []string {
	var out []string
	for _, fc := range fg.facts {
		if len(fc.fact.Alternatives) > 0 || kindOf1(fc) == aboutMember {
			continue
		}
		if v := oracleValue(fc.fact.Value, false); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
