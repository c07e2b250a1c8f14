package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/scenarios"
)

// everyKind faults a call in two of five, drawing every kind.
var everyKind = faults.Setting{Name: "every", Rate: 0.4, Kinds: faults.Kinds}

// faultsOf lists a record's faults as "<call index>:<kind>".
func faultsOf(rec results.Record) []string {
	var out []string
	for i, c := range rec.Calls {
		if c.Fault != "" {
			out = append(out, fmt.Sprintf("%d:%s", i, c.Fault))
		}
	}
	return out
}

// withoutModel is a trial id without its model: what an oracle's trial
// and a command's of the same task, interface, setting and repetition
// share.
func withoutModel(rec results.Record) string {
	return strings.TrimPrefix(rec.TrialID, rec.Model+"/")
}

// replayAsCommand runs the test agent (testdata/mcpagent) on the trials
// cfg plays, each making exactly the calls the oracle's record of the
// trial made (its retries too) and answering as it did, and returns its
// records by trial id without the model.
func replayAsCommand(t *testing.T, cfg *results.Config, oracle []results.Record, run func(*results.Config) []results.Record) map[string]results.Record {
	t.Helper()
	dir := t.TempDir()
	for _, r := range oracle {
		p := agentPlan{Calls: []agentCall{}, Answer: r.FinalAnswer}
		for _, c := range r.Calls {
			p.Calls = append(p.Calls, agentCall{c.Tool, c.Arguments})
		}
		writePlan(t, dir, r.Scenario, r.Level, p)
	}
	cmdCfg := *cfg
	cmdCfg.Models = []results.ModelEntry{agentEntry(t, "agent", dir, results.MCPConfigEnv)}
	got := map[string]results.Record{}
	for _, r := range run(&cmdCfg) {
		got[withoutModel(r)] = r
	}
	return got
}

// sameFaults checks that the command agent's record of each of the
// oracle's trials names the setting and lists the same faults, on the
// same calls, as the oracle's, and returns how many faults there were.
func sameFaults(t *testing.T, oracle []results.Record, cmd map[string]results.Record) int {
	t.Helper()
	n := 0
	for _, o := range oracle {
		id := withoutModel(o)
		c, ok := cmd[id]
		if !ok {
			t.Errorf("%s: the command agent has no record of it", id)
			continue
		}
		if o.Faults != everyKind.Name || c.Faults != everyKind.Name {
			t.Errorf("%s: setting %q (oracle), %q (command); want %q", id, o.Faults, c.Faults, everyKind.Name)
		}
		if c.Error != "" || len(c.Calls) != len(o.Calls) {
			t.Errorf("%s: the command agent made %d calls (error %q); the oracle %d", id, len(c.Calls), c.Error, len(o.Calls))
			continue
		}
		if of, cf := faultsOf(o), faultsOf(c); !slices.Equal(of, cf) {
			t.Errorf("%s: faults %v (oracle), %v (command); want the same", id, of, cf)
		}
		for _, r := range []results.Record{o, c} {
			if r.Metrics == nil || r.Metrics.FaultsInjected != len(faultsOf(r)) {
				t.Errorf("%s (%s): metrics %+v; want faults_injected %d", id, r.Model, r.Metrics, len(faultsOf(r)))
			}
		}
		n += len(faultsOf(o))
	}
	return n
}

