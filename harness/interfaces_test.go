package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
)

// TestOracleOnEveryInterface plays the oracle on every standard interface
// of every domain, one scenario each: the gold mapped onto an interface
// completes it, is scored full against the level's gold, and the records
// and run.json say which interface was played and what it showed.
func TestOracleOnEveryInterface(t *testing.T) {
	spec := loadSpec(t)
	cfg := testConfig("interfaces", "http://127.0.0.1:1", agent.Oracle)
	cfg.Granularities = nil
	seen := map[string]bool{}
	for _, d := range spec.Domains {
		cfg.Scenarios = append(cfg.Scenarios, d.Scenarios[len(d.Scenarios)-1].ID)
		dom, _ := gen.Lookup(d.Name)
		ifaces, err := serve.DomainInterfaces(dom)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ifaces {
			if !seen[i.Spec.Name] {
				seen[i.Spec.Name] = true
				cfg.Interfaces = append(cfg.Interfaces, i.Spec)
			}
		}
	}
	out := t.TempDir()
	if _, err := Run(t.Context(), cfg, spec, Options{Out: out, Lookup: gen.Lookup, Progress: os.Stderr}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	checkRecordSchema(t, filepath.Join(out, results.TrialsFile))
	if want := len(spec.Domains) * len(cfg.Interfaces); len(recs) != want {
		t.Fatalf("%d records, want %d (every interface of every domain)", len(recs), want)
	}
	man, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		m := r.Metrics
		if m.TC != 1 || m.F1 != 1 || m.ArgAcc != 1 || r.ErrorClass != "" {
			t.Errorf("%s: TC %v F1 %v ArgAcc %v %s; want the oracle scored full on every interface", r.TrialID, m.TC, m.F1, m.ArgAcc, r.ErrorClass)
		}
		// By the reference's definitions too: its set F1, its greedy
		// ArgAcc, its order and its strings in the answer (derived from
		// the facts where a scenario has none of its own).
		if p := m.Paper; p == nil || p.ToolF1 != 1 || p.ArgAcc != 1 || p.EditDistance != 0 || p.TaskCompletion != 1 || p.RedundantRate != 0 {
			t.Errorf("%s: metrics.paper %+v; want the oracle scored full by the reference's definitions", r.TrialID, p)
		}
		spec, err := surface.Parse(r.InterfaceName())
		if err != nil || spec.Level != r.Level {
			t.Errorf("%s: interface %q at level %s: %v", r.TrialID, r.InterfaceName(), r.Level, err)
		}
		if spec.IsIdentity() != (r.Interface == "") {
			t.Errorf("%s: interface key %q; want it on a transformed level only (the results contract: a level as written has none)", r.TrialID, r.Interface)
		}
		if r.TrialID != results.TrialID(r.Model, r.Scenario, r.InterfaceName(), r.Repetition) {
			t.Errorf("%s: id does not name interface %s", r.TrialID, r.InterfaceName())
		}
		info, ok := man.Interfaces[results.InterfaceKey(r.Domain, r.InterfaceName())]
		if !ok || info.Metrics.Tools == 0 || info.Metrics.SchemaTokens == 0 || info.Level != r.Level {
			t.Errorf("%s: run.json interface %+v", r.TrialID, info)
		}
		for _, c := range r.Calls {
			var args map[string]any
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				t.Fatalf("%s: %v", r.TrialID, err)
			}
			action, _ := args["action"].(string)
			_, inner := args[action]
			switch {
			case spec.Transforms.Names == "opaque" && !strings.HasPrefix(c.Tool, "tool_"):
				t.Errorf("%s: call of %q; want the opaque name the interface lists", r.TrialID, c.Tool)
			case spec.Transforms.Actions == "nested" && action != "" && len(args) > 1 && !inner:
				t.Errorf("%s: call %s; want the action's arguments inside %q", r.TrialID, c.Arguments, action)
			}
		}
	}
}
