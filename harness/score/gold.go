package score

import (
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Gold is what a trial is scored against: the scenario's gold calls at the
// trial's level, and every final store a right solution may leave (the
// gold's, and those of its alternative values and omitted optional
// arguments, which verify proves equally right).
type Gold struct {
	Scenario *speclang.Scenario
	Calls    []*speclang.Call
	Finals   [][]byte
	// exact names arguments compared exactly (enums, IDs, action); other
	// strings are trimmed and case-folded.
	exact map[string]bool
	// actions names the tools that take an action argument; the action of
	// a call of any other tool is "", whatever the call sent.
	actions map[string]bool
	// changes is what the right final stores change, and facts what the
	// answer facts are about, for TC.
	changes *changeGold
	facts   *factGold
	// offline holds the keys of the rows a trial's faults took offline
	// (UnderFaults).
	offline map[string]bool
}

// Rights are what right solutions of a scenario leave and read: every
// final store one may leave, and the outputs of the L4 gold's calls, which
// tell what the answer facts are about. Running the gold to get them is
// gold execution's (gold.RightsOf); scoring only reads them.
type Rights struct {
	Finals [][]byte
	Reads  []GoldRead
}

// GoldRead is one gold call's output, decoded (a string when the output is
// not JSON).
type GoldRead struct {
	Tool   string
	Output any
}

// NewGold prepares the scoring of a scenario of domain d at a level on the
// domain's generated code; rights are what right solutions leave and read
// (nil: none).
func NewGold(d *speclang.Domain, s *speclang.Scenario, level level.Level, dom *mcpdomain.Domain, rights *Rights) *Gold {
	return NewScenarioGold(d, s, dom.NewStore().Snapshot(), rights).Gold(level, s.Gold[level], dom)
}

// ScenarioGold is the part of a scenario's gold that holds at every level:
// its right final stores, what they change relative to the seed, and the
// subjects of its answer facts. Reading the stores is the costly part, so
// a runner prepares it once per scenario and asks it for each level's Gold.
type ScenarioGold struct {
	scenario *speclang.Scenario
	finals   [][]byte
	changes  *changeGold
	facts    *factGold
}

// NewScenarioGold reads a scenario of domain d against the seed store and
// what right solutions leave and read (nil: none).
func NewScenarioGold(d *speclang.Domain, s *speclang.Scenario, seed []byte, rights *Rights) *ScenarioGold {
	if rights == nil {
		rights = &Rights{}
	}
	changes := newChangeGold(d, s, seed, rights.Finals)
	return &ScenarioGold{scenario: s, finals: rights.Finals, changes: changes, facts: newFactGold(d, s, changes, rights.Reads)}
}

// FactProblems says, for each answer fact whose subject the gold's reads
// cannot tell, why; verify reports them as failures of the scenario.
func (sg *ScenarioGold) FactProblems() []string { return sg.facts.errs }

// Gold is what the scenario's trials at a level on the domain's generated
// code are scored against, calls the level's gold: the scenario's as
// written, or as an interface's composition derives it (the same final
// stores, other calls).
func (sg *ScenarioGold) Gold(level level.Level, calls []*speclang.Call, dom *mcpdomain.Domain) *Gold {
	g := &Gold{Scenario: sg.scenario, Calls: calls, Finals: sg.finals, exact: map[string]bool{"action": true}, actions: map[string]bool{}, changes: sg.changes, facts: sg.facts}
	for _, op := range dom.Operations {
		for _, a := range op.Args {
			if len(a.Enum) > 0 || a.Entity != "" {
				g.exact[a.Name] = true
			}
		}
	}
	for _, t := range dom.Tools[level] {
		g.actions[t.Name] = t.HasAction()
	}
	return g
}

// NewCallGold is the gold of a task without a store or answer facts (a
// synthesized artifact): only its expected calls, scored by ScoreCalls.
// exact names the arguments compared exactly, actions the tools that take
// an action argument; both are kept, not copied.
func NewCallGold(calls []*speclang.Call, exact, actions map[string]bool) *Gold {
	return &Gold{Calls: calls, exact: exact, actions: actions}
}
