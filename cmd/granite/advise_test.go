package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/advise"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
	"github.com/mcpgranite/granite/internal/npmtest"
	"github.com/mcpgranite/granite/internal/surface"
)

// adviceJSON is the part of advise.json the tests read.
type adviceJSON struct {
	Candidates []advise.Candidate `json:"candidates"`
	Models     []struct {
		Model string `json:"model"`
		Pick  struct {
			Interface string  `json:"interface"`
			TC        float64 `json:"tc"`
		} `json:"pick"`
		Publish    advise.Publish `json:"publish"`
		Stopped    string         `json:"stopped"`
		Trials     int            `json:"trials"`
		GridTrials int            `json:"grid_trials"`
		Rounds     []struct {
			Round     int      `json:"round"`
			Survivors []string `json:"survivors"`
			Dropped   []string `json:"dropped"`
		} `json:"rounds"`
	} `json:"models"`
}

// runAdviseCLI runs granite advise and reads what it wrote.
func runAdviseCLI(t *testing.T, out string, args ...string) adviceJSON {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"advise", "--out", out}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("granite advise %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, advise.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var adv adviceJSON
	if err := json.Unmarshal(data, &adv); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, advise.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range adv.Models {
		if !strings.Contains(string(page), "## "+m.Model+": publish "+m.Pick.Interface) {
			t.Errorf("%s: the page does not say to publish %s", m.Model, m.Pick.Interface)
		}
		if m.Publish.Interface.Name != m.Pick.Interface {
			t.Errorf("%s: publishes %+v for pick %s", m.Model, m.Publish.Interface, m.Pick.Interface)
		}
		if m.Trials > m.GridTrials || m.Trials == 0 {
			t.Errorf("%s: %d trials of a %d-trial grid", m.Model, m.Trials, m.GridTrials)
		}
		// A candidate dropped after a round plays no later round.
		droppedAt := map[string]int{}
		for _, r := range m.Rounds {
			for _, d := range r.Dropped {
				droppedAt[d] = r.Round
			}
		}
		n := 0
		for _, r := range recs {
			if r.Model != m.Model {
				continue
			}
			n++
			if at, ok := droppedAt[r.InterfaceName()]; ok && r.Repetition > at {
				t.Errorf("%s: %s played round %d after its drop in round %d", m.Model, r.InterfaceName(), r.Repetition, at)
			}
		}
		if n != m.Trials {
			t.Errorf("%s: %d records, advice says %d trials", m.Model, n, m.Trials)
		}
	}
	return adv
}

// TestAdviseServerTools races the levels of a server's tools (the pinned
// memory server's tools/list) with the oracle and the simulated subject:
// the oracle ties everywhere, so nothing is dropped (the race ends once
// they are all within the indifference zone) and the published L4 is its
// pick; both get a groups file to publish.
func TestAdviseServerTools(t *testing.T) {
	out := t.TempDir()
	adv := runAdviseCLI(t, out, "--tools", "../../harness/testdata/server-memory.tools.json", "--models", "builtin:oracle,builtin:sim",
		"--candidates", "levels", "--max-rounds", "6")
	if len(adv.Models) != 2 || len(adv.Candidates) != 4 {
		t.Fatalf("advice: %+v", adv)
	}
	oracle := adv.Models[0]
	if oracle.Pick.Interface != "L4" || oracle.Pick.TC != 1 {
		t.Errorf("oracle: pick %+v; want L4 as published, TC 1", oracle.Pick)
	}
	for _, r := range oracle.Rounds {
		if len(r.Survivors) != 4 {
			t.Errorf("oracle: round %d left %v; want every candidate (they all complete every task)", r.Round, r.Survivors)
		}
	}
	for _, m := range adv.Models {
		if !strings.Contains(m.Publish.Groups, "L3:") {
			t.Errorf("%s: groups to publish: %q", m.Model, m.Publish.Groups)
		}
		if _, err := os.Stat(filepath.Join(out, advise.FileName(m.Model)+".groups.yaml")); err != nil {
			t.Error(err)
		}
	}
	// The race resumes to the same advice from its journal.
	again := runAdviseCLI(t, out, "--tools", "../../harness/testdata/server-memory.tools.json", "--models", "builtin:oracle,builtin:sim",
		"--candidates", "levels", "--max-rounds", "6", "--resume")
	for i := range adv.Models {
		if again.Models[i].Pick != adv.Models[i].Pick || again.Models[i].Trials != adv.Models[i].Trials {
			t.Errorf("%s: resumed to %+v, was %+v", adv.Models[i].Model, again.Models[i], adv.Models[i])
		}
	}
}

// TestAdviseDomainOpenAI races interfaces of a domain for a model behind
// the OpenAI-compatible double (one that never calls a tool, and so
// completes only the refusals) beside the simulated subject.
func TestAdviseDomainOpenAI(t *testing.T) {
	f := openaitest.NewServer(t, []string{"silent-model"}, func(openaitest.Request, int) openaitest.Step {
		return openaitest.Step{Content: "No tool is needed."}
	})
	dir := t.TempDir()
	config := filepath.Join(dir, "models.yaml")
	must(t, os.WriteFile(config, []byte("name: models\nmodels:\n  - {name: silent-model, backend: openai, base_url: "+f.URL+", params_b: 1}\n  - builtin:sim@5\n"), 0o644))
	domain := gen.Domains[0].Name
	adv := runAdviseCLI(t, filepath.Join(dir, "out"), "--domain", domain, "--config", config, "--candidates", "L4,L3,L3-nodesc,L1-opaque", "--max-rounds", "6")
	if len(adv.Models) != 2 || adv.Models[0].Model != "silent-model" {
		t.Fatalf("advice: %+v", adv.Models)
	}
	for _, m := range adv.Models {
		if !slices.ContainsFunc(adv.Candidates, func(c advise.Candidate) bool { return c.Name == m.Pick.Interface }) {
			t.Errorf("%s: pick %q is not a candidate", m.Model, m.Pick.Interface)
		}
		if _, err := surface.Parse(m.Publish.Interface.Name); err != nil {
			t.Errorf("%s: publishes %+v: %v", m.Model, m.Publish.Interface, err)
		}
	}
}

