package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/progress"
	"github.com/mcpgranite/granite/internal/schemacheck"
)

// stageOf names the synthesis stage a request's prompt belongs to.
func stageOf(req ollamatest.Request) string {
	prompt := firstPrompt(req)
	switch {
	case strings.HasPrefix(prompt, "Describe this tool"):
		return "enrich"
	case strings.HasPrefix(prompt, "You play the system"):
		return "mock"
	case strings.HasPrefix(prompt, "Split this task"):
		return "turns"
	case strings.HasPrefix(prompt, "You judge"):
		return "judge"
	}
	return "scenario"
}

// firstPrompt is a stage request's prompt: its first user message.
func firstPrompt(req ollamatest.Request) string {
	if users := req.Contents("user"); len(users) > 0 {
		return users[0]
	}
	return ""
}

// lastPrompt is the last user message of the last request: the reason a
// retry fed back.
func lastPrompt(f *ollamatest.Server) string {
	reqs := f.Requests()
	users := reqs[len(reqs)-1].Contents("user")
	return users[len(users)-1]
}

// reply scripts one stage reply: its content, and the delay before it.
type reply func(k int, req ollamatest.Request) (string, time.Duration)

// byStage scripts replies per stage; each handler gets the number of
// earlier requests of its stage. Enrich requests get a valid reading
// unless scripted.
func byStage(handlers map[string]reply) reply {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(_ int, req ollamatest.Request) (string, time.Duration) {
		st := stageOf(req)
		mu.Lock()
		k := seen[st]
		seen[st]++
		mu.Unlock()
		if h, ok := handlers[st]; ok {
			return h(k, req)
		}
		if st == "enrich" {
			return `{"functional_description":"d","parameters":[],"use_cases":["u"],"context":"c"}`, 0
		}
		return "{}", 0
	}
}

// synthModel is the double of the Ollama host serving fake:synth, which
// answers every stage with r.
func synthModel(t *testing.T, r reply) *ollamatest.Server {
	return ollamatest.NewServer(t, []string{"fake:synth"}, func(req ollamatest.Request, n int) ollamatest.Step {
		content, delay := r(n, req)
		return ollamatest.Step{Content: content, Delay: delay}
	})
}

func llmFor(t *testing.T, f *ollamatest.Server) *LLM {
	t.Helper()
	l, err := NewLLM(f.URL, "fake:synth", nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// goldScenario is a valid stage reply for a generated domain at a level:
// the operation example of its first tool.
func goldScenario(d *mcpdomain.Domain, level level.Level) string {
	tools := FromDomain(d, level)
	call := map[string]any{"tool": tools[0].Name, "arguments": json.RawMessage(tools[0].examples[0]), "reason": "look first"}
	b, _ := json.Marshal(map[string]any{"title": "t", "instruction": "Show me what there is.", "calls": []any{call}, "novelty": "n", "follow_up": "and then?"})
	return string(b)
}

func TestStageRetriesAndDiscards(t *testing.T) {
	d := gen.Domains[0]
	tools := FromDomain(d, level.L2)
	good := goldScenario(d, level.L2)
	bad := strings.Replace(good, `"tool":"`+tools[0].Name+`"`, `"tool":"launch_rockets"`, 1)
	cases := []struct {
		name      string
		reply     func(n int) (string, time.Duration)
		artifacts int
		retried   int
		discarded int
		wantErr   string
	}{
		{"valid JSON", func(int) (string, time.Duration) { return good, 0 }, 1, 0, 0, ""},
		{"invalid, then valid", func(n int) (string, time.Duration) {
			if n == 0 {
				return bad, 0
			}
			return good, 0
		}, 1, 1, 0, ""},
		{"not JSON, then valid", func(n int) (string, time.Duration) {
			if n == 0 {
				return "Sure! Here is a scenario:", 0
			}
			return good, 0
		}, 1, 1, 0, ""},
		// One scenario of one tool wanted: (Retries+1) + 2 attempts (the
		// bound), each retried Retries times and discarded.
		{"always invalid", func(int) (string, time.Duration) { return bad, 0 }, 0, (Retries + 3) * Retries, Retries + 3, ""},
		{"a slow reply", func(int) (string, time.Duration) { return good, 2 * time.Second }, 0, 0, 0, "ollama:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := synthModel(t, byStage(map[string]reply{
				"scenario": func(k int, _ ollamatest.Request) (string, time.Duration) { return c.reply(k) },
			}))
			l := llmFor(t, f)
			l.Timeout = 300 * time.Millisecond
			var shown bytes.Buffer
			l.Progress = progress.New(&shown, false, 2, 0, "steps")
			res, err := l.Synthesize(context.Background(), "test", tools[:1], 1, Executor(d, level.L2))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Artifacts) != c.artifacts || res.Retried != c.retried || res.Discarded != c.discarded {
				t.Fatalf("%d artifacts, %d retried, %d discarded", len(res.Artifacts), res.Retried, res.Discarded)
			}
			// Progress names the stages, the discards and the steps done.
			for _, want := range []string{"enrich: 1 tools", "scenarios: 1 wanted"} {
				if !strings.Contains(shown.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, shown.String())
				}
			}
			if c.discarded > 0 && !strings.Contains(shown.String(), fmt.Sprintf("%d discarded after %d retries", c.discarded, Retries)) ||
				c.artifacts > 0 && !strings.Contains(shown.String(), "2/2 steps") {
				t.Errorf("progress:\n%s", shown.String())
			}
			if c.artifacts > 0 {
				a := res.Artifacts[0]
				checkArtifacts(t, res.Artifacts)
				if a.Provenance.Backend != "ollama" || a.Provenance.Retries != c.retried || a.MockOutputs[0].Grounding != "executed" || a.MockOutputs[0].IsError {
					t.Errorf("%+v", a)
				}
			}
			// The retry fed the validation error back.
			if c.retried > 0 {
				if last := lastPrompt(f); !strings.Contains(last, "does not match the required JSON Schema") {
					t.Errorf("retry prompt: %q", last)
				}
			}
			// Every scenario request carried the stage schema as its format.
			reqs := f.Requests()
			if format := reqs[len(reqs)-1].Format; !strings.Contains(string(format), `"const":"`+tools[0].Name+`"`) {
				t.Errorf("format: %s", format)
			}
		})
	}
}

