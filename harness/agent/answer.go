package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
)

// answerFrom takes the final answer from stdout: all of it, or a JSON
// field of the last JSON value printed that has it. The values are read
// as a stream (one object, JSON lines, or values side by side), and the
// items of a top-level array count as values of their own, since agent
// CLIs print their transcript either way (Claude Code and qwen-code's
// stream-json as lines, qwen-code's json as one array). A line that is
// not JSON, a log line say, is skipped.
func answerFrom(stdout []byte, spec *results.AnswerSpec) (string, error) {
	if spec == nil || spec.JSON == "" {
		return ClipAnswer(strings.TrimSpace(string(stdout))), nil
	}
	path := strings.Split(spec.JSON, ".")
	found, answer := false, ""
	take := func(v any) {
		if s, ok := field(v, path); ok {
			found, answer = true, s
		}
	}
	for rest := stdout; len(rest) > 0; {
		dec := json.NewDecoder(bytes.NewReader(rest))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			take(v)
			if items, ok := v.([]any); ok {
				for _, item := range items {
					take(item)
				}
			}
		}
		rest = skipLine(rest[dec.InputOffset():])
	}
	if !found {
		return "", fmt.Errorf("stdout holds no JSON value with field %s (read as one value, JSON lines, or a top-level array of them)", spec.JSON)
	}
	return ClipAnswer(answer), nil
}

// skipLine drops b's leading space and then the rest of the line that
// follows it, where decoding stopped at text that is not JSON.
func skipLine(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return nil
}

// field reads a dotted path of a JSON value: a string as it is, anything
// else as JSON.
func field(v any, path []string) (string, bool) {
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = obj[k]; !ok {
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, _ := json.Marshal(v)
	return string(b), true
}
