package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/sandbox"
	"github.com/mcpgranite/granite/internal/speclang"
)

// needNamespaces skips a test of the namespaced mode where the kernel
// refuses unprivileged namespaces.
func needNamespaces(t *testing.T) {
	t.Helper()
	if ok, why := sandbox.Available(); !ok {
		t.Skipf("namespaces are unavailable here (%s): agent commands run with isolation none", why)
	}
}

// runIsolated runs cfg with agent commands contained as iso says and
// returns the records and run.json.
func runIsolated(t *testing.T, cfg *results.Config, spec *speclang.Spec, iso string) ([]results.Record, *results.Manifest, string) {
	t.Helper()
	out := t.TempDir()
	var progress bytes.Buffer
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: gen.Lookup, Isolation: iso, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	man, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	return recs, man, progress.String()
}

// twoScenarios finds two scenarios of one domain whose fresh stores fail
// their tasks and whose L4 gold the oracle solves.
func twoScenarios(t *testing.T, spec *speclang.Spec) (*speclang.Domain, *speclang.Scenario, *speclang.Scenario) {
	t.Helper()
	for _, d := range spec.Domains {
		var picked []*speclang.Scenario
		for _, s := range d.Scenarios {
			if len(s.State) > 0 && len(s.Gold[level.L4]) > 0 {
				picked = append(picked, s)
			}
		}
		if len(picked) >= 2 {
			return d, picked[0], picked[1]
		}
	}
	t.Fatal("no domain with two scenarios that change the store")
	return nil, nil, nil
}

// TestTrialCannotReachAnother runs two trials at once: a victim that does
// nothing, and a thief that looks for the victim's server (its token in
// /proc/<pid>/environ, its client configuration beside its own folder)
// and does the victim's task there. In namespaces the thief finds
// nothing and the victim's trial fails as it should; without them, the
// same attack does the victim's work, which is why run.json says so.
func TestTrialCannotReachAnother(t *testing.T) {
	spec := loadSpec(t)
	d, victim, thief := twoScenarios(t, spec)
	modes := []string{agent.IsolationNamespaces, agent.IsolationNone}
	for _, iso := range modes {
		t.Run(iso, func(t *testing.T) {
			if iso == agent.IsolationNamespaces {
				needNamespaces(t)
			}
			dir := t.TempDir()
			signal := filepath.Join(dir, "thief-done")
			writePlan(t, dir, victim.ID, level.L4, agentPlan{Mode: "victim", Signal: signal, Calls: []agentCall{}})
			// The thief's calls are the victim's gold.
			steal := goldPlan(victim, level.L4)
			steal.Mode, steal.Signal = "steal", signal
			writePlan(t, dir, thief.ID, level.L4, steal)
			e := agentEntry(t, "pair", dir, results.MCPConfigClaude)
			e.Parallel = 2
			cfg := testConfig("isolation", "http://127.0.0.1:1")
			cfg.Models = []results.ModelEntry{e}
			cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{victim.ID, thief.ID}, []level.Level{level.L4}
			recs, man, progress := runIsolated(t, cfg, spec, iso)
			all := byTrial(recs)
			v, th := all["pair/"+victim.ID+"/L4"], all["pair/"+thief.ID+"/L4"]
			if v.Metrics == nil || th.Metrics == nil || v.Command == nil || th.Command == nil {
				t.Fatalf("records %+v, %+v; want both scored", v, th)
			}
			if man.Isolation != iso || v.Command.Isolation != iso || th.Command.Isolation != iso {
				t.Errorf("run.json isolation %q, records %q and %q; want %s", man.Isolation, v.Command.Isolation, th.Command.Isolation, iso)
			}
			if iso == agent.IsolationNone {
				if !strings.Contains(progress, "isolation none") {
					t.Errorf("progress %q; want a warning that agents run with isolation none", progress)
				}
				if v.Metrics.TC == 1 {
					t.Logf("without namespaces the thief did the victim's task, as the warning says")
				}
				return
			}
			if th.FinalAnswer != "nothing to steal" || v.Metrics.TC != 0 || len(v.Calls) != 0 {
				t.Errorf("thief answered %q (stderr %q); victim's TC %v with %d calls; want nothing stolen and the victim's task undone",
					th.FinalAnswer, th.Command.StderrTail, v.Metrics.TC, len(v.Calls))
			}
		})
	}
}

