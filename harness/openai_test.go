package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/chattest"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
)

// openaiConfig is a config with the documented defaults whose models are
// served by an OpenAI-compatible endpoint under their own names.
func openaiConfig(name, baseURL string, models ...string) *results.Config {
	c := testConfig(name, "http://127.0.0.1:1")
	for _, m := range models {
		c.Models = append(c.Models, results.ModelEntry{Name: m, Backend: agent.BackendOpenAI, BaseURL: baseURL, ParamsB: 4, Quantization: "bf16"})
	}
	return c
}

// reply is a scripted model reply that either double can send.
type reply struct {
	content, reasoning string
	calls              []chattest.Call // name and raw arguments
}

// turnState is what a request tells a script: the last prompt, the user
// turns so far, the tool results since the start and the tools offered.
type turnState struct {
	prompt  string
	users   int
	results []string
	tools   []string
}

// stateOf is what a request of either double tells a script.
func stateOf(req chattest.Chat) turnState {
	s := turnState{users: len(req.Contents("user")), results: req.ToolResults(), tools: req.ToolNames()}
	s.prompt, _ = req.Progress()
	return s
}

// viaOllama plays a scripted model through the Ollama double.
func viaOllama(play func(turnState) reply) func(ollamatest.Request, int) ollamatest.Step {
	return func(req ollamatest.Request, _ int) ollamatest.Step {
		r := play(stateOf(req.Chat))
		return ollamatest.Step{Content: r.content, Calls: r.calls}
	}
}

// viaOpenAI plays a scripted model through the OpenAI-compatible double.
func viaOpenAI(play func(turnState) reply) func(openaitest.Request, int) openaitest.Step {
	return func(req openaitest.Request, _ int) openaitest.Step {
		r := play(stateOf(req.Chat))
		return openaitest.Step{Content: r.content, Reasoning: r.reasoning, Calls: r.calls}
	}
}

// batched plays calls, perReply at a time, then answers.
func batched(calls []ollamatest.Call, perReply int, answer string) func(turnState) reply {
	return func(s turnState) reply {
		done := len(s.results)
		if done < len(calls) {
			return reply{calls: calls[done:min(done+perReply, len(calls))], reasoning: "Next: " + calls[done].Name}
		}
		return reply{content: answer}
	}
}

// trajectory is one case of testdata/trajectories.yaml.
type trajectory struct {
	Name     string      `yaml:"name"`
	Scenario string      `yaml:"scenario"`
	Level    level.Level `yaml:"level"`
	Calls    [][]any     `yaml:"calls"`
	Answer   string      `yaml:"answer"`
	TC       float64     `yaml:"tc"`
	Strict   float64     `yaml:"tc_strict"`
	Why      string      `yaml:"why"`
}

// sameParts is a record with what differs between two plays of the same
// trajectory by nature left out: ids, times, the backend, the host and
// the request options.
func sameParts(r results.Record) results.Record {
	r.StartedAt, r.EndedAt, r.Agent, r.Host, r.Options, r.Durations, r.DoneReason = "", "", "", "", nil, results.Durations{}, ""
	// Prompt counts are each server's own (the Ollama double counts the
	// request's bytes, as a real prompt grows with the conversation).
	r.PromptTokens = 0
	for i := range r.Calls {
		r.Calls[i].LatencyMS = 0
	}
	for i := range r.Messages {
		r.Messages[i].Thinking = ""
	}
	m := *r.Metrics
	m.WallS = 0
	if m.Paper != nil {
		// The reference's token count holds the prompt's.
		p := *m.Paper
		p.Tokens = 0
		m.Paper = &p
	}
	r.Metrics = &m
	return r
}

