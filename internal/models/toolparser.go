package models

import "strings"

// parserFailures are the words of Ollama's reports that it could not
// parse the tool call a model wrote: the template-driven parser's "error
// parsing tool call: raw='…', err=…" (ollama/ollama issues 12884, 12064,
// 11704) and the built-in parsers' errors (model/parsers: qwen3's
// "failed to parse JSON: …", glm's XML, lfm2's and olmo3's call syntax,
// ministral's unknown tool). Nothing but the text tells one from a
// crashed runner, which is worth a retry. A test of package ollama checks
// the list against every error the pinned module's parsers can return.
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

// UnparsedToolCall reports whether msg, the message of a model server's
// 500, is Ollama's report that it could not parse the model's tool call:
// the model's failure, which asking again replays, on the native API and
// on /v1 alike.
func UnparsedToolCall(msg string) bool {
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