// TestAdviseLiveReferenceServer races interfaces of the pinned memory and
// filesystem servers, each started afresh for every trial in a folder of
// its own, with the oracle and the simulated subject.
func TestAdviseLiveReferenceServer(t *testing.T) {
	dir := npmtest.Dir(t, "advise on a live reference server")
	server := func(name string) string {
		return npmtest.Node(dir) + " " + filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	}
	for _, c := range []struct{ name, cmd string }{
		{"memory", "env MEMORY_FILE_PATH=memory.jsonl " + server("memory")},
		{"filesystem", server("filesystem") + " ."},
	} {
		t.Run(c.name, func(t *testing.T) {
			adv := runAdviseCLI(t, t.TempDir(), "--mcp-cmd", c.cmd, "--models", "builtin:oracle,builtin:sim",
				"--candidates", "L4,L2,L1-nested", "--procedure", "sign", "--min-rounds", "1", "--max-rounds", "2", "--tasks", "6")
			if len(adv.Models) != 2 {
				t.Fatalf("advice: %+v", adv)
			}
			if p := adv.Models[0].Pick; p.TC < 0.9 {
				t.Errorf("oracle on the live server: pick %+v; want it to complete the artifacts", p)
			}
		})
	}
}

// TestAdviseBudget: a race over its trial budget ends after the round
// that crossed it, and says so.
func TestAdviseBudget(t *testing.T) {
	adv := runAdviseCLI(t, t.TempDir(), "--tools", "../../harness/testdata/server-memory.tools.json", "--models", "builtin:sim",
		"--candidates", "levels", "--max-rounds", "5", "--max-trials", "10")
	m := adv.Models[0]
	if len(m.Rounds) != 1 || !strings.Contains(m.Stopped, "trial budget (10)") || m.Trials >= m.GridTrials {
		t.Errorf("%d rounds, %d of %d trials, stopped: %q; want one round and the budget named", len(m.Rounds), m.Trials, m.GridTrials, m.Stopped)
	}
}

// TestAdviseUnderFaults: granite advise --faults plays every trial of the
// race under the setting, as a run's config would: trials and records
// name it, the page and advise.json say it, the oracle (which retries
// transient errors and rate limits) still completes every task, and each
// candidate meets the same faults on the same task and round. A setting
// the flag cannot read is a usage error naming the flag.
func TestAdviseUnderFaults(t *testing.T) {
	out := t.TempDir()
	adv := runAdviseCLI(t, out, "--tools", "../../harness/testdata/server-memory.tools.json", "--models", "builtin:oracle",
		"--candidates", "L4,L1", "--procedure", "sign", "--max-rounds", "2", "--faults", "retry:0.5:transient,rate_limit")
	if len(adv.Models) != 1 || adv.Models[0].Pick.TC != 1 {
		t.Fatalf("advice: %+v; want the oracle at TC 1 under retryable faults", adv)
	}
	data, err := os.ReadFile(filepath.Join(out, advise.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var withFaults struct {
		Faults *struct {
			Name string  `json:"name"`
			Rate float64 `json:"rate"`
		} `json:"faults"`
	}
	if err := json.Unmarshal(data, &withFaults); err != nil || withFaults.Faults == nil || withFaults.Faults.Name != "retry" || withFaults.Faults.Rate != 0.5 {
		t.Errorf("advise.json faults: %+v, %v; want the setting retry at 0.5", withFaults.Faults, err)
	}
	page, err := os.ReadFile(filepath.Join(out, advise.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "under the fault setting `retry` (a call faults with probability 0.5, as transient, rate_limit)") {
		t.Errorf("the page does not name the fault setting:\n%s", page)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	// Each task and round meets the same faults at L4 and L1.
	met := map[string]map[string][]string{}
	injected := 0
	for _, r := range recs {
		if r.Faults != "retry" || !strings.Contains(r.TrialID, "/retry/") {
			t.Errorf("%s: setting %q; want retry, named in the id", r.TrialID, r.Faults)
		}
		key := fmt.Sprintf("%s/r%d", r.Scenario, r.Repetition)
		if met[key] == nil {
			met[key] = map[string][]string{}
		}
		for i, c := range r.Calls {
			if c.Fault != "" {
				met[key][r.InterfaceName()] = append(met[key][r.InterfaceName()], fmt.Sprintf("%d:%s", i, c.Fault))
			}
		}
		injected += r.Metrics.FaultsInjected
	}
	for key, by := range met {
		if !slices.Equal(by["L4"], by["L1"]) {
			t.Errorf("%s: faults %v at L4, %v at L1; want the same", key, by["L4"], by["L1"])
		}
	}
	if injected == 0 {
		t.Error("no fault injected in the race")
	}
	t.Logf("%d trials, %d faults injected", len(recs), injected)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"advise", "--out", t.TempDir(), "--tools", "../../harness/testdata/server-memory.tools.json", "--models", "builtin:oracle", "--faults", "retry:2"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), `--faults: fault setting "retry:2": found rate "2"; expected a number from 0 to 1`) {
		t.Errorf("--faults retry:2: exit %d, %s; want a usage error naming the rate", code, stderr.String())
	}
}