// TestStageRetriesAFailingHost: a stage shares the agent's retry policy,
// so a crashed runner costs a request, not the record; a retry of the
// transport is not a validation retry.
func TestStageRetriesAFailingHost(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"fake:synth"}, func(_ ollamatest.Request, n int) ollamatest.Step {
		if n == 0 {
			return ollamatest.Step{Status: 500, ErrBody: "llama runner process has terminated: exit status 2"}
		}
		return ollamatest.Step{Content: `{"a":1}`}
	})
	var out struct{ A int }
	retries, err := llmFor(t, f).Stage(context.Background(), "p", json.RawMessage(`{"type":"object"}`), &out)
	if err != nil || retries != 0 || out.A != 1 || f.Chats() != 2 {
		t.Fatalf("%d retries, %+v, %v, %d requests", retries, out, err, f.Chats())
	}
}

// TestScenarioSchemaRefusesWhatDoesNotExist: the stage contract accepts a
// right call and refuses unknown tools and arguments a tool's schema
// refuses, also for tools with $defs.
func TestScenarioSchemaRefusesWhatDoesNotExist(t *testing.T) {
	tools, err := loadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := ScenarioSchema(tools)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemacheck.Compile("s", string(schema))
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(call string) any {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"title":"t","instruction":"i","novelty":"n","follow_up":"f","calls":[` + call + `]}`))
		return v
	}
	ok := `{"tool":"schedule_event","arguments":{"summary":"s","when":{"start":"2026-01-01T08:00:00Z","end":"2026-01-01T09:00:00Z"},"attendees":[{"email":"a@example.com"}]},"reason":"r"}`
	if err := sch.Validate(wrap(ok)); err != nil {
		t.Fatalf("a right call refused: %v", err)
	}
	for _, bad := range []string{
		`{"tool":"delete_everything","arguments":{},"reason":"r"}`,
		`{"tool":"schedule_event","arguments":{"summary":"s","when":{"start":"tomorrow","end":"x"},"attendees":[{"email":"a@example.com"}]},"reason":"r"}`,
		`{"tool":"set_thermostat","arguments":{"entity_id":"climate.hall","hvac_mode":"turbo","temperature":20},"reason":"r"}`,
	} {
		if err := sch.Validate(wrap(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestLLMCoversEveryTool: steering toward the least-used tools uses every
// tool of a generated domain at L4.
func TestLLMCoversEveryTool(t *testing.T) {
	d := gen.Domains[0]
	tools := FromDomain(d, level.L4)
	byName := map[string]Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	// The scripted model calls the first tool the prompt asks it to use.
	f := synthModel(t, byStage(map[string]reply{"scenario": func(_ int, req ollamatest.Request) (string, time.Duration) {
		prompt := firstPrompt(req)
		_, after, _ := strings.Cut(prompt, "It must use these tools: ")
		name := strings.TrimSuffix(strings.Split(strings.Split(after, ".")[0], ", ")[0], ".")
		call := map[string]any{"tool": name, "arguments": json.RawMessage(byName[name].examples[0]), "reason": "r"}
		b, _ := json.Marshal(map[string]any{"title": "t", "instruction": "Do it.", "calls": []any{call}, "novelty": "n", "follow_up": "f"})
		return string(b), 0
	}}))
	res, err := llmFor(t, f).Synthesize(context.Background(), "domain:x/L4", tools, len(tools)*2, Executor(d, level.L4))
	if err != nil {
		t.Fatal(err)
	}
	if cov := Measure(tools, res.Artifacts); cov.Used != cov.Tools || cov.ValidCalls != cov.Calls {
		t.Fatalf("%+v", cov)
	}
}

// TestPipelineMocksAndExpands runs every stage on external tools: the mock
// outputs must fit the output schema (a misfit is refused and retried),
// and the multi-turn expansion must cite earlier values; one that yields
// a single turn is dropped.
func TestPipelineMocksAndExpands(t *testing.T) {
	tools, err := loadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	scenario := `{"title":"t","instruction":"File a bug about the login page and show me the log file.","novelty":"n","follow_up":"f","calls":[
		{"tool":"create_issue","arguments":{"owner":"acme","repo":"web","title":"Login broken","labels":["bug"]},"reason":"file it"},
		{"tool":"read_file","arguments":{"path":"/var/log/web.log"},"reason":"look"}]}`
	// The first reply misses create_issue's output schema and read_file's
	// example shape; the second fits both and claims high grounding,
	// which only read_file (with an example output) may keep.
	misfit := `{"state":{},"outputs":[{"call":0,"output":"{\"number\":42}","grounding":"medium"},{"call":1,"output":"\"error at 10:02\"","grounding":"low"}]}`
	fit := `{"state":{"issue":42},"outputs":[{"call":0,"output":"{\"number\":42,\"url\":\"https://example.com/acme/web/issues/42\"}","grounding":"high"},{"call":1,"output":"{\"content\":\"error at 10:02\",\"lines\":1}","grounding":"high"}]}`
	for _, c := range []struct {
		name      string
		turns     string
		wantTurns int
		single    int
	}{
		{"two turns citing an earlier value", `{"turns":[{"prompt":"File a bug about the login page.","calls":[0]},{"prompt":"Thanks. Now, for issue 42, show me the web log.","calls":[1]}]}`, 2, 0},
		{"a single turn", `{"turns":[{"prompt":"Do it all.","calls":[0,1]}]}`, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := synthModel(t, byStage(map[string]reply{
				"scenario": func(int, ollamatest.Request) (string, time.Duration) { return scenario, 0 },
				"mock": func(k int, _ ollamatest.Request) (string, time.Duration) {
					if k == 0 {
						return misfit, 0
					}
					return fit, 0
				},
				"turns": func(int, ollamatest.Request) (string, time.Duration) { return c.turns, 0 },
			}))
			res, err := llmFor(t, f).Synthesize(context.Background(), "tools:public", tools, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Artifacts) != 1 {
				t.Fatalf("%+v", res)
			}
			a := res.Artifacts[0]
			checkArtifacts(t, res.Artifacts)
			if c.wantTurns == 2 && (len(a.Turns[0].Calls) != 1 || a.Turns[1].Calls[0] != 1) {
				t.Errorf("the turns do not say which calls answer them: %+v", a.Turns)
			}
			if a.Title != "t" || a.Novelty != "n" || a.FollowUp != "f" {
				t.Errorf("the scenario stage's title, novelty and follow-up are lost: %+v", a)
			}
			if len(a.Turns) != c.wantTurns || res.SingleTurn != c.single || a.MockOutputs[0].Grounding != "medium" || a.MockOutputs[1].Grounding != "high" ||
				!strings.Contains(a.MockOutputs[0].Output, "url") || a.Provenance.Retries < 1 {
				t.Errorf("%+v / %+v", a, res)
			}
			// Mock-stage replies are checked in order, so the first
			// reason fed back is the schema misfit; a misfit of shape
			// alone is refused in TestMockShapeOfExampleOutputs.
		})
	}
}

// TestLLMCoversSeventyTools: steering reaches every tool of a 70-tool
// spec, even when fewer scenarios are asked for than there are tools.
func TestLLMCoversSeventyTools(t *testing.T) {
	tools := seventyTools()
	valid := map[string]json.RawMessage{}
	for _, tl := range tools {
		p, err := planTool("x", &tl)
		if err != nil {
			t.Fatal(err)
		}
		valid[tl.Name] = p.args[0]
	}
	f := synthModel(t, byStage(map[string]reply{
		"scenario": func(_ int, req ollamatest.Request) (string, time.Duration) {
			prompt := firstPrompt(req)
			_, after, _ := strings.Cut(prompt, "It must use these tools: ")
			name := strings.Split(strings.Split(after, ".")[0], ", ")[0]
			b, _ := json.Marshal(map[string]any{"title": "t", "instruction": "Do it.", "novelty": "n", "follow_up": "f",
				"calls": []any{map[string]any{"tool": name, "arguments": valid[name], "reason": "r"}}})
			return string(b), 0
		},
		"mock": func(int, ollamatest.Request) (string, time.Duration) {
			return `{"state":{},"outputs":[{"call":0,"output":"{}","grounding":"low"}]}`, 0
		},
	}))
	// Ten scenarios asked for: synthesis goes on past ten until every
	// tool is used, one new tool per kept scenario.
	res, err := llmFor(t, f).Synthesize(context.Background(), "tools:70", tools, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cov := Measure(tools, res.Artifacts); cov.Used != 70 || cov.ValidCalls != cov.Calls || len(res.Artifacts) != 70 {
		t.Fatalf("%+v, %d artifacts", cov, len(res.Artifacts))
	}
}

// TestMockShapeOfExampleOutputs: a mock output without the shape of the
// tool's example output is refused with the reason fed back, and the
// offline backend mocks external tools from their examples, else their
// output schema, graded by that material.
func TestMockShapeOfExampleOutputs(t *testing.T) {
	tools, err := loadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var readFile Tool
	for _, tl := range tools {
		if len(tl.OutputExamples) > 0 {
			readFile = tl
		}
	}
	calls := []ExpectedCall{{Tool: readFile.Name, Arguments: json.RawMessage(`{"path":"/a"}`)}}
	f := synthModel(t, byStage(map[string]reply{
		"mock": func(k int, _ ollamatest.Request) (string, time.Duration) {
			if k == 0 {
				return `{"state":{},"outputs":[{"call":0,"output":"{\"content\":\"x\"}","grounding":"high"}]}`, 0
			}
			return `{"state":{},"outputs":[{"call":0,"output":"{\"content\":\"x\",\"lines\":1,\"extra\":true}","grounding":"high"}]}`, 0
		},
	}))
	outs, n, err := llmFor(t, f).Mock(context.Background(), tools, "read /a", calls)
	if err != nil || n != 1 || outs[0].Grounding != "high" {
		t.Fatalf("%+v, %d retries, %v", outs, n, err)
	}
	if want, got := `lacks "lines", which the example has`, lastPrompt(f); !strings.Contains(got, want) {
		t.Errorf("the reason fed back lacks %s:\n%s", want, got)
	}
	arts, err := Offline("tools:public", tools, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		for _, m := range a.MockOutputs {
			var tl Tool
			for _, x := range tools {
				if x.Name == a.ExpectedCalls[m.Call].Tool {
					tl = x
				}
			}
			want := map[bool]string{true: "high", false: map[bool]string{true: "medium", false: "low"}[len(tl.OutputSchema) > 0]}[len(tl.OutputExamples) > 0]
			if m.Grounding != want || tl.OutputFits(m.Output) != nil || tl.ShapeMismatch(m.Output) != "" {
				t.Errorf("%s: %s mock %s graded %s, want %s", a.ID, tl.Name, m.Output, m.Grounding, want)
			}
		}
	}
}
