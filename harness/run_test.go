package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

func loadSpec(t testing.TB) *speclang.Spec { return spectest.All(t) }

// oracleAnswer is the built-in oracle's answer to a scenario of spec: its
// facts, each bound to its subject (score.Gold.OracleAnswer). A scripted
// subject that plays the gold answers with it, as a careful agent writes
// what it found; "" when the scenario's gold cannot run.
func oracleAnswer(spec *speclang.Spec, lookup gold.Lookup, s *speclang.Scenario) string {
	name, _, _ := strings.Cut(s.ID, "-")
	d, dom := spec.Domain(name), (*mcpdomain.Domain)(nil)
	if d != nil {
		dom, _ = lookup(d.Name)
	}
	if dom == nil {
		return ""
	}
	rights, err := gold.RightsOf(context.Background(), dom, s)
	if err != nil {
		return ""
	}
	return score.NewScenarioGold(d, s, dom.NewStore().Snapshot(), rights).Gold(level.L4, s.Gold[level.L4], dom).OracleAnswer()
}

// jsonString writes a value as JSON (as fmt prints it when it is none).
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// tinySpec is the golden tiny domain with its scenarios, and a lookup that
// finds its generated package: a fixture no benchmark change can move.
func tinySpec(t testing.TB) (*speclang.Spec, gold.Lookup) {
	t.Helper()
	spec := spectest.Tiny(t)
	return spec, func(name string) (*mcpdomain.Domain, bool) {
		if name == tiny.Domain.Name {
			return tiny.Domain, true
		}
		return nil, false
	}
}

// testConfig is a config with the documented defaults and a fake host.
func testConfig(name, host string, models ...string) *results.Config {
	c := &results.Config{Name: name, Models: results.Entries(models...), Ollama: results.OllamaConfig{Host: host}}
	Defaults(c)
	return c
}

func runTrials(t *testing.T, cfg *results.Config, spec *speclang.Spec, lookup gold.Lookup) ([]results.Record, error) {
	t.Helper()
	out := t.TempDir()
	_, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup})
	recs, _, rerr := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if rerr != nil && err == nil {
		t.Fatal(rerr)
	}
	checkRecordSchema(t, filepath.Join(out, results.TrialsFile))
	if man, merr := results.ReadManifest(out); err == nil && merr == nil {
		for _, m := range cfg.ModelNames() {
			e, _ := cfg.Entry(m)
			if info := man.Models[m]; e.Backend == agent.BackendOpenAI && (info.Parameters != e.ParamsB*1e9 || info.Quantization != e.Quantization) {
				t.Errorf("run.json: model %s: %+v, want what its entry says", m, info)
			} else if !agent.IsBuiltin(m) && e.Backend != agent.BackendOpenAI && e.Backend != agent.BackendCommand && (info.Parameters != 3212749888 || info.Quantization != "Q4_K_M") {
				t.Errorf("run.json: model %s: %+v, want what /api/show said", m, info)
			}
		}
	}
	return recs, err
}

// workerOf readies one worker of a config's model through its backend,
// as a run does (env.Config is the config), recording nothing of it.
func workerOf(tb testing.TB, env *agent.Env, model string) agent.Agent {
	tb.Helper()
	if env.Checked == nil {
		env.Checked = func(string, results.ModelInfo, results.WarmUp) error { return nil }
	}
	e, _ := env.Config.Entry(model)
	workers, err := agent.For(e).Workers(context.Background(), env, e, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return workers[0].Agent
}

// checkRecordSchema validates every line of a journal against the
// published contract, specs/trial.schema.json.
func checkRecordSchema(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile("../specs/trial.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemacheck.Compile("granite:trial.schema.json", string(data))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for i, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if line == "" {
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Fatalf("line %d does not follow trial.schema.json: %v\n%s", i+1, err, line)
		}
	}
}

// goldModel scripts a model that calls the gold of the trial's scenario at
// the level its tools show, one call per reply, and then answers with the
// tool results: the oracle, but through Ollama's wire format.
func goldModel(spec *speclang.Spec, lookup gold.Lookup) func(ollamatest.Request, int) ollamatest.Step {
	return viaOllama(goldPlay(spec, lookup))
}