// TestTrajectoriesThroughBothBackends plays each hand-made trajectory of
// testdata/trajectories.yaml as a scripted model through the Ollama double
// and through the OpenAI-compatible double, one call per reply and three:
// the records, metrics included, must be the same, and the verdicts the
// ones the file pins.
func TestTrajectoriesThroughBothBackends(t *testing.T) {
	cases := loadTrajectories(t)
	spec := loadSpec(t)
	lookup := gen.Lookup
	for _, c := range cases {
		var calls []ollamatest.Call
		for _, call := range c.Calls {
			args, _ := json.Marshal(call[1])
			calls = append(calls, ollamatest.Call{Name: call[0].(string), Args: string(args)})
		}
		for _, perReply := range []int{1, 3} {
			play := batched(calls, perReply, c.Answer)
			ol := ollamatest.NewServer(t, []string{"m"}, viaOllama(play))
			oa := openaitest.NewServer(t, []string{"m"}, viaOpenAI(play))
			var recs [2]results.Record
			for i, cfg := range []*results.Config{testConfig("traj", ol.URL, "m"), openaiConfig("traj", oa.URL, "m")} {
				cfg.Scenarios, cfg.Granularities = []string{c.Scenario}, []level.Level{c.Level}
				cfg.MaxAgentTurns = len(calls) + 1
				got, err := runTrials(t, cfg, spec, lookup)
				if err != nil || len(got) != 1 {
					t.Fatalf("%s: %d records, %v", c.Name, len(got), err)
				}
				recs[i] = got[0]
			}
			if recs[1].Agent != "openai" || recs[0].Agent != "ollama" || recs[1].Host != oa.URL {
				t.Errorf("%s: agents %q %q, host %q", c.Name, recs[0].Agent, recs[1].Agent, recs[1].Host)
			}
			if want := "Next: " + calls[0].Name; recs[1].Messages[2].Thinking != want {
				t.Errorf("%s: reasoning %q, want %q kept as thinking", c.Name, recs[1].Messages[2].Thinking, want)
			}
			a, b := sameParts(recs[0]), sameParts(recs[1])
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Errorf("%s, %d per reply: the backends' records differ:\nollama %s\nopenai %s", c.Name, perReply, ja, jb)
			}
			if m := recs[1].Metrics; m.TC != c.TC || m.TCStrict != c.Strict || recs[1].ErrorClass != "" {
				t.Errorf("%s: tc %v tc_strict %v error %q (%s), want %v %v", c.Name, m.TC, m.TCStrict, recs[1].ErrorClass, recs[1].Error, c.TC, c.Strict)
			}
		}
	}
}

