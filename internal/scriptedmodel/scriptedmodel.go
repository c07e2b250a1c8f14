// Package scriptedmodel is a model server that plays a script: the agent
// CLIs granite benchmarks (Claude Code, Codex CLI, Gemini CLI, qwen-code)
// run against it as against their vendor's API, and it answers each
// request with the next tool call that solves the task, under the name the
// CLI gave that tool, then with the task's answer. It speaks each CLI's
// own wire format, streamed as the CLI asks: Anthropic Messages, OpenAI
// Responses and Chat Completions, and the Gemini API (a file each). It
// keeps what every request offered the model (the tools, each
// with its description and input schema), for a test to check that the
// CLI passed granite's tools on whole.
//
// The script is picked per request by the task's prompt, which the
// request's user text holds, and by the tools offered, among which the
// script's calls must all be (the same prompt is asked at every level,
// over other tools). The next call is the one after those whose results
// the conversation already holds, so the server keeps no state between
// requests. A request no script fits (a CLI's own side requests: a title,
// a summary, a quota check) gets a short text reply.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Script is what the model does for one task at one level.
type Script struct {
	// Prompt is text the task's user message holds.
	Prompt string
	// Calls are the calls that solve it, by the server's tool names.
	Calls []Call
	// Answer is the final reply once every call has its result.
	Answer string
}

// Call is one tool call of a script.
type Call struct {
	Tool      string
	Arguments json.RawMessage
}

// Tool is a tool a request offered the model, as the CLI named and
// described it.
type Tool struct {
	Name        string
	Description string
	// Schema is its input schema as sent.
	Schema json.RawMessage
}

// Request is what the server kept of one request.
type Request struct {
	// API names the wire format: anthropic, responses, chat or gemini.
	API    string
	Model  string
	Stream bool
	Tools  []Tool
	// Script is the index of the script that answered it, -1 for none;
	// Step the call it answered with (len(Calls) for the answer).
	Script, Step int
	// User is the start of the user's text (at most 300 bytes), to tell
	// which request a CLI sent when none fits a script.
	User string
}

// Server serves scripts; its zero value is not usable: use New.
type Server struct {
	scripts []Script
	// models are the names an Ollama model list gives (/api/tags), for
	// a CLI that checks its model is there before it starts (Codex's
	// --oss provider pulls one that is not).
	models []string
	mu     sync.Mutex
	log    []Request
}

// New returns a server of the scripts, listing models as Ollama would.
func New(scripts []Script, models ...string) *Server {
	return &Server{scripts: scripts, models: models}
}

// Requests returns what every request so far offered and got.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// turn is a request reduced to what the script needs: the user's text,
// the tools offered, and how many tool results the conversation holds.
type turn struct {
	api, model string
	stream     bool
	userText   string
	tools      []Tool
	results    int
}

// reply is the model's next message: one tool call, or text.
type reply struct {
	// Tool is the tool's name as the CLI offered it ("" for text).
	Tool      string
	Arguments json.RawMessage
	Text      string
	// ID identifies the call, unique within a conversation.
	ID string
}

// next picks the script and its next step for a turn.
func (s *Server) next(t turn) reply {
	rec := Request{API: t.api, Model: t.model, Stream: t.stream, Tools: t.tools, Script: -1, User: t.userText[:min(len(t.userText), 300)]}
	r := reply{Text: "OK."}
	for i, sc := range s.scripts {
		names, ok := resolve(sc.Calls, t.tools)
		if !ok || !strings.Contains(t.userText, sc.Prompt) {
			continue
		}
		rec.Script, rec.Step = i, t.results
		if t.results < len(sc.Calls) {
			r = reply{Tool: names[t.results], Arguments: sc.Calls[t.results].Arguments, ID: fmt.Sprintf("call_%d", t.results+1)}
		} else {
			r = reply{Text: sc.Answer}
		}
		break
	}
	s.mu.Lock()
	s.log = append(s.log, rec)
	s.mu.Unlock()
	return r
}

// resolve names each call's tool as the request offered it (see
// Offered).
func resolve(calls []Call, tools []Tool) ([]string, bool) {
	out := make([]string, len(calls))
	for i, c := range calls {
		k := Offered(c.Tool, tools)
		if k < 0 {
			return nil, false
		}
		out[i] = tools[k].Name
	}
	return out, true
}

// Offered is the index among tools of the server's tool name as a CLI
// offered it, -1 for none: the same name, else the name under a prefix
// the CLI added, joined by "__" (Claude Code's mcp__granite__NAME) or by
// "_" (Gemini CLI's mcp_granite_NAME), the shortest such when several
// are.
func Offered(name string, tools []Tool) int {
	best, rank := -1, 0
	for i, t := range tools {
		r := 0
		switch {
		case t.Name == name:
			r = 3
		case strings.HasSuffix(t.Name, "__"+name):
			r = 2
		case strings.HasSuffix(t.Name, "_"+name):
			r = 1
		}
		if r > rank || r == rank && r > 0 && len(t.Name) < len(tools[best].Name) {
			best, rank = i, r
		}
	}
	return best
}

// ServeHTTP routes by path: …/messages (Anthropic), …/responses (OpenAI
// Responses), …/chat/completions, and …/models/NAME:generateContent or
// :streamGenerateContent (Gemini).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		switch r.URL.Path {
		case "/api/version":
			writeJSON(w, map[string]string{"version": "0.13.4"})
			return
		case "/api/tags":
			var list []any
			for _, m := range s.models {
				list = append(list, map[string]any{"name": m, "model": m, "size": 1, "digest": "scripted"})
			}
			writeJSON(w, map[string]any{"models": list})
			return
		}
		if strings.HasSuffix(r.URL.Path, "/models") {
			// Some CLIs list the models before they start.
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		// Codex tries the Responses API over a WebSocket first; a
		// server without one says so, and it posts instead.
		http.Error(w, "scriptedmodel: POST only", http.StatusMethodNotAllowed)
		return
	}
	var body json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&body); err != nil {
		http.Error(w, "bad JSON body: "+err.Error(), http.StatusBadRequest)
		return
	}
	p := r.URL.Path
	var err error
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"input_tokens":1000}`))
	case strings.HasSuffix(p, "/messages"):
		err = s.anthropic(w, body)
	case strings.HasSuffix(p, "/responses"):
		err = s.responses(w, body)
	case strings.HasSuffix(p, "/chat/completions"):
		err = s.chat(w, body)
	case strings.Contains(p, ":generateContent"), strings.Contains(p, ":streamGenerateContent"):
		model, _, _ := strings.Cut(p[strings.LastIndex(p, "/")+1:], ":")
		err = s.gemini(w, body, model, strings.Contains(p, ":stream"))
	case strings.Contains(p, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"totalTokens":1000}`))
	default:
		http.Error(w, "scriptedmodel: no API at "+p, http.StatusNotFound)
	}
	if err != nil {
		http.Error(w, "scriptedmodel: "+err.Error(), http.StatusBadRequest)
	}
}

// sse writes one server-sent event (an unnamed one when event is "").
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// startSSE sets an event stream's headers.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// writeJSON answers with a JSON value.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// text joins what a content value holds as text: a string, or the text
// of an array of parts.
func text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(v, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// args is a call's arguments as an object ({} for none).
func args(a json.RawMessage) json.RawMessage {
	if len(a) == 0 || string(a) == "null" {
		return json.RawMessage(`{}`)
	}
	return a
}
