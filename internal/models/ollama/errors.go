package ollama

import (
	"errors"
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

// unparsedToolCall returns Ollama's message when err is its report that
// it could not parse a tool call (see models.ParserFailure). Only a 500
// or an error line can be one: a 4xx is the request's.
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
	return msg, models.ParserFailure(msg)
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