// TestOpenAIScripted plays scripted replies of an OpenAI-compatible
// endpoint, streamed and not, through a trial of tiny-002 (switch LP02 on
// at 40 %): what each does to the record.
func TestOpenAIScripted(t *testing.T) {
	spec, lookup := tinySpec(t)
	right := openaitest.Step{Calls: []openaitest.Call{{Name: "set_lamp", Args: `{"lamp_id":"LP02","on":true,"level":40}`}}, Reasoning: "LP02, 40 %."}
	done := openaitest.Step{Content: "Done: LP02 is on at 40 percent."}
	// seq answers the n-th request with the n-th step, and the last step
	// after that.
	seq := func(steps ...openaitest.Step) func() func(openaitest.Request, int) openaitest.Step {
		return func() func(openaitest.Request, int) openaitest.Step {
			var n atomic.Int32
			return func(openaitest.Request, int) openaitest.Step { return steps[min(int(n.Add(1))-1, len(steps)-1)] }
		}
	}
	cases := []struct {
		name     string
		script   func() func(openaitest.Request, int) openaitest.Step
		class    results.ErrorClass
		stop     results.StopReason
		tc       float64
		calls    int    // tool calls made
		requests int    // chat requests
		errText  string // part of the record's error
	}{
		{"the right call", seq(right, done), "", results.StopAnswer, 1, 1, 2, ""},
		{"two calls in one reply", seq(openaitest.Step{Calls: []openaitest.Call{{Name: "list_lamps", Args: `{}`}, right.Calls[0]}}, done), "", results.StopAnswer, 1, 2, 2, ""},
		{"a hallucinated tool, then the right call", seq(openaitest.Step{Calls: []openaitest.Call{{Name: "switch_everything_on", Args: `{}`}}}, right, done),
			results.ErrUnknown, results.StopAnswer, 1, 2, 3, ""},
		{"arguments that are not JSON", seq(openaitest.Step{Calls: []openaitest.Call{{Name: "set_lamp", Args: `lamp_id=LP02, on`}}}, done),
			results.ErrMalformed, results.StopError, 0, 0, 1, "are not a JSON object"},
		{"no tool call", seq(openaitest.Step{Content: "LP02 should be on now."}), "", results.StopAnswer, 0, 0, 1, ""},
		{"a 429 with Retry-After, then the right call", seq(openaitest.Step{Status: 429, RetryAfter: "1"}, right, done), "", results.StopAnswer, 1, 1, 3, ""},
		{"a 500, then the right call", seq(openaitest.Step{Status: 500, ErrBody: "CUDA error"}, right, done), "", results.StopAnswer, 1, 1, 3, ""},
		{"an error mid-stream, then the right call", seq(openaitest.Step{ErrEvent: "engine died", Content: "x"}, right, done), "", results.StopAnswer, 1, 1, 3, ""},
		{"an over-long context", seq(openaitest.Step{Status: 400, ErrCode: "context_length_exceeded", ErrBody: "This model's maximum context length is 2048 tokens."}),
			results.ErrContext, results.StopError, 0, 0, 1, "maximum context length is 2048 tokens"},
		{"a reply slower than the timeout", seq(openaitest.Step{Delay: time.Minute, Content: "late"}), results.ErrTimeout, results.StopTimeout, 0, 0, 1, ""},
	}
	for _, stream := range []bool{true, false} {
		for _, c := range cases {
			if !stream && c.name == "an error mid-stream, then the right call" {
				continue
			}
			t.Run(c.name+map[bool]string{true: ", streamed", false: ", whole"}[stream], func(t *testing.T) {
				f := openaitest.NewServer(t, []string{"m"}, c.script())
				cfg := openaiConfig("scripted", f.URL, "m")
				cfg.Scenarios, cfg.Granularities, cfg.Stream = []string{"tiny-002"}, []level.Level{level.L4}, &stream
				cfg.AgentTimeoutSeconds = 3
				recs, err := runTrials(t, cfg, spec, lookup)
				if err != nil {
					t.Fatal(err)
				}
				r := recs[0]
				if r.ErrorClass != c.class || r.StopReason != c.stop || r.Metrics.TC != c.tc || len(r.Calls) != c.calls || f.Chats() != c.requests || !strings.Contains(r.Error, c.errText) {
					t.Errorf("error_class %q (%s), stop %q, tc %v, %d calls, %d requests; want %q, %q, %v, %d, %d",
						r.ErrorClass, r.Error, r.StopReason, r.Metrics.TC, len(r.Calls), f.Chats(), c.class, c.stop, c.tc, c.calls, c.requests)
				}
				if c.stop == results.StopTimeout {
					return
				}
				// Usage is counted per reply; a failed attempt reports none.
				if r.Agent != "openai" || c.class == "" && (r.PromptTokens != r.Turns*openaitest.PromptTokens || r.CompletionTokens != r.Turns*openaitest.CompletionTokens) {
					t.Errorf("agent %q, tokens %d/%d after %d replies", r.Agent, r.PromptTokens, r.CompletionTokens, r.Turns)
				}
				if c.calls > 0 && r.Messages[2].Thinking != right.Reasoning && c.name == "the right call" {
					t.Errorf("reasoning %q, want it kept as thinking", r.Messages[2].Thinking)
				}
				reqs := f.Requests()
				last := reqs[len(reqs)-1]
				if unanswered, unknown := last.UnansweredCalls(); len(unanswered)+len(unknown) > 0 {
					t.Errorf("tool messages do not answer the calls by ID: unanswered %v, unknown %v", unanswered, unknown)
				}
				if last.ToolChoice != "auto" || last.Temperature == nil || *last.Temperature != cfg.Temperature || last.MaxTokens == nil || *last.MaxTokens != cfg.MaxTokens ||
					last.Seed == nil || *last.Seed != cfg.Seed || last.Model != "m" {
					t.Errorf("request fields: %+v", last)
				}
				if c.class == results.ErrMalformed {
					if m := r.Messages[len(r.Messages)-1]; len(m.ToolCalls) != 1 || string(m.ToolCalls[0].Arguments) != `"lamp_id=LP02, on"` {
						t.Errorf("the garbled call is not in the transcript: %+v", m)
					}
				}
			})
		}
	}
}

