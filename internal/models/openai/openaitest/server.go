// Package openaitest is the double of an OpenAI-compatible endpoint every
// caller of the openai package tests against, as ollamatest is for
// Ollama: a Server speaking the Chat Completions wire format as OpenAI
// documents it and as vLLM and llama.cpp's llama-server send it, scripted
// per test. Callers reach it through the real client (package openai on
// go-openai), never around it; it links no client library.
package openaitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/models/chattest"
)

// Server is an HTTP server speaking the Chat Completions wire format:
// GET /v1/models, and POST /v1/chat/completions answered as one
// chat.completion object, or streamed as server-sent events when the
// request says "stream": true — a role chunk, reasoning_content and
// content deltas, each tool call's id and name in one chunk and its
// arguments in fragments over the next ones (by index, as vLLM sends
// them), a chunk with finish_reason, a usage chunk with no choices when
// stream_options.include_usage asks for it, and data: [DONE].
type Server struct {
	*httptest.Server
	// URL is the base URL a client is given: the server's URL and /v1.
	URL string
	// MaxModelLen, when set before the first request, is the context
	// /v1/models says the model has, as vLLM says it (8192 when 0).
	MaxModelLen int
	models      []string
	script      func(req Request, n int) Step
	reqs        chattest.Log[Request]
	mu          sync.Mutex
	lists       int
	// warmUps sends warm-ups through the script too.
	warmUps bool
}

