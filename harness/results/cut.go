package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Bounds on what a record keeps of what a subject sent. A subject is
// untrusted: 400 calls with 1 MB arguments once made one 800 MB journal
// line, and reading it back took gigabytes. No gold value, tool name or
// answer fact comes near these sizes, so a value cut at them was never
// a right one.
const (
	// CutBytes bounds each argument value (its JSON text), tool name,
	// tool result and message text a record keeps.
	CutBytes = 8 << 10
	// MaxArgumentsBytes bounds a call's arguments as a whole once each
	// value is cut: past it, the arguments are kept as one cut value
	// under CutKey.
	MaxArgumentsBytes = 8 * CutBytes
	// PreviewBytes bounds the transcript's copies of what calls hold (a
	// tool message's result, an assistant message's tool-call arguments):
	// the call keeps them at CutBytes; the message, enough to read.
	PreviewBytes = 1 << 10
	// CutKey holds the cut text of arguments too long as a whole, or not
	// an object.
	CutKey = "granite_cut"
)

// CutArguments bounds a call's arguments the way a record keeps them:
// each top-level value whose JSON text is over CutBytes becomes a string
// of its beginning and a marker with its length and a hash of it, and
// arguments still over MaxArgumentsBytes (or over CutBytes and not an
// object) become {"granite_cut": <the same for all of them>}.
//
// The hash keeps equal values equal and different ones different, so
// that repeated calls are still counted; the scorer reads arguments
// through CutArguments too, which makes a verdict the same on the
// arguments as sent and as recorded. CutArguments of its own output
// returns it unchanged; arguments within the bounds are returned as they
// are, without a copy.
func CutArguments(raw json.RawMessage) json.RawMessage {
	return cutArguments(raw, CutBytes, MaxArgumentsBytes)
}

// cutArguments is CutArguments with each value bounded at n bytes and the
// whole at total.
func cutArguments(raw json.RawMessage, n, total int) json.RawMessage {
	if len(raw) <= n {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return wholeCut(raw, n)
	}
	changed := false
	for k, v := range obj {
		if len(v) > n {
			obj[k] = cutValue(v, n)
			changed = true
		}
	}
	if !changed {
		if len(raw) <= total {
			return raw
		}
		return wholeCut(raw, n)
	}
	out, err := json.Marshal(obj)
	if err != nil || len(out) > total {
		return wholeCut(out, n)
	}
	return out
}

// wholeCut keeps arguments as an object holding one cut value.
func wholeCut(raw json.RawMessage, n int) json.RawMessage {
	out, _ := json.Marshal(map[string]json.RawMessage{CutKey: cutValue(raw, n)})
	return out
}

// cutValue turns a JSON value over n bytes into a JSON string of at most
// n bytes: the value's beginning (a string's text, another value's
// canonical JSON) and a marker saying its length and hash. Text that is
// not JSON is cut as it is.
func cutValue(raw json.RawMessage, n int) json.RawMessage {
	text := []byte(raw)
	var v any
	if json.Unmarshal(raw, &v) == nil {
		// Canonical, as the scorer compares values: the same value
		// written in another key order or escaping cuts the same.
		if s, ok := v.(string); ok {
			text = []byte(s)
		} else if b, err := json.Marshal(v); err == nil {
			text = b
		}
	}
	sum := sha256.Sum256(text)
	return cutString(text, fmt.Sprintf("…[cut by granite: %d bytes, sha256 %s]", len(raw), hex.EncodeToString(sum[:8])), n)
}

// cutString is the JSON string of text's beginning and marker, at most
// max bytes long however the text escapes.
func cutString(text []byte, marker string, max int) json.RawMessage {
	n := max - len(marker) - 2
	for {
		out, _ := json.Marshal(string(prefix(text, n)) + marker)
		if len(out) <= max || n == 0 {
			return out
		}
		n = n * 3 / 4
	}
}