// TestOpenAIToolsCarryTheWholeSchema: every generated tool reaches an
// OpenAI-compatible endpoint with its input schema intact, the keywords
// Ollama drops included.
func TestOpenAIToolsCarryTheWholeSchema(t *testing.T) {
	spec, lookup := tinySpec(t)
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return openaitest.Step{Content: "no"} })
	cfg := openaiConfig("schemas", f.URL, "m")
	cfg.Scenarios = []string{"tiny-002"}
	if _, err := runTrials(t, cfg, spec, lookup); err != nil {
		t.Fatal(err)
	}
	dom, _ := lookup(spec.Domains[0].Name)
	byName := map[string]string{}
	for _, l := range level.Levels {
		for _, tool := range dom.Tools[l] {
			byName[tool.Name] = tool.InputSchema
		}
		if lost := agent.ToolLoss(agent.For(cfg.Models[0]), dom.Tools[l]); len(lost) > 0 {
			t.Errorf("%s: the OpenAI conversion drops %v", l, lost)
		}
	}
	seen := 0
	for _, req := range f.Requests() {
		for _, tool := range req.Tools {
			var sent, want map[string]any
			_ = json.Unmarshal(tool.Function.Parameters, &sent)
			_ = json.Unmarshal([]byte(byName[tool.Function.Name]), &want)
			// mcp-go's tools/list reads an absent required as [].
			if r, ok := sent["required"].([]any); ok && len(r) == 0 && want["required"] == nil {
				delete(sent, "required")
			}
			if tool.Type != "function" || !equalJSON(sent, want) {
				t.Errorf("%s: sent %s\nwant %s", tool.Function.Name, tool.Function.Parameters, byName[tool.Function.Name])
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no tools sent")
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestOpenAIPreflight: a model the endpoint does not list, or a key's
// variable that is not set, stops the run before anything is written,
// naming the URL, the model and what the endpoint lists.
func TestOpenAIPreflight(t *testing.T) {
	spec, lookup := tinySpec(t)
	f := openaitest.NewServer(t, []string{"Qwen/Qwen3-4B", "tiny:latest"}, nil)
	cfg := openaiConfig("preflight", f.URL, "qwen3-4b")
	cfg.Models = append(cfg.Models, results.ModelEntry{Name: "keyed", Backend: agent.BackendOpenAI, BaseURL: f.URL, Model: "Qwen/Qwen3-4B", APIKeyEnv: "GRANITE_TEST_UNSET_KEY"},
		// Ollama's /v1 lists tags whole; an untagged name is its :latest.
		results.ModelEntry{Name: "tiny", Backend: agent.BackendOpenAI, BaseURL: f.URL},
		// An Ollama entry's problem is reported with the OpenAI ones, not
		// only once they are fixed.
		results.ModelEntry{Name: "absent-from-ollama"})
	down := ollamatest.NewServer(t, []string{"other"}, nil)
	cfg.Ollama.Host = down.URL
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup})
	for _, want := range []string{
		`model qwen3-4b: GET ` + f.URL + `/models does not list model "qwen3-4b"; it lists Qwen/Qwen3-4B`,
		`model keyed: api_key_env names GRANITE_TEST_UNSET_KEY, which is not set`,
		`has no model "absent-from-ollama": run ` + "`ollama pull absent-from-ollama`",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to say %q", err, want)
		}
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("a run that could not start made %s", out)
	}
	if err != nil && strings.Contains(err.Error(), "model tiny:") {
		t.Errorf("error %v; an untagged tiny is the listed tiny:latest", err)
	}
	if f.Chats() != 0 || f.Lists() != 2 {
		t.Errorf("%d chats, %d model lists; want two lists (qwen3-4b's, tiny's) and no chat", f.Chats(), f.Lists())
	}
}

