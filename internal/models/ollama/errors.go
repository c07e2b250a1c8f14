package ollama

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/internal/models"
)

// The failures of a reply that are the model's, not the transport's: each
// would replay identically if asked again, so Chat returns them at once.

// MalformedError is a tool call the model garbled: Ollama could not parse
// it, or the client could not decode the reply Ollama made of it. It is
// the model's failure, not the transport's, and is never retried.
type MalformedError struct{ Msg string }

func (e *MalformedError) Error() string { return e.Msg }

// IsMalformed reports whether err is or wraps a *MalformedError.
func IsMalformed(err error) bool {
	var me *MalformedError
	return errors.As(err, &me)
}

// ContextLengthError is a request Ollama refused as longer than the
// model's context. Ollama refuses only when the request says
// "truncate": false; otherwise it cuts the prompt silently, keeping its
// first tokens and its tail, and the system prompt and tool list are
// lost without a word (see server/prompt.go in the ollama module).
type ContextLengthError struct{ Msg string }

func (e *ContextLengthError) Error() string {
	return "the request is longer than the model's context (num_ctx): " + e.Msg
}

// IsContextLength reports whether err is or wraps a *ContextLengthError.
func IsContextLength(err error) bool {
	var ce *ContextLengthError
	return errors.As(err, &ce)
}

// RepeatLimit is Ollama's token repeat limit (llm/server.go): a reply
// whose model emitted the same token more than this many times in a row
// is ended by the server, without its final chunk.
const RepeatLimit = 30

// RepeatLimitError is a reply Ollama ended because the model repeated one
// token more than RepeatLimit times: the stream stops without its done
// chunk (not streamed, the reply says done: false). Greedy decoding
// repeats it exactly when asked again.
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

// unparsedToolCall returns Ollama's message when err is its report that
// it could not parse a tool call (see models.UnparsedToolCall). Ollama
// sends it as an HTTP 500 when nothing was streamed yet or the request is
// not streamed, and as an error line of a 200 stream once chunks went
// out; only a 500 or an error line can be one: a 4xx is the request's.
func unparsedToolCall(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	msg := err.Error()
	var se api.StatusError
	if errors.As(err, &se) {
		if se.StatusCode != http.StatusInternalServerError {
			return "", false
		}
		msg = se.ErrorMessage // without the status Error() puts first
	}
	return msg, models.UnparsedToolCall(msg)
}

// FormatError is a structured-output request whose format Ollama cannot
// use: not "json" nor a JSON Schema object, or a schema llama.cpp cannot
// turn into a grammar. Ollama says so as a 500, like a crashed runner;
// asking again gets the same answer.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string {
	return "Ollama refused the format (a JSON Schema it can turn into a grammar is expected): " + e.Msg
}

// IsFormat reports whether err is or wraps a *FormatError.
func IsFormat(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe)
}

// badFormat returns Ollama's message when err is its refusal of a
// request's format (llm/server.go: "invalid format: …; expected \"json\"
// or a valid JSON Schema object", "invalid JSON schema in format").
func badFormat(err error) (string, bool) {
	var se api.StatusError
	if !errors.As(err, &se) {
		return "", false
	}
	m := strings.ToLower(se.ErrorMessage)
	if strings.Contains(m, "invalid json schema in format") || strings.HasPrefix(m, "invalid format:") && strings.Contains(m, "json schema") {
		return se.ErrorMessage, true
	}
	return "", false
}

// contextTooLong returns Ollama's message when err is its refusal of a
// prompt longer than the context ("the input length exceeds the context
// length", a 400 of the runner).
func contextTooLong(err error) (string, bool) {
	var se api.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(se.ErrorMessage), "exceeds the context length") {
		return se.ErrorMessage, true
	}
	return "", false
}