// prefix is text's first n bytes or fewer, ending on a whole character.
func prefix(text []byte, n int) []byte {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// CutText bounds a text a record keeps (a result, a message): over
// CutBytes, its beginning and a marker with its length. ok is false when
// the text is kept whole.
func CutText(s string) (cut string, ok bool) {
	return cutText(s, CutBytes)
}

func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	marker := fmt.Sprintf("…[cut by granite: %d bytes]", len(s))
	return string(prefix([]byte(s), n-len(marker))) + marker, true
}

// CutName bounds a tool name as the record keeps it: over CutBytes, like
// an argument value, with a hash that keeps different names apart.
func CutName(name string) string {
	if len(name) <= CutBytes {
		return name
	}
	raw, _ := json.Marshal(name)
	var s string
	_ = json.Unmarshal(cutValue(raw, CutBytes), &s)
	return s
}

// Cut bounds what the call keeps: its tool name, arguments (see
// CutArguments) and result, each at CutBytes. ArgumentsBytes and
// ResultBytes keep the lengths of what was cut.
func (c *Call) Cut() {
	c.Tool = CutName(c.Tool)
	if args := CutArguments(c.Arguments); len(args) != len(c.Arguments) || !bytes.Equal(args, c.Arguments) {
		if c.ArgumentsBytes == 0 {
			c.ArgumentsBytes = len(c.Arguments)
		}
		c.Arguments = args
	}
	if text, ok := CutText(c.Result); ok {
		c.ResultBytes = len(c.Result)
		c.Result = text
	}
}

// Bounded returns the record as the journal keeps it: each call cut (see
// Call.Cut), each message's text cut at CutBytes, and the transcript's
// copies of what calls hold (tool results, tool-call arguments) cut to a
// preview of PreviewBytes: the call is where the kept text is, and a
// reply of 40 calls does not keep it twice. FinalAnswer is kept whole: it is scored, and its reply was bounded when
// it was read. A record already within the bounds is returned itself; else
// a copy, leaving r as it was.
func (r *Record) Bounded() *Record {
	if r.withinBounds() {
		return r
	}
	out := *r
	out.Calls = make([]Call, len(r.Calls))
	for i, c := range r.Calls {
		c.Cut()
		out.Calls[i] = c
	}
	out.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.preview()
		out.Messages[i] = m
	}
	return &out
}

// preview bounds a message as the journal keeps it (see Bounded).
func (m *Message) preview() {
	n := CutBytes
	if m.Role == "tool" {
		n = PreviewBytes
	}
	m.Content, _ = cutText(m.Content, n)
	m.Thinking, _ = CutText(m.Thinking)
	if m.ToolCalls == nil {
		return
	}
	calls := make([]MessageCall, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		calls[i] = MessageCall{Name: CutName(tc.Name), Arguments: cutArguments(tc.Arguments, PreviewBytes, PreviewBytes)}
	}
	m.ToolCalls = calls
}

// CutToolCalls bounds the names and arguments of a message's tool calls
// as Call.Cut bounds a call's, leaving its text whole (a reply's text may
// be the final answer, which is scored).
func (m *Message) CutToolCalls() {
	if m.ToolCalls == nil {
		return
	}
	calls := make([]MessageCall, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		calls[i] = MessageCall{Name: CutName(tc.Name), Arguments: CutArguments(tc.Arguments)}
	}
	m.ToolCalls = calls
}

func (r *Record) withinBounds() bool {
	for _, c := range r.Calls {
		if len(c.Tool) > CutBytes || len(c.Arguments) > CutBytes || len(c.Result) > CutBytes {
			return false
		}
	}
	for _, m := range r.Messages {
		if len(m.Content) > CutBytes || len(m.Thinking) > CutBytes || m.Role == "tool" && len(m.Content) > PreviewBytes {
			return false
		}
		for _, tc := range m.ToolCalls {
			if len(tc.Name) > CutBytes || len(tc.Arguments) > PreviewBytes {
				return false
			}
		}
	}
	return true
}