// TestOllamaGoldModelScoresFull runs a scripted model that follows the gold
// through Ollama's wire format, streamed and not, over every domain, level
// and scenario: every trial must score TC = 1, with the conversation, the
// counts and the options recorded.
func TestOllamaGoldModelScoresFull(t *testing.T) {
	spec := loadSpec(t)
	for _, stream := range []bool{true, false} {
		f := ollamatest.NewServer(t, []string{"fake:gold"}, goldModel(spec, gen.Lookup))
		cfg := testConfig("gold", f.URL, "fake:gold")
		cfg.Stream = &stream
		if !stream {
			cfg.Granularities = []level.Level{level.L2} // the other mode once over
		}
		recs, err := runTrials(t, cfg, spec, gen.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, d := range spec.Domains {
			want += len(d.Scenarios) * len(cfg.Granularities)
		}
		if len(recs) != want {
			t.Fatalf("stream=%v: %d records, want %d", stream, len(recs), want)
		}
		for _, r := range recs {
			m := r.Metrics
			if m.TC != 1 || m.F1 != 1 || m.ActionF1 != 1 || m.ArgAcc != 1 || r.ErrorClass != "" || r.StopReason != results.StopAnswer {
				t.Fatalf("stream=%v %s: metrics %+v, error %q %s, stop %s", stream, r.TrialID, m, r.ErrorClass, r.Error, r.StopReason)
			}
			// Each request's prompt holds at least the system prompt (the
			// double counts about four bytes a token).
			if r.Agent != agent.BackendOllama || r.DoneReason != "stop" || r.PromptTokens < r.Turns*len(r.Messages[0].Content)/4 || r.CompletionTokens != 15*r.Turns ||
				r.Durations.EvalNS != 100000000*int64(r.Turns) || r.Options["num_ctx"] != float64(8192) && r.Options["num_ctx"] != 8192 {
				t.Fatalf("%s: record %+v", r.TrialID, r)
			}
			if r.Messages[0].Role != "system" || r.Messages[1].Role != "user" || len(r.Calls) != len(r.Messages)/2-1 {
				t.Fatalf("%s: messages %+v", r.TrialID, r.Messages)
			}
		}
		reqs := f.Requests()
		if len(reqs[0].Messages) != 0 {
			t.Fatalf("first request is not a warm-up load: %+v", reqs[0])
		}
		if tr := reqs[1].Truncate; tr == nil || *tr {
			t.Fatalf("a trial's request says truncate %v; want false, so that Ollama refuses a prompt past num_ctx instead of cutting it", tr)
		}
		for i, r := range reqs {
			if len(r.Messages) == 0 && i > 0 {
				t.Errorf("request %d: a second load request", i)
			}
			if jsonString(r.Options) != jsonString(reqs[0].Options) {
				t.Errorf("request %d: options %v differ from %v: Ollama would reload the model", i, r.Options, reqs[0].Options)
			}
		}
	}
}

// TestOllamaFaults scripts each way a model or Ollama misbehaves and checks
// where it lands in the record. The trials run the tiny domain's scenario
// that switches a lamp on.
func TestOllamaFaults(t *testing.T) {
	spec, lookup := tinySpec(t)
	set := `{"lamp_id":"LP02","on":true,"level":40}`
	answer := ollamatest.Step{Content: "Done: LP02 is on at 40 percent."}
	cases := []struct {
		name    string
		script  func(n *atomic.Int32, req ollamatest.Request) ollamatest.Step
		timeout float64
		turns   int
		check   func(t *testing.T, r results.Record)
	}{
		{"hallucinated tool name", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "switch_on_everything", Args: `{}`}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			c := r.Calls[0]
			if c.ErrorClass != results.ErrUnknown || !c.IsError || !strings.Contains(c.Result, `unknown tool "switch_on_everything"; the tools are: add_timer,`) || r.ErrorClass != results.ErrUnknown || r.StopReason != results.StopAnswer {
				t.Errorf("%+v", r)
			}
		}},
		{"arguments violating the schema", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: `{"lamp_id":"LP02","level":400}`}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			c := r.Calls[0]
			if c.ErrorClass != results.ErrSchema || c.Result != `argument "level": 400 is above the maximum 100` || r.ErrorClass != results.ErrSchema || r.Metrics.TC != 0 || r.Metrics.ArgAcc != 1.0/3 { // lamp_id right, on missing, level wrong
				t.Errorf("%+v", r)
			}
		}},
		{"a call the operation refuses", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "get_lamp", Args: `{"lamp_id":"LP99"}`}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			if c := r.Calls[0]; c.ErrorClass != results.ErrTool || !strings.Contains(c.Result, `lamp "LP99" does not exist`) || r.ErrorClass != results.ErrTool {
				t.Errorf("%+v", r)
			}
		}},
		{"arguments that are not an object", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: `"lamp_id=LP02"`}}}
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != results.ErrMalformed || r.StopReason != results.StopError || len(r.Calls) != 0 || r.Metrics.TC != 0 {
				t.Errorf("%+v", r)
			}
		}},
		{"a tool call written as text", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return ollamatest.Step{Content: `{"name": "set_lamp", "arguments": ` + set + `}`}
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != results.ErrMalformed || !r.Metrics.ZeroToolCall || r.Metrics.TC != 0 {
				t.Errorf("%+v", r)
			}
		}},
		{"no tool calls", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != "" || !r.Metrics.ZeroToolCall || r.Metrics.TC != 0 || r.Metrics.F1 != 0 || r.StopReason != results.StopAnswer {
				t.Errorf("%+v", r)
			}
		}},
		{"a reply slower than the timeout", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return ollamatest.Step{Delay: 1500 * time.Millisecond, Content: "late"}
		}, 0.3, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != results.ErrTimeout || r.StopReason != results.StopTimeout || !r.Metrics.Timeout || r.Metrics.WallS > 1.2 {
				t.Errorf("%+v", r)
			}
		}},
		{"500s, then success", func(n *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if n.Add(1) <= 2 {
				return ollamatest.Step{Status: 500}
			}
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: set}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != "" || r.Metrics.TC != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"an error line mid-stream, then success", func(n *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if n.Add(1) == 1 {
				return ollamatest.Step{Content: "I will", ErrLine: "model runner has unexpectedly stopped"}
			}
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: set}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != "" || r.Metrics.TC != 1 || r.Messages[2].Content != "" {
				t.Errorf("%+v", r)
			}
		}},
		{"a dropped connection, then success", func(n *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			if n.Add(1) == 1 {
				return ollamatest.Step{Hangup: true}
			}
			if _, k := req.Progress(); k == 0 {
				return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: set}}}
			}
			return answer
		}, 0, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != "" || r.Metrics.TC != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"a model that never stops calling", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: "get_lamp", Args: `{"lamp_id":"LP02"}`}}}
		}, 0, 3, func(t *testing.T, r results.Record) {
			if r.StopReason != results.StopMaxTurns || r.Turns != 4 || len(r.Calls) != 3 || r.Metrics.TC != 0 {
				t.Errorf("%+v", r)
			}
		}},
		{"a 5xx that never ends", func(_ *atomic.Int32, req ollamatest.Request) ollamatest.Step {
			return ollamatest.Step{Status: 503}
		}, 1, 0, func(t *testing.T, r results.Record) {
			if r.ErrorClass != results.ErrTimeout && r.ErrorClass != results.ErrTransport || r.StopReason == results.StopAnswer {
				t.Errorf("%+v", r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			f := ollamatest.NewServer(t, []string{"fake:1"}, func(req ollamatest.Request, _ int) ollamatest.Step { return c.script(&n, req) })
			cfg := testConfig("faults", f.URL, "fake:1")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []level.Level{level.L4}
			if c.timeout > 0 {
				cfg.AgentTimeoutSeconds = c.timeout
			}
			if c.turns > 0 {
				cfg.MaxAgentTurns = c.turns
			}
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			c.check(t, recs[0])
		})
	}
}

