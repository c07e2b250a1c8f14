package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// The test agent (testdata/mcpagent), built on first use and removed
// by TestMain.
var (
	agentOnce sync.Once
	agentDir  string
	agentBin  string
	agentErr  error
)

// buildAgent builds the test agent once.
func buildAgent(t testing.TB) string {
	t.Helper()
	agentOnce.Do(func() {
		if agentDir, agentErr = os.MkdirTemp("", "granite-mcpagent-"); agentErr != nil {
			return
		}
		agentBin = filepath.Join(agentDir, "mcpagent")
		if out, err := exec.Command("go", "build", "-o", agentBin, "./testdata/mcpagent").CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("build testdata/mcpagent: %v\n%s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}

// removeAgent removes the built test agent.
func removeAgent() {
	if agentDir != "" {
		os.RemoveAll(agentDir)
	}
}

// agentPlan is what testdata/mcpagent reads.
type agentPlan struct {
	Mode      string      `json:"mode,omitempty"`
	Calls     []agentCall `json:"calls"`
	Answer    string      `json:"answer,omitempty"`
	SpamBytes int         `json:"spam_bytes,omitempty"`
	JSON      bool        `json:"json,omitempty"`
	Marker    string      `json:"marker,omitempty"`
	Signal    string      `json:"signal,omitempty"`
}

type agentCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// repoSpec is the repository's specs, read once for the plans.
var repoSpec = sync.OnceValue(func() *speclang.Spec {
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		panic(err)
	}
	return spec
})

// goldPlan is the scenario's gold at a level as the agent's plan, with
// the oracle's answer.
func goldPlan(s *speclang.Scenario, level level.Level) agentPlan {
	p := agentPlan{Calls: []agentCall{}, Answer: oracleAnswer(repoSpec(), gen.Lookup, s)}
	for _, g := range s.Gold[level] {
		p.Calls = append(p.Calls, agentCall{g.Tool, g.JSON()})
	}
	return p
}

// writePlan writes the plan of a scenario at a level where the agent's
// --plan argument finds it.
func writePlan(t *testing.T, dir, scenario string, level level.Level, p agentPlan) {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, scenario+"-"+string(level)+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// agentEntry is a command entry running the test agent with the plans in
// planDir, reading the configuration of a format.
func agentEntry(t testing.TB, name, planDir, format string) results.ModelEntry {
	cmd := []string{buildAgent(t), "--format", format, "--prompt", "{{.Prompt}}", "--plan", planDir + "/{{.Scenario}}-{{.Level}}.json"}
	if format != results.MCPConfigEnv {
		cmd = append(cmd, "--config", "{{.MCPConfig}}")
	}
	return results.ModelEntry{Name: name, Backend: agent.BackendCommand, Command: cmd, MCPConfig: format}
}

// pickScenarios takes the first scenario of each difficulty of a domain.
func pickScenarios(d *speclang.Domain) []*speclang.Scenario {
	var out []*speclang.Scenario
	seen := map[string]bool{}
	for _, s := range d.Scenarios {
		if !seen[s.Difficulty] {
			seen[s.Difficulty] = true
			out = append(out, s)
		}
	}
	return out
}

// byTrial indexes records by model, scenario and level.
func byTrial(recs []results.Record) map[string]results.Record {
	out := map[string]results.Record{}
	for _, r := range recs {
		out[r.Model+"/"+r.Scenario+"/"+string(r.Level)] = r
	}
	return out
}

// sameVerdict compares what the verdict and the calls of two records say,
// apart from timing and who played.
var sameVerdict = []cmp.Option{
	cmpopts.IgnoreFields(results.Call{}, "LatencyMS", "Session", "AtMS"),
	cmpopts.IgnoreFields(results.Metrics{}, "WallS", "EnergyJ"),
	cmpopts.EquateEmpty(),
}

// TestCommandAgentSolves runs the test agent, an MCP client over HTTP,
// through every configuration format on the gold calls of a scenario of
// each difficulty at every level: each trial completes the task, with the
// verdict, calls and answer the built-in oracle gets from the same calls.
func TestCommandAgentSolves(t *testing.T) {
	spec := loadSpec(t)
	d := spec.Domains[0]
	picked := pickScenarios(d)
	cfg := testConfig("agents", "http://127.0.0.1:1", agent.Oracle)
	cfg.Domains = []string{d.Name}
	for _, s := range picked {
		cfg.Scenarios = append(cfg.Scenarios, s.ID)
	}
	formats := []string{results.MCPConfigEnv, results.MCPConfigClaude, results.MCPConfigCodex, results.MCPConfigGemini}
	for _, f := range formats {
		dir := t.TempDir()
		e := agentEntry(t, "agent-"+f, dir, f)
		if f == results.MCPConfigClaude {
			// Claude Code's -p --output-format json prints the answer as
			// the result field of a JSON object.
			e.Answer = &results.AnswerSpec{JSON: "result"}
		}
		for _, s := range picked {
			for _, lv := range cfg.Granularities {
				p := goldPlan(s, lv)
				p.JSON = f == results.MCPConfigClaude
				writePlan(t, dir, s.ID, lv, p)
			}
		}
		cfg.Models = append(cfg.Models, e)
	}
	recs, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := len(cfg.Models) * len(picked) * len(cfg.Granularities)
	if len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	all := byTrial(recs)
	for _, f := range formats {
		for _, s := range picked {
			for _, lv := range cfg.Granularities {
				got, oracle := all["agent-"+f+"/"+s.ID+"/"+string(lv)], all[agent.Oracle+"/"+s.ID+"/"+string(lv)]
				name := f + "/" + s.ID + "/" + string(lv)
				if got.Metrics == nil || got.Metrics.TC != 1 || got.Metrics.TCStrict != 1 {
					t.Errorf("%s: metrics %+v, error %q, command %+v; want TC 1", name, got.Metrics, got.Error, got.Command)
					continue
				}
				if diff := cmp.Diff(oracle.Metrics, got.Metrics, sameVerdict...); diff != "" {
					t.Errorf("%s: metrics differ from the oracle's on the same calls (-oracle +agent):\n%s", name, diff)
				}
				if diff := cmp.Diff(oracle.Calls, got.Calls, sameVerdict...); diff != "" {
					t.Errorf("%s: calls differ from the oracle's (-oracle +agent):\n%s", name, diff)
				}
				if got.FinalAnswer != oracle.FinalAnswer {
					t.Errorf("%s: answer %q, want the oracle's %q", name, got.FinalAnswer, oracle.FinalAnswer)
				}
				c := got.Command
				if c != nil && (c.Connection == nil || c.Connection.Initialize != 1 || c.Connection.ToolsList != 1 || c.Connection.BadToken != 0) {
					t.Errorf("%s: connection %+v; want one session that listed the tools, no bad token", name, c.Connection)
				}
				wantSessions := min(1, len(got.Calls))
				if got.Agent != agent.BackendCommand || c == nil || c.ExitCode != 0 || c.MCPConfig != f || c.Sessions != wantSessions || c.OverheadMS <= 0 {
					t.Errorf("%s: agent %q, command %+v; want a command that exited 0 with %s and %d session(s)", name, got.Agent, c, f, wantSessions)
				}
			}
		}
	}
}

// TestCommandAgentMisbehaves runs the test agent through what agents do
// wrong; every trial is still recorded and scored.
func TestCommandAgentMisbehaves(t *testing.T) {
	spec := loadSpec(t)
	// A scenario whose L4 gold takes two calls or more, so that two
	// sessions can share them, and whose fresh store fails the task.
	var d *speclang.Domain
	var s *speclang.Scenario
	for _, dom := range spec.Domains {
		for _, sc := range dom.Scenarios {
			if s == nil && len(sc.Gold[level.L4]) >= 2 && len(sc.State) > 0 {
				d, s = dom, sc
			}
		}
	}
	if s == nil {
		t.Fatal("no scenario with two L4 gold calls and state conditions")
	}
	gold := goldPlan(s, level.L4)
	hangMarker := fmt.Sprintf("hang-%d-%d", os.Getpid(), time.Now().UnixNano())
	cases := []struct {
		name    string
		plan    agentPlan
		timeout float64
		check   func(t *testing.T, r results.Record)
	}{
		{"no-tools", agentPlan{Calls: []agentCall{}, Answer: "Done."}, 0, func(t *testing.T, r results.Record) {
			if !r.Metrics.ZeroToolCall || r.Metrics.TC != 0 || r.StopReason != results.StopAnswer || r.FinalAnswer != "Done." || r.Command.ExitCode != 0 {
				t.Errorf("metrics %+v, stop %s, answer %q, command %+v; want an answer without calls, TC 0", r.Metrics, r.StopReason, r.FinalAnswer, r.Command)
			}
			// It listed the tools and chose none: a choice, not a failure.
			// (mcp-go's client ends its session with a DELETE without
			// the token.)
			if c := r.Command.Connection; r.ErrorClass != "" || c == nil || *c != (results.Connection{Initialize: 1, ToolsList: 1, NoToken: 1}) {
				t.Errorf("class %q, connection %+v; want no class, one session that listed the tools", r.ErrorClass, c)
			}
		}},
		{"unknown-tool", agentPlan{Calls: []agentCall{{"no_such_tool", json.RawMessage(`{"x":1}`)}}}, 0, func(t *testing.T, r results.Record) {
			if len(r.Calls) != 1 || r.Calls[0].ErrorClass != results.ErrUnknown || !r.Calls[0].IsError || !strings.Contains(r.Calls[0].Result, "not found") {
				t.Fatalf("calls %+v; want one unknown_tool call the server refused", r.Calls)
			}
			if r.ErrorClass != results.ErrUnknown || string(r.Calls[0].Arguments) != `{"x":1}` {
				t.Errorf("error class %q, arguments %s; want unknown_tool and the arguments as sent", r.ErrorClass, r.Calls[0].Arguments)
			}
		}},
		{"crash", agentPlan{Mode: "crash", Calls: gold.Calls}, 0, func(t *testing.T, r results.Record) {
			if r.Command.ExitCode != 3 || r.StopReason != results.StopError || r.ErrorClass != results.ErrAgent || r.Metrics.TC != 0 {
				t.Errorf("command %+v, stop %s, class %s, metrics %+v; want exit 3, an agent_error, TC 0", r.Command, r.StopReason, r.ErrorClass, r.Metrics)
			}
			if len(r.Calls) != 1 || !strings.Contains(r.Command.StderrTail, "crashing on purpose") {
				t.Errorf("calls %d, stderr %q; want the one call before the crash and its stderr", len(r.Calls), r.Command.StderrTail)
			}
		}},
		{"hang", agentPlan{Mode: "hang", Marker: hangMarker}, 1, func(t *testing.T, r results.Record) {
			if !r.Command.Killed || r.StopReason != results.StopTimeout || r.ErrorClass != results.ErrTimeout || !r.Metrics.Timeout {
				t.Errorf("command %+v, stop %s, class %s; want killed at the timeout", r.Command, r.StopReason, r.ErrorClass)
			}
			if r.Command.Signal != "killed" {
				t.Errorf("signal %q, want killed", r.Command.Signal)
			}
			if !strings.Contains(r.Command.StderrTail, "child pid") {
				t.Fatalf("stderr %q names no child", r.Command.StderrTail)
			}
			if aliveMarked(t, hangMarker) {
				t.Errorf("the agent's child outlived the trial")
			}
			if r.Metrics.WallS > 1+agent.WaitDelay.Seconds()+5 {
				t.Errorf("the trial took %.1f s, far past its 1 s timeout", r.Metrics.WallS)
			}
		}},
		{"spam", agentPlan{Mode: "spam", SpamBytes: 3 * agent.MaxStdout}, 0, func(t *testing.T, r results.Record) {
			if r.Command.StdoutBytes < 3*agent.MaxStdout || !r.Command.StdoutTruncated || len(r.FinalAnswer) > agent.MaxAnswer || len(r.FinalAnswer) == 0 {
				t.Errorf("stdout %d bytes, truncated %v, answer %d bytes; want %d bytes counted, the answer bounded at %d",
					r.Command.StdoutBytes, r.Command.StdoutTruncated, len(r.FinalAnswer), 3*agent.MaxStdout, agent.MaxAnswer)
			}
		}},
		{"two-sessions", agentPlan{Mode: "two-sessions", Calls: gold.Calls}, 0, func(t *testing.T, r results.Record) {
			var sessions []int
			for _, c := range r.Calls {
				sessions = append(sessions, c.Session)
			}
			want := make([]int, len(gold.Calls))
			for i := range want {
				want[i] = i%2 + 1
			}
			if r.Command.Sessions != 2 || !slices.Equal(sessions, want) || r.Metrics.TC != 1 {
				t.Errorf("sessions %d, by call %v, TC %v (%v); want 2 sessions %v and the task done", r.Command.Sessions, sessions, r.Metrics.TC, r.Metrics.Why, want)
			}
		}},
		{"no-token", agentPlan{Mode: "no-token", Calls: gold.Calls}, 0, func(t *testing.T, r results.Record) {
			if len(r.Calls) != 0 || r.Command.ExitCode != 2 || !strings.Contains(r.Command.StderrTail, "authorization required") || r.Metrics.TC != 0 {
				t.Errorf("calls %d, command %+v, TC %v; want the connection refused for want of the token and nothing called", len(r.Calls), r.Command, r.Metrics.TC)
			}
			wantUnconnected(t, r, results.ErrBadToken, "0 request(s) came with a wrong bearer token and 1 without one", results.Connection{NoToken: 1})
		}},
		{"wrong-token", agentPlan{Mode: "wrong-token", Calls: gold.Calls}, 0, func(t *testing.T, r results.Record) {
			wantUnconnected(t, r, results.ErrBadToken, "1 request(s) came with a wrong bearer token and 0 without one; its client must send the Authorization header the configuration granite wrote holds (or Bearer $GRANITE_MCP_TOKEN) (it exited with status 2)", results.Connection{BadToken: 1})
		}},
		{"never-connects", agentPlan{Mode: "env"}, 0, func(t *testing.T, r results.Record) {
			wantUnconnected(t, r, results.ErrNotConnected, "no request reached it", results.Connection{})
			if r.Command.ExitCode != 0 || r.FinalAnswer == "" {
				t.Errorf("command %+v, answer %q; want the answer it printed kept", r.Command, r.FinalAnswer)
			}
		}},
		{"init-only", agentPlan{Mode: "init-only"}, 0, func(t *testing.T, r results.Record) {
			wantUnconnected(t, r, results.ErrNotConnected, "opened 1 session(s) but never listed the tools", results.Connection{Initialize: 1, NoToken: 1})
		}},
	}
	cfg := testConfig("misbehave", "http://127.0.0.1:1")
	cfg.Models = nil
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{level.L4}
	for _, c := range cases {
		dir := t.TempDir()
		writePlan(t, dir, s.ID, level.L4, c.plan)
		e := agentEntry(t, c.name, dir, results.MCPConfigEnv)
		e.TimeoutSeconds = c.timeout
		cfg.Models = append(cfg.Models, e)
	}
	// The cases run at once: nothing one does may touch another's trial.
	recs, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	all := byTrial(recs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := all[c.name+"/"+s.ID+"/L4"]
			if !ok || r.Metrics == nil || r.Command == nil {
				t.Fatalf("no scored record: %+v", r)
			}
			c.check(t, r)
		})
	}
}

// wantUnconnected checks the record of an agent that never listed its
// tools: stopped on an error of the class, whose message says why, with
// the connection counted as it came and nothing called.
func wantUnconnected(t *testing.T, r results.Record, class results.ErrorClass, why string, conn results.Connection) {
	t.Helper()
	if r.ErrorClass != class || r.StopReason != results.StopError || !strings.Contains(r.Error, why) {
		t.Errorf("class %q, stop %s, error %q; want %s saying %q", r.ErrorClass, r.StopReason, r.Error, class, why)
	}
	if c := r.Command.Connection; c == nil || *c != conn || len(r.Calls) != 0 || r.Metrics.TC != 0 {
		t.Errorf("connection %+v, %d calls, TC %v; want %+v, no call, TC 0", c, len(r.Calls), r.Metrics.TC, conn)
	}
}

// TestRecordingScoresLikeCommand plays the same calls once as a command
// agent and once as an interactive client of a recorded server: granite
// score's record of the recording is the command backend's record.
func TestRecordingScoresLikeCommand(t *testing.T) {
	spec := loadSpec(t)
	d := spec.Domains[0]
	s := pickScenarios(d)[len(pickScenarios(d))-1]
	lv := level.L2
	dir := t.TempDir()
	writePlan(t, dir, s.ID, lv, goldPlan(s, lv))
	cfg := testConfig("recorded", "http://127.0.0.1:1")
	cfg.Models = []results.ModelEntry{agentEntry(t, "agent", dir, results.MCPConfigEnv)}
	cfg.Domains, cfg.Scenarios, cfg.Granularities = []string{d.Name}, []string{s.ID}, []level.Level{lv}
	recs, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	viaCommand := recs[0]

	r, err := NewRecorder(spec, gen.Lookup, s.ID, lv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Prompt() != s.Prompt {
		t.Fatalf("prompt %q, want the scenario's", r.Prompt())
	}
	h, err := r.Handler(serve.Options{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	cmd := exec.Command(buildAgent(t), "--prompt", s.Prompt, "--plan", filepath.Join(dir, s.ID+"-"+string(lv)+".json"))
	cmd.Env = append(os.Environ(), "GRANITE_MCP_URL=http://"+ln.Addr().String()+"/mcp", "GRANITE_MCP_TOKEN=secret")
	out, err := cmd.Output()
	hs.Close()
	h.Close(context.Background())
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
	file := filepath.Join(t.TempDir(), "session.json")
	if err := r.Recording().WriteFile(file); err != nil {
		t.Fatal(err)
	}
	rc, err := recorded.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	scored, err := ScoreRecording(context.Background(), spec, gen.Lookup, rc, "agent", string(out))
	if err != nil {
		t.Fatal(err)
	}
	// Compared as the journal keeps both: JSON numbers read back as float64.
	viaRecording := roundTrip(t, scored)
	if viaRecording.Agent != results.AgentRecorded || viaRecording.TrialID != viaCommand.TrialID || viaRecording.Metrics.TC != 1 {
		t.Errorf("agent %q, trial %q, TC %v; want recorded, %q, 1", viaRecording.Agent, viaRecording.TrialID, viaRecording.Metrics.TC, viaCommand.TrialID)
	}
	ignore := cmpopts.IgnoreFields(results.Record{}, "Index", "Experiment", "Agent", "StartedAt", "EndedAt", "Command", "Energy")
	if diff := cmp.Diff(&viaCommand, viaRecording, append(sameVerdict, ignore)...); diff != "" {
		t.Errorf("the recording scores unlike the command backend (-command +recording):\n%s", diff)
	}
}

// TestCommandConfigErrors pins the positioned errors of bad command
// entries.
func TestCommandConfigErrors(t *testing.T) {
	spec := loadSpec(t)
	for _, c := range []struct{ name, models, want string }{
		{"no command", "  - {name: a, backend: command}", "models[0]: found backend command without command"},
		{"unknown field", "  - name: a\n    backend: command\n    command: [agent, '{{.Nope}}']", `c.yaml:5:22: $.models[0].command[1]: found argument "{{.Nope}}"`},
		{"unparsed", "  - name: a\n    backend: command\n    command: [agent, '{{.Prompt']", `unclosed action`},
		{"config with env", "  - name: a\n    backend: command\n    command: [agent, '{{.MCPConfig}}']", "{{.MCPConfig}} is empty with mcp_config env"},
		{"env value", "  - name: a\n    backend: command\n    command: [agent]\n    env: {X: '{{.Dir'}", `found env X="{{.Dir"`},
		{"model field", "  - name: a\n    backend: command\n    command: [agent]\n    base_url: http://x/v1", "found base_url on an agent command"},
		{"command on a model", "  - name: qwen\n    command: [agent]", "found command on a model; expected it only with backend: command"},
		{"bad format", "  - name: a\n    backend: command\n    command: [agent]\n    mcp_config: cursor", "mcp_config"},
		{"bad answer", "  - name: a\n    backend: command\n    command: [agent]\n    answer: stderr", "answer"},
		{"limits on a model", "  - name: qwen\n    limits: {tasks: 64}", "found limits on a model; expected it only with backend: command"},
		{"tiny memory", "  - name: a\n    backend: command\n    command: [agent]\n    limits: {memory_mib: 0}", "memory_mib"},
		{"unknown limit", "  - name: a\n    backend: command\n    command: [agent]\n    limits: {cpus: 2}", "cpus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(file, []byte("name: c\nmodels:\n"+c.models+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(file, spec)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file+":") {
				t.Errorf("error %v; want one at its position saying %q", err, c.want)
			}
		})
	}
	file := filepath.Join(t.TempDir(), "ok.yaml")
	ok := "name: ok\nmodels:\n  - name: a\n    backend: command\n    command: [agent, --mcp-config, '{{.MCPConfig}}', -p, '{{.Prompt}}']\n    mcp_config: claude\n    answer: {json: result}\n    timeout_seconds: 600\n    env: {CODEX_HOME: '{{.Dir}}'}\n    empty_home: true\n    limits: {memory_mib: 512, tasks: 64}\n    parallel: 2\n"
	if err := os.WriteFile(file, []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(file, spec)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Models[0]
	if e.Backend != agent.BackendCommand || e.Answer == nil || e.Answer.JSON != "result" || e.Env["CODEX_HOME"] != "{{.Dir}}" || !e.HomeIsEmpty() || e.Workers() != 2 ||
		e.Limits == nil || e.Limits.MemoryMiB != 512 || e.Limits.Tasks != 64 || e.Limits.DiskMiB != 0 {
		t.Errorf("entry %+v; want what the file says", e)
	}
}

// roundTrip is a record as read back from its JSON line.
func roundTrip(t *testing.T, r *results.Record) *results.Record {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out results.Record
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
