package score

import (
	"slices"

	"github.com/mcpgranite/granite/harness/paper"
)

// paperGold is the gold as the reference implementation's metrics read it
// (package paper): the calls with the arguments the gold writes, optional
// ones included (the reference has no optional arguments: a call that
// leaves one out loses its share, and a gold call reduced to no arguments
// would fail every call that sends one), their first values; and the
// strings its completion asks of the answer, the scenario's contains or,
// without them, those the facts give (see contains).
func (g *Gold) paperGold(facts *factGold) *paper.Gold {
	pg := &paper.Gold{Contains: g.Scenario.Contains}
	if len(pg.Contains) == 0 {
		pg.Contains = facts.contains()
	}
	for _, c := range g.Calls {
		pg.Calls = append(pg.Calls, paper.GoldCall{Tool: c.Tool, Arguments: c.Args})
	}
	return pg
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
