package chattest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	return slices.Sorted(maps.Keys(seen)), sc.Err()
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
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+":"+shape(x[k], k, said))
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

// Replay is a double's reply to a recorded case: its status and body, or
// ok false when no step scripts the case.
type Replay func(t *testing.T, name string, stream bool) (status int, body []byte, ok bool)

// HoldToRecordings checks a double against every recording in dir whose
// name starts with prefix (prefix[stream-]CASE.EXT: .json, .ndjson, .sse
// bodies, .http for a status line, headers and body): the double's reply
// to each case must have the recorded status and lines of the recorded
// shapes. Every case of cases must have a recording.
func HoldToRecordings(t *testing.T, dir, prefix string, cases []string, replay Replay, said ...string) {
	files, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if len(files) == 0 {
		t.Fatalf("no recorded replies %s* in %s", prefix, dir)
	}
	covered := map[string]bool{}
	for _, path := range files {
		name := strings.TrimPrefix(filepath.Base(path), prefix)
		name = strings.TrimSuffix(name, filepath.Ext(name))
		stream := strings.HasPrefix(name, "stream-")
		name = strings.TrimPrefix(name, "stream-")
		covered[name] = true
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			status, got, ok := replay(t, name, stream)
			if !ok {
				t.Fatalf("a recorded case no step scripts: add %s to the cases", name)
			}
			wantStatus, wantBody := http.StatusOK, want
			if filepath.Ext(path) == ".http" {
				if wantStatus, wantBody, err = ParseHTTP(want); err != nil {
					t.Fatal(err)
				}
			}
			if status != wantStatus {
				t.Errorf("status %d, the real server's %d", status, wantStatus)
			}
			g, gerr := LineShapes(got, said...)
			w, werr := LineShapes(wantBody, said...)
			if gerr != nil || werr != nil {
				t.Fatalf("double %v, recording %v", gerr, werr)
			}
			if !slices.Equal(g, w) {
				t.Errorf("the double's lines differ in shape from the real server's:\ndouble %s\nreal   %s", strings.Join(g, "\n       "), strings.Join(w, "\n       "))
			}
		})
	}
	for _, name := range cases {
		if !covered[name] {
			t.Errorf("case %s has no recording in %s", name, dir)
		}
	}
}

// Post sends body to url and returns the reply's status and body.
func Post(t *testing.T, url, body string) (int, []byte) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, got
}
