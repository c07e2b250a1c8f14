// Package ollamatest is the Ollama double every caller of the ollama
// package tests against, as net/http/httptest is for HTTP: a Server
// speaking Ollama's documented wire format, scripted per test. Callers
// reach it through the real ollama/api client, never around it.
package ollamatest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/models/chattest"
)

// Server is an HTTP server speaking Ollama's wire format as the real
// server sends it (docs/api.md in the ollama module, and server/routes.go
// where the two differ): /api/tags; /api/show, 404 for a model it lacks;
// and /api/chat streamed as NDJSON (a done:false chunk per tool call, each
// call with its "call_…" id and index, content chunks, then an empty final
// chunk with done_reason, counts and durations) or answered as one object
// when the request says "stream": false. A chat request without messages
// loads the model, as Ollama's does, and its reply carries no durations.
// The prompt's token count grows with the request (about four bytes a
// token); past NumCtx the prompt is cut to it silently, or refused with
// Ollama's 400 when the request says "truncate": false. Each test scripts
// its replies.
type Server struct {
	*httptest.Server
	// NumCtx, when set before the first request, is the model's context
	// in tokens.
	NumCtx int
	// FailShows, when set before the first request, is how many
	// /api/show requests answer 503 with an empty body first.
	FailShows int
	shows     chattest.Log[string]
	models    []string
	script    func(req Request, n int) Step
	reqs      chattest.Log[Request]
}

// Request is /api/chat's request body as the server sees it: the model,
// messages and tools (with what chattest.Chat reads of them), and
// Ollama's own fields.
type Request struct {
	chattest.Chat
	Stream    *bool           `json:"stream"`
	Format    json.RawMessage `json:"format"`
	Options   map[string]any  `json:"options"`
	KeepAlive any             `json:"keep_alive"`
	Truncate  *bool           `json:"truncate"`
	// size is the request body's length in bytes.
	size int
}

// Step is one scripted reply.
type Step struct {
	Status  int           // HTTP status; 0 is 200
	ErrBody string        // the error of a status ≥ 400; "scripted failure" if empty
	Delay   time.Duration // before the first byte, cut short when the client gives up
	Content string
	Calls   []Call
	// ErrLine sends {"error": ...} after the first chunk, under 200.
	ErrLine string
	// Hangup closes the connection without a reply; CutShort streams the
	// reply's chunks, then ends the body without the final done chunk;
	// Die streams them, then drops the connection, as a server that went
	// away mid-reply.
	Hangup, CutShort, Die bool
	// Stall streams the chunks, then half of the next line, then waits
	// until the client gives up: a deadline that lands mid-line.
	Stall bool
	// EmptyBody sends a status ≥ 400 with no body at all.
	EmptyBody bool
	// Endless never ends the reply: streamed, content chunks forever;
	// not streamed, one line that never closes. It stops when the client
	// hangs up.
	Endless bool
	// Repeat is a piece the model emits over and over until Ollama's
	// token repeat limit stops it (llm/server.go): streamed, the piece
	// RepeatLimit+1 times and no final chunk; not streamed, one reply
	// that says done: false.
	Repeat string
	// Dropped is a reply Ollama's tool parser emptied: tokens generated,
	// no content, no calls, done_reason stop.
	Dropped bool
	// FormatRejected answers a request with a format as Ollama answers a
	// JSON Schema llama.cpp cannot turn into a grammar: a 500.
	FormatRejected bool
	// DoneReason is the final chunk's; "stop" when empty ("length" when
	// num_predict ended the reply).
	DoneReason string
}

// RepeatLimit is Ollama's: it ends a reply whose model emitted the same
// piece more than this many times in a row.
const RepeatLimit = 30

// Call is a tool call; Args is raw JSON, so tests can send garbage.
type Call = chattest.Call

// NewServer starts a server that has models and answers the n-th chat
// request (from 0, loads included) with script's step; it closes when
// the test ends. script may be nil when no chat asks the model for a
// reply (host checks, warm-ups, /api/show).
func NewServer(tb testing.TB, models []string, script func(req Request, n int) Step) *Server {
	f := &Server{models: models, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		var ms []map[string]any
		for _, m := range f.models {
			ms = append(ms, map[string]any{"name": m, "model": m, "size": 1 << 30})
		}
		chattest.WriteJSON(w, map[string]any{"models": ms})
	})
	mux.HandleFunc("POST /api/chat", f.chat)
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if f.shows.Add(req.Model) < f.FailShows {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if !chattest.Known(f.models, req.Model) {
			w.WriteHeader(http.StatusNotFound)
			chattest.WriteJSON(w, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
			return
		}
		chattest.WriteJSON(w, map[string]any{
			"details":    map[string]any{"family": "fake", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"},
			"model_info": map[string]any{"general.parameter_count": 3212749888},
		})
	})
	f.Server = httptest.NewServer(mux)
	tb.Cleanup(f.Close)
	return f
}

// Requests returns the /api/chat requests received so far.
func (f *Server) Requests() []Request { return f.reqs.All() }

// Chats counts the /api/chat requests that asked the model for a reply,
// the warm-up loads left out.
func (f *Server) Chats() int {
	n := 0
	for _, r := range f.Requests() {
		if len(r.Messages) > 0 {
			n++
		}
	}
	return n
}

