package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/scenarios"
)

// Task is what a trial plays, apart from who plays it (the agent) and
// how the trial is run (the runner), as inspect_ai keeps dataset, solver
// and scorer apart: the prompts, the server and its tools, the calls that
// answer it, and how a finished trial scores. A benchmark scenario at a
// level (scenarioTask) and a synthesized artifact on a replay server
// (artifactTask) are the two kinds.
type Task interface {
	// identify fills the record's fields that say what was played:
	// domain, level, scenario, difficulty, and an artifact's file.
	identify(rec *results.Record)
	// prompts are the user turns, asked one after the other's answer.
	prompts() []string
	// turnCalls lists, per user turn, the indexes of the n gold calls
	// that answer it.
	turnCalls(n int) [][]int
	// open starts the task's server on a fresh state. valid tells, per
	// listed tool, whether arguments satisfy its schema, to tell a schema
	// violation from an error of the tool itself.
	open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error)
	// system is what the agent's system prompt says of the system.
	system() system
	// toolsKey names the task's tools, which every task with the same key
	// lists identically; schemas are their input schemas, by name.
	toolsKey() string
	schemas() map[string][]byte
	// goldCalls are the calls the oracle makes.
	goldCalls() []results.MessageCall
	// score scores a finished record, given the session it was played on.
	score(rec *results.Record, sess *serve.Session) (*results.Metrics, error)
}

// scenarioTask is a benchmark scenario played at an interface of its
// domain (a level as written is its identity interface) on a fresh store
// behind the domain's generated server.
type scenarioTask struct {
	// domain is the spec of the task's domain, dom its generated runtime.
	domain   *speclang.Domain
	dom      *mcpdomain.Domain
	iface    *surface.Interface
	scenario *speclang.Scenario
	// calls are the gold at the interface's level and composition (see
	// composedGold).
	calls []*speclang.Call
	// golds is shared by the tasks of one plan: a scenario's right final
	// stores are computed once, whatever the level, repetition or model.
	golds *goldCache
}

// level is the level the interface shows, whose gold the task scores.
func (t *scenarioTask) level() level.Level { return t.iface.Spec.Level }

func (t *scenarioTask) identify(rec *results.Record) {
	rec.Domain, rec.Level, rec.Scenario, rec.Difficulty = t.domain.Name, t.level(), t.scenario.ID, t.scenario.Difficulty
	identify(rec, t.iface)
}

func (t *scenarioTask) prompts() []string { return []string{t.scenario.Prompt} }

// turnCalls puts every call in the scenario's one turn.
func (t *scenarioTask) turnCalls(n int) [][]int { return allInFirst(1, n) }

func (t *scenarioTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	s, err := serve.Open(ctx, t.dom, t.iface)
	return s, t.validators(), err
}

// validators check arguments against each of the interface's tools, as
// the level tool's handler would before running it.
func (t *scenarioTask) validators() map[string]func(json.RawMessage) bool {
	byName := map[string]*mcpdomain.Tool{}
	for _, tool := range t.dom.Tools[t.level()] {
		byName[tool.Name] = tool
	}
	return validators(t.iface, func(name string, args json.RawMessage) bool {
		_, _, err := byName[name].Prepare(args)
		return err == nil
	})
}

func (t *scenarioTask) system() system { return system{t.dom.Title, t.dom.Description} }

func (t *scenarioTask) toolsKey() string { return results.InterfaceKey(t.dom.Name, t.iface.Spec.Name) }

func (t *scenarioTask) schemas() map[string][]byte { return interfaceSchemas(t.iface) }

// goldCalls are the scenario's gold at the task's level, encoded the way
// the interface encodes calls.
func (t *scenarioTask) goldCalls() []results.MessageCall {
	return goldCalls(t.iface, t.calls)
}

// newScenarioTask is scenario s of domain d played at iface, with the gold
// its composition derives.
func newScenarioTask(d *speclang.Domain, dom *mcpdomain.Domain, iface *surface.Interface, s *speclang.Scenario, golds *goldCache) (*scenarioTask, error) {
	calls, err := gold.Composed(d, dom, iface.Spec, s)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", s.ID, iface.Spec.Name, err)
	}
	return &scenarioTask{domain: d, dom: dom, iface: iface, scenario: s, calls: calls, golds: golds}, nil
}

// score judges the record and the session's final store against the
// scenario's gold (see score.Score).
func (t *scenarioTask) score(rec *results.Record, sess *serve.Session) (*results.Metrics, error) {
	g, err := t.golds.gold(context.Background(), t)
	if err != nil {
		return nil, fmt.Errorf("gold: %w", err)
	}
	lr := levelRecord(t.iface, rec)
	if rec.Faults != "" {
		g = g.UnderFaults(lr.Calls, t.dom, t.level())
	}
	m, err := score.Score(lr, g, sess.Store.Snapshot())
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	if rec.Faults != "" {
		m.FaultsInjected, m.FaultsRecovered = score.Faults(lr.Calls, t.dom, t.level(), sess.Store)
	}
	return m, nil
}