// aliveMarked reports whether a process whose command line holds marker
// still runs, after the moment the kernel takes to kill and reap.
func aliveMarked(t *testing.T, marker string) bool {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		found := false
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range procs {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.Contains(b, []byte(marker)) {
				continue
			}
			if st, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "stat")); !bytes.Contains(st, []byte(") Z ")) {
				found = true
			}
		}
		if !found {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentCommandContained: a helper an agent starts in a session of its
// own dies with the trial, and the agent's environment holds granite's
// allow-list and the trial's variables, never granite's keys.
func TestAgentCommandContained(t *testing.T) {
	needNamespaces(t)
	spec := loadSpec(t)
	d, s, _ := twoScenarios(t, spec)
	t.Setenv("OPENAI_API_KEY", "sk-granite-test")
	t.Setenv("GRANITE_TOKEN", "view-token")
	t.Setenv("MY_ENDPOINT_KEY", "endpoint-key")
	t.Setenv("AGENT_OWN_KEY", "the agent's")
	marker := fmt.Sprintf("escape-%d-%d", os.Getpid(), time.Now().UnixNano())
	cases := []struct {
		name string
		plan agentPlan
	}{
		{"escape", agentPlan{Mode: "escape", Marker: marker}},
		{"env", agentPlan{Mode: "env"}},
	}
	cfg := testConfig("contained", "http://127.0.0.1:1")
	cfg.Models = nil
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{level.L4}
	for _, c := range cases {
		dir := t.TempDir()
		writePlan(t, dir, s.ID, level.L4, c.plan)
		e := agentEntry(t, c.name, dir, results.MCPConfigEnv)
		e.Env = map[string]string{"AGENT_SETTING": "x"}
		e.PassEnv = []string{"AGENT_OWN_KEY"}
		cfg.Models = append(cfg.Models, e)
	}
	recs, man, _ := runIsolated(t, cfg, spec, agent.IsolationAuto)
	if man.Isolation != agent.IsolationNamespaces {
		t.Errorf("run.json isolation %q; want namespaces", man.Isolation)
	}
	all := byTrial(recs)
	esc := all["escape/"+s.ID+"/L4"]
	// It answers without connecting, which its record says.
	if esc.FinalAnswer == "" || esc.ErrorClass != results.ErrNotConnected || esc.Command == nil || esc.Command.ExitCode != 0 {
		t.Errorf("escape: answer %q, class %s, command %+v; want an answer of an agent that never connected", esc.FinalAnswer, esc.ErrorClass, esc.Command)
	}
	if aliveMarked(t, marker) {
		t.Errorf("the helper the agent started with setsid outlived the trial")
	}
	names := strings.Fields(all["env/"+s.ID+"/L4"].FinalAnswer)
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	for _, want := range []string{"PATH", "GRANITE_MCP_URL", "GRANITE_MCP_TOKEN", "AGENT_SETTING", "AGENT_OWN_KEY"} {
		if !has[want] {
			t.Errorf("the agent's environment %v lacks %s", names, want)
		}
	}
	for _, secret := range []string{"OPENAI_API_KEY", "GRANITE_TOKEN", "MY_ENDPOINT_KEY", sandbox.InitEnv} {
		if has[secret] {
			t.Errorf("the agent's environment holds granite's %s", secret)
		}
	}
}

// agentRun is the granite run TestKilledRunLeavesNoAgent kills: one agent
// command trial (the agent, the plans and the scenario from the
// environment) that hangs.
func agentRun(out string) int {
	spec := loadSpec(&testing.T{})
	e := results.ModelEntry{Name: "hang", Backend: agent.BackendCommand, MCPConfig: results.MCPConfigEnv,
		Command: []string{os.Getenv("GRANITE_TEST_AGENT"), "--format", "env", "--prompt", "{{.Prompt}}", "--plan", os.Getenv("GRANITE_TEST_AGENT_PLAN")}}
	cfg := testConfig("killed", "http://127.0.0.1:1")
	cfg.Models = []results.ModelEntry{e}
	cfg.Domains, cfg.Scenarios = []string{os.Getenv("GRANITE_TEST_AGENT_DOMAIN")}, []string{os.Getenv("GRANITE_TEST_AGENT_SCENARIO")}
	cfg.Granularities = []level.Level{level.L4}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: gen.Lookup, Isolation: agent.IsolationNamespaces}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKilledRunLeavesNoAgent: kill -9 of granite run ends the agent it
// was running and everything the agent started.
func TestKilledRunLeavesNoAgent(t *testing.T) {
	needNamespaces(t)
	spec := loadSpec(t)
	d, s, _ := twoScenarios(t, spec)
	marker := fmt.Sprintf("killed-run-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	data := fmt.Sprintf(`{"mode": "hang", "marker": %q}`, marker)
	if err := os.WriteFile(plan, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GRANITE_TEST_AGENT_RUN="+t.TempDir(), "GRANITE_TEST_AGENT="+buildAgent(t),
		"GRANITE_TEST_AGENT_PLAN="+plan, "GRANITE_TEST_AGENT_DOMAIN="+d.Name, "GRANITE_TEST_AGENT_SCENARIO="+s.ID)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := false
	for range 500 {
		if started = markedRunning(marker); started {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !started {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the agent's child never started; granite run said:\n%s", stderr.String())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if aliveMarked(t, marker) {
		t.Errorf("the agent's child outlived granite run's kill -9")
	}
	if agentAlive(buildAgent(t)) {
		t.Errorf("the agent outlived granite run's kill -9")
	}
}

// markedRunning reports whether a process whose command line holds marker
// runs now.
func markedRunning(marker string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

// agentAlive reports whether a hanging test agent (not its child) still
// runs, after the moment the kernel takes.
func agentAlive(bin string) bool {
	for range 100 {
		found := false
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range procs {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.HasPrefix(b, []byte(bin+"\x00")) || bytes.Contains(b, []byte("--child")) {
				continue
			}
			if st, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "stat")); !bytes.Contains(st, []byte(") Z ")) {
				found = true
			}
		}
		if !found {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestCallCapStopsAnAgentCommand: an agent command that calls on past
// max_calls gets errors for the calls past it, none of which reaches the
// store, and its trial stops with call_limit (the cap itself, and that
// requests without the token do not spend it: serve's TestCallCap).
func TestCallCapStopsAnAgentCommand(t *testing.T) {
	spec := loadSpec(t)
	d, s, _ := twoScenarios(t, spec)
	gold := goldPlan(s, level.L4)
	var calls []agentCall
	for range 10 {
		calls = append(calls, gold.Calls[0])
	}
	dir := t.TempDir()
	writePlan(t, dir, s.ID, level.L4, agentPlan{Calls: calls})
	cfg := testConfig("capped", "http://127.0.0.1:1")
	cfg.Models = []results.ModelEntry{agentEntry(t, "caller", dir, results.MCPConfigEnv)}
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{level.L4}
	cfg.MaxCalls = 3
	recs, _, _ := runIsolated(t, cfg, spec, agent.IsolationAuto)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.StopReason != results.StopCallLimit || len(r.Calls) != 3 || !strings.Contains(r.Error, "max_calls") {
		t.Errorf("stop %q, %d calls, error %q; want call_limit after 3 calls, saying how to raise max_calls", r.StopReason, len(r.Calls), r.Error)
	}
}

// TestAgentCannotForgeRecords attacks the run's results the way the red
// team did: a do-nothing agent appends a record that makes itself pass
// to the run's own trials.jsonl. In namespaces the results folder is not
// even in its view, and the journal holds what granite wrote only.
func TestAgentCannotForgeRecords(t *testing.T) {
	needNamespaces(t)
	spec := loadSpec(t)
	d, s, _ := twoScenarios(t, spec)
	out := t.TempDir()
	journal := filepath.Join(out, results.TrialsFile)
	forge := `ls -A "$OUT" | wc -l; ` +
		`echo '{"trial_id":"forger/x","metrics":{"tc":1}}' >> "$OUT/` + results.TrialsFile + `" 2>/dev/null && echo forged; ` +
		`echo junk > "$OUT/run.json" 2>/dev/null && echo overwrote; true`
	e := results.ModelEntry{Name: "forger", Backend: agent.BackendCommand, MCPConfig: results.MCPConfigEnv,
		Command: []string{"sh", "-c", forge}, Env: map[string]string{"OUT": out}}
	cfg := testConfig("forge", "http://127.0.0.1:1")
	cfg.Models = []results.ModelEntry{e}
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{level.L4}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: gen.Lookup, Isolation: agent.IsolationNamespaces}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(journal)
	if err != nil {
		t.Fatalf("the journal no longer reads: %v", err)
	}
	if len(recs) != 1 || recs[0].Model != "forger" || recs[0].Metrics == nil || recs[0].Metrics.TC != 0 {
		t.Fatalf("journal holds %d records (%+v); want the one granite wrote, scored TC 0", len(recs), recs)
	}
	if got := strings.TrimSpace(recs[0].FinalAnswer); got != "0" {
		t.Errorf("the agent saw and wrote %q; want an empty results folder and no write", got)
	}
	if _, err := results.ReadManifest(out); err != nil {
		t.Errorf("run.json after the agent: %v", err)
	}
}

// TestAgentOverItsLimitIsRecorded: a fork bomb of an agent is ended at
// its entry's limit and its record says which limit, and by how much.
func TestAgentOverItsLimitIsRecorded(t *testing.T) {
	needNamespaces(t)
	spec := loadSpec(t)
	d, s, _ := twoScenarios(t, spec)
	e := results.ModelEntry{Name: "bomb", Backend: agent.BackendCommand, MCPConfig: results.MCPConfigEnv,
		Command: []string{"sh", "-c", "while :; do sleep 30 & done"}, Limits: &results.CommandLimits{Tasks: 32}}
	cfg := testConfig("bomb", "http://127.0.0.1:1")
	cfg.Models = []results.ModelEntry{e}
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{level.L4}
	recs, _, _ := runIsolated(t, cfg, spec, agent.IsolationNamespaces)
	if len(recs) != 1 || recs[0].Command == nil {
		t.Fatalf("records %+v; want one with its command", recs)
	}
	r := recs[0]
	if !strings.HasPrefix(r.Command.OverLimit, "tasks: ") || !strings.Contains(r.Command.OverLimit, "limit of 32") ||
		r.StopReason != results.StopError || r.ErrorClass != results.ErrAgent || !strings.Contains(r.Error, "went over a limit") {
		t.Errorf("record: stop %s, class %s, error %q, over_limit %q; want the tasks limit named", r.StopReason, r.ErrorClass, r.Error, r.Command.OverLimit)
	}
}
