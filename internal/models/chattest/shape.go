package chattest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The doubles are held to replies recorded from real servers by shape:
// the keys of each line, their JSON types, and the values of the few keys
// that say what a line is (done, finish_reason, role, ...). Values that
// vary per run (ids, timestamps, durations, text) are left out.

// LineShapes returns the distinct shapes of a reply body's lines, sorted:
// NDJSON lines, or the data of server-sent events ("data: [DONE]" kept as
// the shape [DONE]). said names the keys whose values a shape keeps.
func LineShapes(body []byte, said ...string) ([]string, error) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			line = bytes.TrimSpace(data)
		}
		switch {
		case len(line) == 0:
			continue
		case string(line) == "[DONE]":
			seen["[DONE]"] = true
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("line %q is not JSON: %w", line, err)
		}
		seen[shape(v, "", said)] = true
	}
	return slices.Sorted(func(yield func(string) bool) {
		for s := range seen {
			if !yield(s) {
				return
			}
		}
	}), sc.Err()
}

// ParseHTTP reads a recorded error reply: a status line, headers, a blank
// line and the body.
func ParseHTTP(data []byte) (int, []byte, error) {
	head, body, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok {
		return 0, nil, fmt.Errorf("recorded reply without a blank line after its headers: %q", data)
	}
	var status int
	if _, err := fmt.Sscanf(string(head), "HTTP/1.1 %d", &status); err != nil {
		return 0, nil, fmt.Errorf("status line of %q: %w", head, err)
	}
	return status, body, nil
}

// shape writes a value's keys and JSON types, arrays as their first
// element, with the values of the keys in said.
func shape(v any, key string, said []string) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + shape(x[k], k, said)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + shape(x[0], key, said) + "]"
	case nil:
		return "null"
	}
	if slices.Contains(said, key) {
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