// TestOpenAIContextIsTheServers: an OpenAI-compatible entry cannot set
// num_ctx; run.json says so and records the context the server reports,
// and a tool list longer than that context is warned about before the
// first trial.
func TestOpenAIContextIsTheServers(t *testing.T) {
	spec, lookup := tinySpec(t)
	f := openaitest.NewServer(t, []string{"m"}, viaOpenAI(func(turnState) reply { return reply{content: "ok"} }))
	f.MaxModelLen = 64
	cfg := openaiConfig("context", f.URL, "m")
	cfg.Scenarios = []string{"tiny-001"}
	cfg.Granularities = []level.Level{level.L4}
	out := t.TempDir()
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	man, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if info := man.Models["m"]; info.ContextTokens != 64 || info.Context != agent.OpenAIContextNote {
		t.Errorf("run.json model info %+v; want the server's 64 tokens and the note that num_ctx cannot be set", info)
	}
	if want := "longer than the 64 tokens of context"; !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "OLLAMA_CONTEXT_LENGTH") {
		t.Errorf("progress %q; want a warning saying %q and what to do", log.String(), want)
	}
}

// TestAPIKeyNeverWritten: the key reaches the endpoint as a bearer token
// and no file the run writes, nor its progress log, holds it.
func TestAPIKeyNeverWritten(t *testing.T) {
	spec, lookup := tinySpec(t)
	const key = "sk-granite-test-7f3a9c1e5b"
	t.Setenv("GRANITE_TEST_KEY", key)
	f := openaitest.NewServer(t, []string{"m"}, viaOpenAI(func(s turnState) reply {
		// A model that echoes whatever it was given would leak it here.
		return reply{content: "ok " + s.prompt}
	}))
	cfg := openaiConfig("key", f.URL, "m")
	cfg.Models[0].APIKeyEnv = "GRANITE_TEST_KEY"
	cfg.Scenarios = []string{"tiny-001", "tiny-002"}
	out := t.TempDir()
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Requests() {
		if r.Authorization != "Bearer "+key {
			t.Fatalf("Authorization %q; want the key as a bearer token", r.Authorization)
		}
	}
	files := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if err != nil || files < 2 {
		t.Fatalf("%d files, %v", files, err)
	}
	if strings.Contains(log.String(), key) {
		t.Errorf("the progress log holds the API key")
	}
	man, _ := results.ReadManifest(out)
	if e, _ := man.Config.Entry("m"); e.APIKeyEnv != "GRANITE_TEST_KEY" {
		t.Errorf("run.json entry %+v; want the variable's name", e)
	}
}

// loadTrajectories reads testdata/trajectories.yaml.
func loadTrajectories(t *testing.T) []trajectory {
	t.Helper()
	data, err := os.ReadFile("testdata/trajectories.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []trajectory
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no trajectories")
	}
	return cases
}

// TestEchoedKeyNeverWritten: an endpoint whose error bodies quote the
// request's Authorization header, in a trial's request or in the
// warm-up, gets the key into neither trials.jsonl nor any other file the
// run writes, nor the progress log or the error the run stops with (what
// granite prints on stderr).
func TestEchoedKeyNeverWritten(t *testing.T) {
	spec, lookup := tinySpec(t)
	const key = "sk-granite-echoed-4d2b8e6f1a"
	t.Setenv("GRANITE_TEST_KEY", key)
	for _, c := range []struct {
		name    string
		status  int
		warmUp  bool // the warm-up fails, which stops the run
		runFail bool
	}{
		{"a 400 in a trial", 400, false, false},
		{"a 401 in a trial", 401, false, false},
		{"a 401 at the warm-up", 401, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
				return openaitest.Step{Status: c.status, EchoAuth: true, ErrBody: "refused"}
			})
			if c.warmUp {
				f.ScriptWarmUps()
			}
			cfg := openaiConfig("echo", f.URL, "m")
			cfg.Models[0].APIKeyEnv = "GRANITE_TEST_KEY"
			cfg.Scenarios, cfg.Granularities = []string{"tiny-002"}, []level.Level{level.L4}
			out := t.TempDir()
			var log bytes.Buffer
			_, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Progress: &log})
			if (err != nil) != c.runFail {
				t.Fatalf("run error %v; want one: %v", err, c.runFail)
			}
			if reqs := f.Requests(); len(reqs) == 0 || reqs[0].Authorization != "Bearer "+key {
				t.Fatalf("requests %+v; want the key sent as a bearer token", reqs)
			}
			if err != nil && (strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "Authorization: Bearer [redacted]")) {
				t.Errorf("the run's error %q holds the key, or does not show the echo redacted", err)
			}
			if strings.Contains(log.String(), key) {
				t.Errorf("the progress log holds the key:\n%s", log.String())
			}
			files := 0
			_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(key)) {
					t.Errorf("%s holds the API key", p)
				}
				return nil
			})
			if c.runFail {
				return
			}
			recs, _, rerr := results.ReadJournal(filepath.Join(out, results.TrialsFile))
			if rerr != nil || len(recs) != 1 || !strings.Contains(recs[0].Error, "Authorization: Bearer [redacted]") {
				t.Errorf("records %+v, %v; want one whose error shows the echo redacted", recs, rerr)
			}
		})
	}
}

