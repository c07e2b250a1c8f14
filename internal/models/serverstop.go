package models

import (
	"errors"
	"fmt"
	"strings"
)

// Replies a model server ended or emptied itself, met on Ollama's native
// API and on its /v1 alike: each is the model's doing and would replay
// identically if asked again, so the clients return them at once.

// RepeatLimit is Ollama's token repeat limit (llm/server.go in the ollama module): a reply
// whose model emitted the same token more than this many times in a row
// is ended by the server, without its final chunk.
const RepeatLimit = 30

// RepeatLimitError is a reply Ollama ended because the model repeated one
// token more than RepeatLimit times: the stream stops without its final
// chunk (on /api/chat no done chunk, or done: false not streamed; on /v1
// neither a finish_reason nor [DONE]). Greedy decoding repeats it exactly
// when asked again.
type RepeatLimitError struct {
	// Token is the repeated piece, when the stream showed it.
	Token string
	// Chunks is how many chunks came before the server stopped.
	Chunks int
}

func (e *RepeatLimitError) Error() string {
	what := "the model repeated one token"
	if e.Token != "" {
		what = fmt.Sprintf("the model repeated %q", e.Token)
	}
	return fmt.Sprintf("Ollama ended the reply after %d chunks without its final chunk: %s more than %d times in a row (Ollama's token repeat limit)", e.Chunks, what, RepeatLimit)
}

// IsRepeatLimit reports whether err is or wraps a *RepeatLimitError.
func IsRepeatLimit(err error) bool {
	var re *RepeatLimitError
	return errors.As(err, &re)
}

// DroppedCallError is a reply the server emptied: the model generated
// tokens, and Ollama returned neither text nor a tool call. Ollama's
// template-driven tool parser (the tools package) holds back text that
// starts like a tool call and drops it when it is no call it can parse
// or names no tool of the request, so the model's attempt never reaches
// the client; counting it as an answer with no calls would hide it.
type DroppedCallError struct{ Tokens int }

func (e *DroppedCallError) Error() string {
	return fmt.Sprintf("the model generated %d tokens and Ollama returned neither text nor a tool call: its tool parser dropped a call it could not parse or that names no tool of the request", e.Tokens)
}

// IsDroppedCall reports whether err is or wraps a *DroppedCallError.
func IsDroppedCall(err error) bool {
	var de *DroppedCallError
	return errors.As(err, &de)
}

// MaxCuts bounds the attempts whose reply body ended cleanly before its
// final chunk (a done chunk, a finish_reason) without a repeat Ollama
// stops at: a proxy's cut is worth asking again, a server that ends every
// reply so is not.
const MaxCuts = 3

// Repeats follows a stream's content pieces as Ollama's repeat limit
// does: how many in a row were the same, spaces trimmed.
type Repeats struct {
	// Last is the last piece, trimmed; Run how many pieces in a row
	// repeated it after its first; Chunks how many pieces came.
	Last        string
	Run, Chunks int
}

// Add counts one piece of content; empty pieces (a tool-call chunk's)
// are not pieces.
func (p *Repeats) Add(content string) {
	if content == "" {
		return
	}
	p.Chunks++
	if t := strings.TrimSpace(content); t == p.Last && p.Chunks > 1 {
		p.Run++
	} else {
		p.Last, p.Run = t, 0
	}
}

// AtLimit reports whether the pieces ended in a run Ollama stops.
func (p *Repeats) AtLimit() bool { return p.Run >= RepeatLimit }

// parserFailures are the words of Ollama's reports that it could not
// parse the tool call a model wrote: the template-driven parser's "error
// parsing tool call: raw='…', err=…" (ollama/ollama issues 12884, 12064,
// 11704) and the built-in parsers' errors (model/parsers: qwen3's
// "failed to parse JSON: …", glm's XML, lfm2's and olmo3's call syntax,
// ministral's unknown tool). Ollama sends each as an HTTP 500 when
// nothing was streamed yet or the request is not streamed, and as an
// error line of a 200 stream once chunks went out; nothing but the text
// tells it from a crashed runner, which is worth a retry. On /v1 the same
// words come as the message of an OpenAI error. A test checks the list
// against every error the pinned module's parsers can return.
var parserFailures = []string{
	"error parsing tool call",
	"failed to parse json",
	"failed to parse xml",
	"failed to parse function call",
	"failed to parse arguments",
	"failed to parse value for",
	"empty function name",
	"mismatched arg_key and arg_value",
	"invalid tool call",
	"no tool call",
	"invalid argument",
	"unterminated string",
	"invalid function call format",
	"invalid object entry",
	"invalid format",
}

// ParserFailure reports whether an error message of Ollama is its report
// that it could not parse the tool call the model wrote (see
// parserFailures), never a crashed runner's.
func ParserFailure(msg string) bool {
	lower := strings.ToLower(msg)
	if strings.Contains(lower, "model runner") || strings.Contains(lower, "running the model") {
		return false // a crashed runner's words, whatever follows them
	}
	for _, w := range parserFailures {
		if strings.Contains(lower, w) {
			return true
		}
	}
	// ministral's "tool 'x' not found": the model named no listed tool.
	return strings.HasPrefix(lower, "tool '") && strings.HasSuffix(lower, "' not found")
}

// RepeatedTail returns the piece a text ends in when it ends in more
// than RepeatLimit repeats of it: what an unstreamed reply Ollama ended
// at its repeat limit looks like.
func RepeatedTail(s string) (string, bool) {
	n := RepeatLimit + 1
	for p := 1; p*n <= len(s); p++ {
		tail := s[len(s)-p*n:]
		if piece := tail[:p]; strings.TrimSpace(piece) != "" && tail == strings.Repeat(piece, n) {
			return piece, true
		}
	}
	return "", false
}
