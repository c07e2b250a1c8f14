package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOllama is an HTTP server speaking Ollama's documented wire format
// (docs/api.md in the ollama module): /api/tags, and /api/chat streamed as
// NDJSON (tool calls in a done:false chunk, then an empty final chunk with
// done_reason, counts and durations) or answered as one object when the
// request says "stream": false. Each test scripts its replies.
type fakeOllama struct {
	*httptest.Server
	models []string
	script func(req chatRequest, n int) step
	mu     sync.Mutex
	reqs   []chatRequest
}

// chatRequest is /api/chat's request body as the server sees it.
type chatRequest struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Stream    *bool          `json:"stream"`
	Options   map[string]any `json:"options"`
	KeepAlive any            `json:"keep_alive"`
}

// toolMessages counts the tool results the conversation holds, and
// returns the user prompt.
func (r chatRequest) progress() (prompt string, tools int) {
	for _, m := range r.Messages {
		var msg struct{ Role, Content string }
		_ = json.Unmarshal(m, &msg)
		switch msg.Role {
		case "user":
			prompt = msg.Content
		case "tool":
			tools++
		}
	}
	return prompt, tools
}

// toolResults returns the contents of the tool messages.
func (r chatRequest) toolResults() []string {
	var out []string
	for _, m := range r.Messages {
		var msg struct{ Role, Content string }
		_ = json.Unmarshal(m, &msg)
		if msg.Role == "tool" {
			out = append(out, msg.Content)
		}
	}
	return out
}

// step is one scripted reply.
type step struct {
	status  int           // HTTP status; 0 is 200
	errBody string        // the error of a status ≥ 400; "scripted failure" if empty
	delay   time.Duration // before the first byte
	content string
	calls   []fakeCall
	// errLine sends {"error": ...} after the first chunk, under 200.
	errLine string
	// hangup closes the connection without a reply.
	hangup bool
}

// fakeCall is a tool call; args is raw JSON, so tests can send garbage.
type fakeCall struct {
	name string
	args string
}

func newFakeOllama(t *testing.T, models []string, script func(chatRequest, int) step) *fakeOllama {
	f := &fakeOllama{models: models, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		var ms []map[string]any
		for _, m := range f.models {
			ms = append(ms, map[string]any{"name": m, "model": m, "size": 1 << 30})
		}
		writeJSON(w, map[string]any{"models": ms})
	})
	mux.HandleFunc("POST /api/chat", f.chat)
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, map[string]any{
			"details":    map[string]any{"family": "fake", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"},
			"model_info": map[string]any{"general.parameter_count": 3212749888},
		})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeOllama) requests() []chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chatRequest(nil), f.reqs...)
}

// chats counts the /api/chat requests that asked the model for a reply,
// the warm-up loads left out.
func (f *fakeOllama) chats() int {
	n := 0
	for _, r := range f.requests() {
		if len(r.Messages) > 0 {
			n++
		}
	}
	return n
}

func (f *fakeOllama) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": err.Error()})
		return
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	known := false
	for _, m := range f.models {
		known = known || m == req.Model
	}
	if !known {
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return
	}
	final := map[string]any{
		"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": ""}, "done": true,
	}
	if len(req.Messages) == 0 { // a load request
		final["done_reason"] = "load"
		final["load_duration"] = 1500000000
		writeJSON(w, final)
		return
	}
	s := f.script(req, n)
	if s.hangup {
		if hj, ok := w.(http.Hijacker); ok {
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
	}
	time.Sleep(s.delay)
	if s.status >= 400 {
		msg := s.errBody
		if msg == "" {
			msg = "scripted failure"
		}
		w.WriteHeader(s.status)
		writeJSON(w, map[string]string{"error": msg})
		return
	}
	calls := make([]json.RawMessage, 0, len(s.calls))
	for i, c := range s.calls {
		calls = append(calls, json.RawMessage(fmt.Sprintf(`{"function":{"index":%d,"name":%q,"arguments":%s}}`, i, c.name, c.args)))
	}
	final["done_reason"] = "stop"
	final["total_duration"] = 200000000
	final["load_duration"] = 1000000
	final["prompt_eval_count"] = 120
	final["prompt_eval_duration"] = 50000000
	final["eval_count"] = 15
	final["eval_duration"] = 100000000
	if req.Stream != nil && !*req.Stream {
		msg := map[string]any{"role": "assistant", "content": s.content}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		final["message"] = msg
		w.Header().Set("Content-Type", "application/json")
		body, _ := json.Marshal(final)
		_, _ = w.Write(append(body, '\n'))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	chunk := func(msg map[string]any) {
		b, _ := json.Marshal(map[string]any{"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "message": msg, "done": false})
		_, _ = w.Write(append(b, '\n'))
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	if len(calls) > 0 {
		chunk(map[string]any{"role": "assistant", "content": "", "tool_calls": calls})
	}
	for _, word := range strings.SplitAfter(s.content, " ") {
		if word != "" {
			chunk(map[string]any{"role": "assistant", "content": word})
		}
	}
	if s.errLine != "" {
		b, _ := json.Marshal(map[string]string{"error": s.errLine})
		_, _ = w.Write(append(b, '\n'))
		return
	}
	b, _ := json.Marshal(final)
	_, _ = w.Write(append(b, '\n'))
}