// goldCache keeps each scenario's right final stores, their changes to
// the seed and the subjects of its answer facts, which do not depend on
// the level, and what a scenario is scored against at each level.
type goldCache struct {
	mu     sync.Mutex
	rights map[string]*score.ScenarioGold
	golds  map[string]*score.Gold
}

// gold returns what a scenario task is scored against.
func (c *goldCache) gold(ctx context.Context, t *scenarioTask) (*score.Gold, error) {
	scenario := t.domain.Name + "/" + t.scenario.ID
	key := scenario + "/" + string(t.level()) + "/" + t.iface.Spec.Get("composition")
	c.mu.Lock()
	g, ok := c.golds[key]
	rs := c.rights[scenario]
	c.mu.Unlock()
	if ok {
		return g, nil
	}
	if rs == nil {
		// Computed outside the lock, so that workers do not queue behind
		// each other's gold runs; two may compute the same stores, which
		// is harmless.
		r, err := gold.RightsOf(ctx, t.dom, t.scenario)
		if err != nil {
			return nil, err
		}
		rs = score.NewScenarioGold(t.domain, t.scenario, t.dom.NewStore().Snapshot(), r)
	}
	g = rs.Gold(t.level(), t.calls, t.dom)
	c.mu.Lock()
	if c.golds == nil {
		c.golds, c.rights = map[string]*score.Gold{}, map[string]*score.ScenarioGold{}
	}
	c.rights[scenario], c.golds[key] = rs, g
	c.mu.Unlock()
	return g, nil
}

// artifactTask is a synthesized artifact of set played on a replay
// server.
type artifactTask struct {
	art *scenarios.Artifact
	set *ArtifactSet
	// level is the artifact's when it came from a generated domain, else
	// empty.
	level level.Level
}

func (t *artifactTask) identify(rec *results.Record) {
	rec.Domain, rec.Level, rec.Scenario, rec.Difficulty, rec.Artifacts = t.art.Source, t.level, t.art.ID, t.art.Tier, t.set.Path
}

func (t *artifactTask) prompts() []string {
	out := make([]string, len(t.art.Turns))
	for i, turn := range t.art.Turns {
		out[i] = turn.Prompt
	}
	return out
}

// turnCalls is the artifact's own split when its turns list calls, else
// every call in the first turn.
func (t *artifactTask) turnCalls(n int) [][]int {
	out := make([][]int, len(t.art.Turns))
	listed := false
	for i, turn := range t.art.Turns {
		out[i] = turn.Calls
		listed = listed || len(turn.Calls) > 0
	}
	if listed {
		return out
	}
	return allInFirst(len(t.art.Turns), n)
}

func (t *artifactTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	ts := t.set.sources[t.set.sourceOf(t.art)]
	valid := map[string]func(json.RawMessage) bool{}
	for _, tool := range ts.byName {
		valid[tool.Name] = tool.Valid
	}
	s, err := openReplay(ctx, ts, t.art)
	return s, valid, err
}

func (t *artifactTask) system() system { return t.set.sources[t.set.sourceOf(t.art)].about }

func (t *artifactTask) toolsKey() string { return t.art.Source }

func (t *artifactTask) schemas() map[string][]byte {
	out := map[string][]byte{}
	for _, tool := range t.set.Tools(t.art) {
		out[tool.Name] = tool.InputSchema
	}
	return out
}

// goldCalls are the artifact's expected calls.
func (t *artifactTask) goldCalls() []results.MessageCall {
	var out []results.MessageCall
	for _, c := range t.art.ExpectedCalls {
		out = append(out, results.MessageCall{Name: c.Tool, Arguments: c.Arguments})
	}
	return out
}

// score judges the record by the artifact's assertions (see
// ArtifactSet.Score) and keeps their verdicts in it.
func (t *artifactTask) score(rec *results.Record, _ *serve.Session) (*results.Metrics, error) {
	m, verdicts := t.set.Score(rec, t.art)
	rec.Assertions = verdicts
	return m, nil
}

// goldByTurn are the calls the oracle makes, by the user turn they
// answer.
func goldByTurn(t Task) [][]results.MessageCall {
	gold := t.goldCalls()
	turns := t.turnCalls(len(gold))
	out := make([][]results.MessageCall, len(turns))
	for i, calls := range turns {
		for _, k := range calls {
			out[i] = append(out[i], gold[k])
		}
	}
	return out
}

// keepsResults reports whether a task's scoring reads successful results:
// an artifact's output_schema assertions do.
func keepsResults(t Task) bool {
	switch t.(type) {
	case *artifactTask, *groupedTask, *referenceTask:
		return true
	}
	return false
}

// allInFirst puts calls 0..n-1 in the first of turns user turns.
func allInFirst(turns, n int) [][]int {
	out := make([][]int, turns)
	for k := range n {
		out[0] = append(out[0], k)
	}
	return out
}