func (f *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req Request
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		chattest.WriteJSON(w, map[string]string{"error": err.Error()})
		return
	}
	req.size = len(body)
	n := f.reqs.Add(req)
	if !chattest.Known(f.models, req.Model) {
		w.WriteHeader(http.StatusNotFound)
		chattest.WriteJSON(w, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return
	}
	final := map[string]any{
		"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": ""}, "done": true,
	}
	if len(req.Messages) == 0 { // a load request
		final["done_reason"] = "load"
		chattest.WriteJSON(w, final)
		return
	}
	prompt := req.size / 4
	if f.NumCtx > 0 && prompt > f.NumCtx {
		if req.Truncate != nil && !*req.Truncate {
			w.WriteHeader(http.StatusBadRequest)
			chattest.WriteJSON(w, map[string]string{"error": "the input length exceeds the context length"})
			return
		}
		prompt = f.NumCtx // cut silently, as Ollama does
	}
	if msg, bad := badFormat(req.Format); bad {
		w.WriteHeader(http.StatusInternalServerError)
		chattest.WriteJSON(w, map[string]string{"error": msg})
		return
	}
	s := f.script(req, n)
	if s.FormatRejected && len(req.Format) > 0 {
		w.WriteHeader(http.StatusInternalServerError)
		chattest.WriteJSON(w, map[string]string{"error": "invalid JSON schema in format"})
		return
	}
	if s.Hangup {
		chattest.Hangup(w)
		return
	}
	if !chattest.Wait(r, s.Delay) {
		return
	}
	if s.Status >= 400 && s.EmptyBody {
		w.WriteHeader(s.Status)
		return
	}
	if s.Status >= 400 {
		msg := s.ErrBody
		if msg == "" {
			msg = "scripted failure"
		}
		w.WriteHeader(s.Status)
		chattest.WriteJSON(w, map[string]string{"error": msg})
		return
	}
	calls := make([]json.RawMessage, 0, len(s.Calls))
	for i, c := range s.Calls {
		calls = append(calls, json.RawMessage(fmt.Sprintf(`{"id":"call_%08d","function":{"index":%d,"name":%q,"arguments":%s}}`, n*100+i, i, c.Name, c.Args)))
	}
	final["done_reason"] = cmp.Or(s.DoneReason, "stop")
	final["total_duration"] = 200000000
	final["load_duration"] = 1000000
	final["prompt_eval_count"] = prompt
	final["prompt_eval_duration"] = 50000000
	final["eval_count"] = 15
	final["eval_duration"] = 100000000
	if s.Endless {
		endless(w, r, req.Stream == nil || *req.Stream, req.Model)
		return
	}
	if s.Dropped {
		s.Content, calls = "", nil
	}
	stream := req.Stream == nil || *req.Stream
	if s.Repeat != "" {
		repeat(w, stream, req.Model, s.Repeat)
		return
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": s.Content}
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
	for _, c := range calls {
		chunk(map[string]any{"role": "assistant", "content": "", "tool_calls": []json.RawMessage{c}})
	}
	for _, word := range chattest.Words(s.Content) {
		chunk(map[string]any{"role": "assistant", "content": word})
	}
	if s.ErrLine != "" {
		b, _ := json.Marshal(map[string]string{"error": s.ErrLine})
		_, _ = w.Write(append(b, '\n'))
		return
	}
	if s.Die {
		chattest.Hangup(w)
		return
	}
	if s.Stall {
		_, _ = io.WriteString(w, `{"model":"`+req.Model+`","message":{"role":"assis`)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		<-r.Context().Done()
		return
	}
	if s.CutShort {
		return
	}
	b, _ := json.Marshal(final)
	_, _ = w.Write(append(b, '\n'))
}

// badFormat is Ollama's check of a request's format (llm/server.go): null,
// "" and "json" are accepted, and any JSON object is tried as a schema;
// anything else is refused, as a 500.
func badFormat(format json.RawMessage) (string, bool) {
	switch f := strings.TrimSpace(string(format)); {
	case f == "" || f == "null" || f == `""` || f == `"json"` || strings.HasPrefix(f, "{"):
		return "", false
	default:
		return fmt.Sprintf("invalid format: %q; expected \"json\" or a valid JSON Schema object", f), true
	}
}

// repeat writes a reply Ollama ended at its token repeat limit: the first
// piece and RepeatLimit repeats of it, then nothing more, streamed; one
// reply with done: false, not streamed.
func repeat(w http.ResponseWriter, stream bool, model, piece string) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		chattest.WriteJSON(w, map[string]any{"model": model, "created_at": now, "done": false,
			"message": map[string]any{"role": "assistant", "content": strings.Repeat(piece, RepeatLimit+1)}})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	for range RepeatLimit + 1 {
		b, _ := json.Marshal(map[string]any{"model": model, "created_at": now, "message": map[string]any{"role": "assistant", "content": piece}, "done": false})
		_, _ = w.Write(append(b, '\n'))
	}
}

// endless writes a reply that never ends until the client hangs up.
func endless(w http.ResponseWriter, r *http.Request, stream bool, model string) {
	head, piece := `{"model":"`+model+`","message":{"role":"assistant","content":"`, strings.Repeat(chattest.EndlessWords, 200)
	w.Header().Set("Content-Type", "application/json")
	if stream {
		w.Header().Set("Content-Type", "application/x-ndjson")
		b, _ := json.Marshal(map[string]any{"model": model, "created_at": "2025-01-01T00:00:00Z",
			"message": map[string]any{"role": "assistant", "content": chattest.EndlessWords}, "done": false})
		head, piece = "", strings.Repeat(string(b)+"\n", 20)
	}
	chattest.Endless(w, r, head, piece)
}