// TestFaultsMeetCommandAgents: an agent command, served the trial's
// server over HTTP, meets the faults the in-process oracle meets in the
// same trial, call for call, on a generated domain and on a regrouped
// external server; on the regrouped server, the faults are the same at
// L4, at L1 and at a transformed interface of L2, drawn by the source
// tool a call reaches, not by the tool the call was made through.
func TestFaultsMeetCommandAgents(t *testing.T) {
	spec := loadSpec(t)
	levels := []level.Level{level.L4, level.L1}
	run := func(cfg *results.Config) []results.Record {
		recs, err := runTrials(t, cfg, spec, gen.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	t.Run("generated domain", func(t *testing.T) {
		d := spec.Domains[0]
		cfg := testConfig("faults-command", "http://127.0.0.1:1", agent.Oracle)
		cfg.Domains, cfg.Granularities, cfg.Faults = []string{d.Name}, levels, []faults.Setting{everyKind}
		for _, s := range pickScenarios(d) {
			cfg.Scenarios = append(cfg.Scenarios, s.ID)
		}
		oracle := run(cfg)
		if len(oracle) != len(cfg.Scenarios)*len(levels) {
			t.Fatalf("%d oracle records; want %d", len(oracle), len(cfg.Scenarios)*len(levels))
		}
		n := sameFaults(t, oracle, replayAsCommand(t, cfg, oracle, run))
		if n == 0 {
			t.Error("no fault injected in any trial: the test compares nothing")
		}
		t.Logf("%d trials, %d faults, each met alike by the command agent", len(oracle), n)
	})

	t.Run("regrouped server", func(t *testing.T) {
		tools, arts := memoryArtifacts(t)
		// The artifacts that expect calls, a handful: each plays at two
		// levels for two subjects.
		var played []scenarios.Artifact
		for _, a := range arts {
			if len(a.ExpectedCalls) > 0 && len(played) < 8 {
				played = append(played, a)
			}
		}
		cfg := artifactConfig(writeArtifacts(t, played, tools), "", agent.Oracle)
		// A transformed interface of L2 (its own plan file: the agent's
		// plans are named by level) is served in front of L2's server.
		transformed, err := surface.Parse("L2-nested-opaque")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Granularities, cfg.Interfaces, cfg.Faults = levels, surface.Specs{transformed}, []faults.Setting{everyKind}
		oracle := run(cfg)
		if len(oracle) != len(played)*len(cfg.Played()) {
			t.Fatalf("%d oracle records; want %d", len(oracle), len(played)*len(cfg.Played()))
		}
		// Every interface meets L4's faults: the oracle makes the same
		// calls at each, through the source's tools at L4, the one tool's
		// actions at L1 and L2's tools as transformed.
		byArtifact := map[string]map[string][]string{}
		for _, r := range oracle {
			if r.TrialID != results.FaultTrialID(r.Model, r.Scenario, r.InterfaceName(), everyKind, 1) {
				t.Errorf("trial id %s; want the setting named in it", r.TrialID)
			}
			if byArtifact[r.Scenario] == nil {
				byArtifact[r.Scenario] = map[string][]string{}
			}
			byArtifact[r.Scenario][r.InterfaceName()] = faultsOf(r)
		}
		for id, at := range byArtifact {
			for _, spec := range cfg.Played()[1:] {
				if !slices.Equal(at["L4"], at[spec.Name]) {
					t.Errorf("%s: faults %v at L4, %v at %s; want the same", id, at["L4"], at[spec.Name], spec.Name)
				}
			}
		}
		n := sameFaults(t, oracle, replayAsCommand(t, cfg, oracle, run))
		if n == 0 {
			t.Error("no fault injected in any trial: the test compares nothing")
		}
		t.Logf("%d trials, %d faults, each met alike at every interface and by the command agent", len(oracle), n)
	})
}

// TestFaultsRefusedBesideArtifactsAsPublished: a config made in code,
// which no loader checked, that asks for faults on artifacts played on
// their replay servers as published is refused when planned, rather than
// played without them.
func TestFaultsRefusedBesideArtifactsAsPublished(t *testing.T) {
	spec, lookup := tinySpec(t)
	tools, arts := memoryArtifacts(t)
	cfg := artifactConfig(writeArtifacts(t, arts[:1], tools), "", agent.Oracle)
	cfg.Faults = []faults.Setting{everyKind}
	if _, err := Plan(t.Context(), cfg, spec, lookup); err == nil || !strings.Contains(err.Error(), "faults beside artifacts played as published") {
		t.Errorf("plan: %v; want faults beside artifacts as published refused", err)
	}
}
