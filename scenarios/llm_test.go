package scenarios

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/generator/runtime"
)

// stageOllama answers /api/chat (non-streaming, as docs/api.md describes
// for "stream": false) with scripted contents, and keeps the requests.
type stageOllama struct {
	mu    sync.Mutex
	reqs  []map[string]any
	reply func(n int, req map[string]any) (string, time.Duration)
}

func (f *stageOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	content, delay := f.reply(n, req)
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"model": req["model"], "created_at": time.Now().UTC(), "done": true, "done_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": content}})
}

func llmFor(t *testing.T, f *stageOllama) *LLM {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	l, err := NewLLM(srv.URL, "fake:synth", nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// goldScenario is a valid stage reply for a generated domain at a level:
// the operation example of its first tool.
func goldScenario(d *runtime.Domain, level runtime.Level) string {
	tools := FromDomain(d, level)
	call := map[string]any{"tool": tools[0].Name, "arguments": json.RawMessage(tools[0].examples[0]), "reason": "look first"}
	b, _ := json.Marshal(map[string]any{"title": "t", "instruction": "Show me what there is.", "calls": []any{call}, "novelty": "n", "follow_up": "and then?"})
	return string(b)
}

func TestStageRetriesAndDiscards(t *testing.T) {
	d := gen.Domains[0]
	tools := FromDomain(d, runtime.L2)
	good := goldScenario(d, runtime.L2)
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
		// One scenario wanted: Retries+1 attempts, each retried Retries
		// times and discarded.
		{"always invalid", func(int) (string, time.Duration) { return bad, 0 }, 0, (Retries + 1) * Retries, Retries + 1, ""},
		{"a slow reply", func(int) (string, time.Duration) { return good, 2 * time.Second }, 0, 0, 0, "ollama:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &stageOllama{reply: func(n int, _ map[string]any) (string, time.Duration) { return c.reply(n) }}
			l := llmFor(t, f)
			l.Timeout = 300 * time.Millisecond
			res, err := l.Synthesize(context.Background(), "test", tools[:1], 1, Executor(d, runtime.L2))
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
			if c.artifacts > 0 {
				a := res.Artifacts[0]
				checkArtifacts(t, res.Artifacts)
				if a.Provenance.Backend != "ollama" || a.Provenance.Retries != c.retried || a.MockOutputs[0].Grounding != "executed" || a.MockOutputs[0].IsError {
					t.Errorf("%+v", a)
				}
			}
			// The retry fed the validation error back.
			if c.retried > 0 {
				msgs := f.reqs[1]["messages"].([]any)
				last := msgs[len(msgs)-1].(map[string]any)["content"].(string)
				if !strings.Contains(last, "does not match the required JSON Schema") {
					t.Errorf("retry prompt: %q", last)
				}
			}
			// Every request carried the stage schema as its format.
			if format, _ := json.Marshal(f.reqs[0]["format"]); !strings.Contains(string(format), `"const":"`+tools[0].Name+`"`) {
				t.Errorf("format: %s", format)
			}
		})
	}
}

// TestScenarioSchemaRefusesWhatDoesNotExist: the stage contract accepts a
// right call and refuses unknown tools and arguments a tool's schema
// refuses, also for tools with $defs.
func TestScenarioSchemaRefusesWhatDoesNotExist(t *testing.T) {
	tools, err := LoadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := ScenarioSchema(tools)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := compile("s", schema)
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
	tools := FromDomain(d, runtime.L4)
	byName := map[string]Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	// The scripted model calls the first tool the prompt asks it to use.
	f := &stageOllama{reply: func(_ int, req map[string]any) (string, time.Duration) {
		prompt := req["messages"].([]any)[0].(map[string]any)["content"].(string)
		_, after, _ := strings.Cut(prompt, "It must use these tools: ")
		name := strings.TrimSuffix(strings.Split(strings.Split(after, ".")[0], ", ")[0], ".")
		call := map[string]any{"tool": name, "arguments": json.RawMessage(byName[name].examples[0]), "reason": "r"}
		b, _ := json.Marshal(map[string]any{"title": "t", "instruction": "Do it.", "calls": []any{call}, "novelty": "n", "follow_up": "f"})
		return string(b), 0
	}}
	res, err := llmFor(t, f).Synthesize(context.Background(), "domain:x/L4", tools, len(tools)*2, Executor(d, runtime.L4))
	if err != nil {
		t.Fatal(err)
	}
	if cov := Measure(tools, res.Artifacts); cov.Used != cov.Tools || cov.ValidCalls != cov.Calls {
		t.Fatalf("%+v", cov)
	}
}
