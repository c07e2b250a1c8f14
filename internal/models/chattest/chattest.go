// Package chattest holds what the chat model doubles, ollamatest and
// openaitest, share: the part of a chat request both wire formats hold
// alike, a scripted tool call, and the plumbing of a server that scripts
// its replies. Each double keeps its own wire format.
package chattest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Chat is what a chat request holds in both wire formats: the model, the
// messages as sent, and the tools offered.
type Chat struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []Tool            `json:"tools"`
}

// Tool is a function tool as a request offers it.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Contents returns the contents of the messages of a role, in order.
func (c Chat) Contents(role string) []string {
	var out []string
	for _, m := range c.Messages {
		var msg struct{ Role, Content string }
		_ = json.Unmarshal(m, &msg)
		if msg.Role == role {
			out = append(out, msg.Content)
		}
	}
	return out
}

// Progress returns the last user prompt and the number of tool results
// the conversation holds.
func (c Chat) Progress() (prompt string, tools int) {
	users := c.Contents("user")
	if len(users) > 0 {
		prompt = users[len(users)-1]
	}
	return prompt, len(c.Contents("tool"))
}

// ToolResults returns the contents of the tool messages.
func (c Chat) ToolResults() []string { return c.Contents("tool") }

// ToolNames returns the names of the tools offered, in order.
func (c Chat) ToolNames() []string {
	out := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		out[i] = t.Function.Name
	}
	return out
}

// Call is a scripted tool call; Args is the arguments as sent, raw, so
// tests can send garbage.
type Call struct {
	Name string
	Args string
}

// Log keeps the requests a double received, in order, for any number of
// handlers at once.
type Log[R any] struct {
	mu   sync.Mutex
	reqs []R
}

// Add keeps a request and returns its number, from 0.
func (l *Log[R]) Add(r R) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
	return len(l.reqs) - 1
}

// All returns the requests kept so far.
func (l *Log[R]) All() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]R(nil), l.reqs...)
}

// WriteJSON answers v as JSON.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Known reports whether a double serves a model.
func Known(models []string, model string) bool {
	for _, m := range models {
		if m == model {
			return true
		}
	}
	return false
}

// Wait waits a step's delay before the first byte, and reports false
// when the client gave up first.
func Wait(r *http.Request, delay time.Duration) bool {
	select {
	case <-time.After(delay):
		return true
	case <-r.Context().Done():
		return false
	}
}

// Hangup closes the connection without another byte.
func Hangup(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// Words splits content into the chunks a stream sends it in: a word and
// the space after it each.
func Words(content string) []string {
	var out []string
	for _, word := range strings.SplitAfter(content, " ") {
		if word != "" {
			out = append(out, word)
		}
	}
	return out
}

// Endless writes head, then piece over and over until the client hangs
// up: a reply that never ends.
func Endless(w io.Writer, r *http.Request, head, piece string) {
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	for r.Context().Err() == nil {
		if _, err := io.WriteString(w, piece); err != nil {
			return
		}
	}
}

// EndlessWords are what an endless reply says, over and over.
const EndlessWords = "all work and no play "