// Request is a chat completion request as the server saw it: the model,
// messages and tools (with what chattest.Chat reads of them), and the
// Chat Completions fields.
type Request struct {
	chattest.Chat
	ToolChoice    any  `json:"tool_choice"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature *float64 `json:"temperature"`
	MaxTokens   *int     `json:"max_tokens"`
	Seed        *int     `json:"seed"`
	// Authorization is the request's Authorization header.
	Authorization string `json:"-"`
}

// message is the part of a message UnansweredCalls reads.
type message struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

func (r Request) messages() []message {
	out := make([]message, len(r.Messages))
	for i, m := range r.Messages {
		_ = json.Unmarshal(m, &out[i])
	}
	return out
}

// UnansweredCalls returns the IDs of the assistant's tool calls that no
// tool message answers, and the tool messages' IDs that answer no call:
// both empty in a conversation a real endpoint accepts.
func (r Request) UnansweredCalls() (unanswered, unknown []string) {
	called := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range r.messages() {
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
			if !called[m.ToolCallID] {
				unknown = append(unknown, m.ToolCallID)
			}
		}
	}
	for id := range called {
		if !answered[id] {
			unanswered = append(unanswered, id)
		}
	}
	return unanswered, unknown
}

// Step is one scripted reply.
type Step struct {
	Status int // HTTP status; 0 is 200
	// ErrBody is the error message of a status ≥ 400 ("scripted failure"
	// if empty), ErrType and ErrCode its type and code.
	ErrBody, ErrType, ErrCode string
	// RetryAfter is the Retry-After header of an error reply.
	RetryAfter string
	// Delay comes before the first byte, cut short when the client gives up.
	Delay     time.Duration
	Content   string
	Reasoning string
	// ReasoningKey is the field the reasoning goes in: reasoning_content
	// (vLLM, SGLang, DeepSeek) when empty, or reasoning (newer vLLM).
	ReasoningKey string
	Calls        []Call
	// ErrEvent sends an error event after the first chunk of a stream.
	ErrEvent string
	// Hangup closes the connection without a reply; HangupMidStream
	// after the first chunk of a stream.
	Hangup, HangupMidStream bool
	// Endless never ends the reply: streamed, content chunks forever;
	// whole, a content string that never closes. It stops when the client
	// hangs up.
	Endless bool
	// EchoAuth puts the request's Authorization header in the error
	// body, as some servers' debug errors quote the request they refused.
	EchoAuth bool
	// Dialect sends errors in another server's shape instead of OpenAI's
	// {"error": {…}}: "vllm" as vLLM's and SGLang's top-level error object
	// ({"object": "error", "message": …, "code": 400}), "tgi" as TGI's
	// {"error": "…", "error_type": …}, "fastapi" as FastAPI's {"detail": "…"}.
	// "ollama" sends the whole reply as Ollama's /v1 does (recorded in
	// testdata/real of the ollama double): each tool call whole in one
	// chunk, content "" beside the calls, every delta with its role, no
	// logprobs, errors typed api_error with param and code null.
	Dialect string
	// Repeat, in the ollama dialect, is a piece the model emits until
	// Ollama's token repeat limit ends the reply: RepeatLimit+1 chunks of
	// it and then nothing, neither a finish_reason nor [DONE]; not
	// streamed, one reply whose finish_reason is null.
	Repeat string
	// NoFinish streams the content and ends the body cleanly, with
	// neither a finish_reason nor [DONE]: a proxy that closed the stream.
	NoFinish bool
	// Dropped is a reply Ollama's tool parser emptied: content "", no
	// calls, finish_reason stop, and the tokens counted.
	Dropped bool
	auth    string // the request's Authorization, for EchoAuth
}

// Call is a tool call; Args is the arguments string as sent, so tests
// can send garbage.
type Call = chattest.Call

// Usage counts of every reply, so tests can check they are recorded.
const (
	PromptTokens     = 120
	CompletionTokens = 15
)

// NewServer starts a server that lists models and answers the n-th chat
// request (from 0) with script's step; it closes when the test ends.
// script may be nil when no chat request asks for a scripted reply: a
// request whose only message is "Say OK." (a warm-up) is answered "OK"
// without the script.
func NewServer(tb testing.TB, models []string, script func(req Request, n int) Step) *Server {
	f := &Server{models: models, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.lists++
		f.mu.Unlock()
		data := []map[string]any{}
		for _, m := range f.models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "vllm", "max_model_len": cmp.Or(f.MaxModelLen, 8192)})
		}
		chattest.WriteJSON(w, map[string]any{"object": "list", "data": data})
	})
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL + "/v1"
	tb.Cleanup(f.Close)
	return f
}

// Requests returns the chat requests received so far, warm-ups included.
func (f *Server) Requests() []Request { return f.reqs.All() }

// Chats counts the chat requests that asked for a scripted reply.
func (f *Server) Chats() int {
	n := 0
	for _, r := range f.Requests() {
		if !isWarmUp(r) {
			n++
		}
	}
	return n
}

// ScriptWarmUps sends warm-up requests through the script too, so that a
// test can fail the warm-up.
func (f *Server) ScriptWarmUps() {
	f.mu.Lock()
	f.warmUps = true
	f.mu.Unlock()
}

// Lists counts the GET /v1/models requests.
func (f *Server) Lists() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

func isWarmUp(r Request) bool {
	c := r.Contents("user")
	return len(r.Messages) == 1 && len(c) == 1 && c[0] == "Say OK." && len(r.Tools) == 0
}

func (f *Server) fail(w http.ResponseWriter, s Step) {
	msg := s.ErrBody
	if msg == "" {
		msg = "scripted failure"
	}
	if s.EchoAuth {
		msg += " (request headers: Authorization: " + s.auth + ")"
	}
	if s.RetryAfter != "" {
		w.Header().Set("Retry-After", s.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.Status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": s.ErrType, "param": nil, "code": s.ErrCode}}
	switch s.Dialect {
	case "ollama":
		body = map[string]any{"error": map[string]any{"message": msg, "type": "api_error", "param": nil, "code": nil}}
	case "vllm":
		body = map[string]any{"object": "error", "message": msg, "type": s.ErrType, "param": nil, "code": s.Status}
	case "tgi":
		body = map[string]any{"error": msg, "error_type": s.ErrType}
	case "fastapi":
		body = map[string]any{"detail": msg}
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (f *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.fail(w, Step{Status: http.StatusBadRequest, ErrBody: err.Error(), ErrType: "invalid_request_error"})
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	n := f.reqs.Add(req)
	f.mu.Lock()
	scriptAll := f.warmUps
	f.mu.Unlock()
	if !chattest.Known(f.models, req.Model) {
		f.fail(w, Step{Status: http.StatusNotFound, ErrBody: fmt.Sprintf("The model `%s` does not exist.", req.Model), ErrType: "NotFoundError"})
		return
	}
	s := Step{Content: "OK"}
	if scriptAll || !isWarmUp(req) {
		s = f.script(req, n)
	}
	if s.Hangup {
		hangup(w)
		return
	}
	if !chattest.Wait(r, s.Delay) {
		return
	}
	if s.Status >= 400 {
		s.auth = req.Authorization
		f.fail(w, s)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", n)
	finish := "stop"
	if len(s.Calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": PromptTokens, "completion_tokens": CompletionTokens, "total_tokens": PromptTokens + CompletionTokens}
	if s.Endless {
		endless(w, r, req.Stream, id, req.Model)
		return
	}
	if s.Dropped {
		s.Content, s.Calls, finish = "", nil, "stop"
	}
	if s.Dialect == "ollama" {
		ollamaReply(w, req, s, id, finish, usage, n)
		return
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": s.Content}
		if s.Reasoning != "" {
			msg[s.reasoningKey()] = s.Reasoning
		}
		if len(s.Calls) > 0 {
			var calls []map[string]any
			for i, c := range s.Calls {
				calls = append(calls, map[string]any{"id": callID(n, i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = calls
			if s.Content == "" {
				msg["content"] = nil
			}
		}
		chattest.WriteJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	created := time.Now().Unix()
	event := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) {
		event(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if s.HangupMidStream {
		hangup(w)
		return
	}
	if s.ErrEvent != "" {
		event(map[string]any{"error": map[string]any{"message": s.ErrEvent, "type": "InternalServerError", "code": 500}})
		return
	}
	for _, part := range pieces(s.Reasoning, 3) {
		chunk(map[string]any{s.reasoningKey(): part}, nil)
	}
	for _, word := range chattest.Words(s.Content) {
		chunk(map[string]any{"content": word}, nil)
	}
	if s.NoFinish {
		return
	}
	for i, c := range s.Calls {
		chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": callID(n, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, part := range pieces(c.Args, 3) {
			chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": part}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		event(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// RepeatLimit is Ollama's: it ends a reply whose model emitted the same
// piece more than this many times in a row.
const RepeatLimit = 30

// ollamaReply answers as Ollama's /v1 does.
func ollamaReply(w http.ResponseWriter, req Request, s Step, id, finish string, usage map[string]any, n int) {
	created := time.Now().Unix()
	var calls []map[string]any
	for i, c := range s.Calls {
		calls = append(calls, map[string]any{"id": callID(n, i), "index": i, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
	}
	var fin any = finish
	if s.Repeat != "" {
		s.Content, fin = strings.Repeat(s.Repeat, RepeatLimit+1), nil
	}
	head := map[string]any{"id": id, "created": created, "model": req.Model, "system_fingerprint": "fp_ollama"}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": s.Content}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		head["object"], head["usage"] = "chat.completion", usage
		head["choices"] = []map[string]any{{"index": 0, "message": msg, "finish_reason": fin}}
		chattest.WriteJSON(w, head)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	head["object"] = "chat.completion.chunk"
	chunk := func(delta map[string]any, finish any) {
		delta["role"] = "assistant"
		head["choices"] = []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}
		b, _ := json.Marshal(head)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if s.Repeat != "" {
		for range RepeatLimit + 1 {
			chunk(map[string]any{"content": s.Repeat}, nil)
		}
		return
	}
	for _, word := range chattest.Words(s.Content) {
		chunk(map[string]any{"content": word}, nil)
	}
	for _, c := range calls {
		chunk(map[string]any{"content": "", "tool_calls": []map[string]any{c}}, nil)
	}
	chunk(map[string]any{"content": ""}, finish)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		delete(head, "choices")
		head["choices"], head["usage"] = []any{}, usage
		b, _ := json.Marshal(head)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s Step) reasoningKey() string {
	if s.ReasoningKey == "" {
		return "reasoning_content"
	}
	return s.ReasoningKey
}

// endless writes a reply that never ends until the client hangs up.
func endless(w http.ResponseWriter, r *http.Request, stream bool, id, model string) {
	head, piece := `{"id":"`+id+`","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`, strings.Repeat(chattest.EndlessWords, 200)
	w.Header().Set("Content-Type", "application/json")
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		head = ""
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": chattest.EndlessWords}, "logprobs": nil, "finish_reason": nil}}})
		piece = strings.Repeat("data: "+string(b)+"\n\n", 20)
	}
	chattest.Endless(w, r, head, piece)
}

// callID is the id of the i-th tool call of the n-th request, unique in a
// conversation as vLLM's are.
func callID(n, i int) string { return fmt.Sprintf("chatcmpl-tool-%d-%d", n, i) }

// pieces splits s into at most n fragments of about equal length, as a
// tokenizer's deltas split arguments anywhere, mid-key included.
func pieces(s string, n int) []string {
	r := []rune(s) // never inside a UTF-8 sequence
	if len(r) == 0 {
		return nil
	}
	size := max(1, (len(r)+n-1)/n)
	var out []string
	for len(r) > size {
		out = append(out, string(r[:size]))
		r = r[size:]
	}
	return append(out, string(r))
}

// hangup cuts the connection, after what was written so far.
func hangup(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	chattest.Hangup(w)
}