// TestEndlessReplyIsMalformed: a model server that never ends its reply,
// through either backend, streamed or not, stops the trial at once as
// malformed_reply, after one request.
func TestEndlessReplyIsMalformed(t *testing.T) {
	spec, lookup := tinySpec(t)
	for _, stream := range []bool{true, false} {
		ol := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Endless: true} })
		oa := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return openaitest.Step{Endless: true} })
		for _, cfg := range []*results.Config{testConfig("endless", ol.URL, "m"), openaiConfig("endless", oa.URL, "m")} {
			cfg.Scenarios, cfg.Granularities, cfg.Stream = []string{"tiny-002"}, []level.Level{level.L4}, &stream
			cfg.AgentTimeoutSeconds = 20 // a guard against hanging only
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil || len(recs) != 1 {
				t.Fatalf("%d records, %v", len(recs), err)
			}
			r := recs[0]
			if r.ErrorClass != results.ErrMalformedReply || r.StopReason != results.StopError || r.Turns != 1 || !strings.Contains(r.Error, "went past") {
				t.Errorf("%s, stream %v: error_class %q, stop %q after %d turns (%s); want malformed_reply at the first reply", r.Agent, stream, r.ErrorClass, r.StopReason, r.Turns, r.Error)
			}
		}
		if ol.Chats() != 1 || oa.Chats() != 1 {
			t.Errorf("stream %v: %d and %d requests; want one each, not retried", stream, ol.Chats(), oa.Chats())
		}
	}
}

// TestOllamaV1RepliesThatAreNoAnswer: through Ollama's /v1 (the double's
// ollama dialect, held to recorded replies), a reply the repeat limit
// ended, one the tool parser emptied and a call qwen3's parser could not
// read end the trial at once with the classes the native API gives them.
func TestOllamaV1RepliesThatAreNoAnswer(t *testing.T) {
	spec, lookup := tinySpec(t)
	for _, c := range []struct {
		name  string
		step  openaitest.Step
		class results.ErrorClass
	}{
		{"the repeat limit", openaitest.Step{Repeat: " again"}, results.ErrRepeatLimit},
		{"a call the server dropped", openaitest.Step{Dropped: true}, results.ErrDroppedCall},
		{"qwen3's parser failing", openaitest.Step{Status: 500, ErrBody: "failed to parse JSON: unexpected end of JSON input"}, results.ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			step := c.step
			step.Dialect = "ollama"
			f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return step })
			cfg := openaiConfig("v1", f.URL, "m")
			cfg.Scenarios = []string{"tiny-002"}
			cfg.Granularities = []level.Level{level.L4}
			cfg.AgentTimeoutSeconds = 5
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if r := recs[0]; r.ErrorClass != c.class || r.StopReason != results.StopError || f.Chats() != 1 || r.Metrics.TC != 0 {
				t.Errorf("error_class %q (%s), stop %q, %d chats; want %q at once", r.ErrorClass, r.Error, r.StopReason, f.Chats(), c.class)
			}
		})
	}
}