// TestOllamaHostChecks fails fast, before any trial, naming the host and
// the fix.
func TestOllamaHostChecks(t *testing.T) {
	spec, lookup := tinySpec(t)
	f := ollamatest.NewServer(t, []string{"fake:1"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Content: "hi"} })
	cases := []struct {
		cfg  *results.Config
		want []string
	}{
		{testConfig("down", "http://127.0.0.1:1", "fake:1"), []string{"ollama at http://127.0.0.1:1 refused the connection", "ollama serve"}},
		{testConfig("missing", f.URL, "fake:1", "fake:absent"), []string{"ollama at " + f.URL + ` has no model "fake:absent"`, "ollama pull fake:absent"}},
	}
	for _, c := range cases {
		out := t.TempDir()
		_, err := Run(context.Background(), c.cfg, spec, Options{Out: out, Lookup: lookup})
		if err == nil {
			t.Fatalf("%s: ran", c.cfg.Name)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", c.cfg.Name, err, w)
			}
		}
		if recs, _, _ := results.ReadJournal(filepath.Join(out, results.TrialsFile)); len(recs) > 0 {
			t.Errorf("%s: %d trials ran", c.cfg.Name, len(recs))
		}
		if _, err := os.Stat(filepath.Join(out, results.ManifestFile)); err == nil {
			t.Errorf("%s: a run that could not start left run.json behind (a retry would need --resume)", c.cfg.Name)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d chat requests before the checks passed", n)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{"268.10M": 268.1e6, "3.2B": 3.2e9, "20.9B": 20.9e9, "7b": 7e9, "": 0, "big": 0} {
		if got := results.ParseSize(in); math.Abs(got-want) > 1 {
			t.Errorf("ParseSize(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestHostsShareTrials runs one model on two Ollama hosts: each is warmed
// up once, both serve trials, and the journal holds every trial once in
// whole lines.
func TestHostsShareTrials(t *testing.T) {
	spec, lookup := tinySpec(t)
	var hosts []*ollamatest.Server
	for range 2 {
		hosts = append(hosts, ollamatest.NewServer(t, []string{"fake:gold"}, func(req ollamatest.Request, n int) ollamatest.Step {
			s := goldModel(spec, lookup)(req, n)
			s.Delay = time.Millisecond
			return s
		}))
	}
	cfg := testConfig("hosts", "", "fake:gold")
	cfg.Ollama = results.OllamaConfig{Hosts: []string{hosts[0].URL, hosts[1].URL}}
	cfg.Repetitions = 3
	recs, err := runTrials(t, cfg, spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4*4*3 {
		t.Fatalf("%d records", len(recs))
	}
	served := map[string]int{}
	for _, r := range recs {
		served[r.Host]++
		if r.Metrics.TC != 1 {
			t.Errorf("%s: TC %v", r.TrialID, r.Metrics.TC)
		}
	}
	for _, h := range hosts {
		loads := 0
		for _, r := range h.Requests() {
			if len(r.Messages) == 0 {
				loads++
			}
		}
		if served[h.URL] == 0 || loads != 1 {
			t.Errorf("host %s served %d trials after %d loads", h.URL, served[h.URL], loads)
		}
	}
}

// TestBuiltinAgentsEverywhere is the benchmark's self-test: the oracle
// scores TC = 1 on every domain, level and scenario, through the same MCP
// path and scoring a model gets; the silent agent scores 0 everywhere.
func TestBuiltinAgentsEverywhere(t *testing.T) {
	spec := loadSpec(t)
	recs, err := runTrials(t, testConfig("builtin", "http://127.0.0.1:1", agent.Oracle, agent.Silent), spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, d := range spec.Domains {
		want += 2 * 4 * len(d.Scenarios)
	}
	if len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		m := r.Metrics
		switch {
		case r.Agent != agent.BackendBuiltin:
			t.Fatalf("%s: agent %q", r.TrialID, r.Agent)
		case r.Model == agent.Oracle && (m.TC != 1 || m.F1 != 1 || m.ActionF1 != 1 || m.ArgAcc != 1 || r.ErrorClass != ""):
			t.Errorf("%s: %+v %s", r.TrialID, m, r.ErrorClass)
		case r.Model == agent.Silent && (m.TC != 0 || !m.ZeroToolCall):
			t.Errorf("%s: %+v", r.TrialID, m)
		}
	}
}
