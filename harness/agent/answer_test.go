package agent

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
)

// TestAnswerFrom reads answers from the shapes agent CLIs print: one
// object, JSON lines, a top-level array of messages, with log lines and
// text around them; the last value that holds the field gives the answer.
func TestAnswerFrom(t *testing.T) {
	cases := []struct {
		name, stdout, field, want string
		fail                      bool
	}{
		{name: "plain stdout", stdout: "  the answer\n", want: "the answer"},
		{name: "object", stdout: `{"type":"result","result":"done"}`, field: "result", want: "done"},
		{name: "nested path", stdout: `{"a":{"b":"deep"}}`, field: "a.b", want: "deep"},
		{name: "not a string", stdout: `{"result":{"n":2}}`, field: "result", want: `{"n":2}`},
		{name: "json lines, last wins", stdout: "{\"result\":\"first\"}\n{\"type\":\"x\"}\n{\"result\":\"second\"}\n{\"type\":\"end\"}\n", field: "result", want: "second"},
		{name: "top-level array", stdout: `[{"type":"system"},{"type":"assistant","message":{}},{"type":"result","result":"from the array"}]`, field: "result", want: "from the array"},
		{name: "array, last of several", stdout: `[{"result":"one"},{"result":"two"},{"other":1}]`, field: "result", want: "two"},
		{name: "array then object", stdout: "[{\"result\":\"a\"}]\n{\"result\":\"b\"}\n", field: "result", want: "b"},
		{name: "log lines between", stdout: "starting up\n{\"result\":\"kept\"}\n3 warnings\nWARN: {broken\n{\"type\":\"end\"}\n", field: "result", want: "kept"},
		{name: "log line after", stdout: "{\"result\":\"kept\"}\nbye\n", field: "result", want: "kept"},
		{name: "array not at top of path", stdout: `{"result":["x"]}`, field: "result", want: `["x"]`},
		{name: "nested arrays are not searched", stdout: `[[{"result":"hidden"}]]`, field: "result", fail: true},
		{name: "no field", stdout: `[{"type":"a"}]` + "\n" + `{"type":"b"}`, field: "result", fail: true},
		{name: "no JSON", stdout: "just text\nmore text", field: "result", fail: true},
		{name: "empty", stdout: "", field: "result", fail: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var spec *results.AnswerSpec
			if c.field != "" {
				spec = &results.AnswerSpec{JSON: c.field}
			}
			got, err := answerFrom([]byte(c.stdout), spec)
			if c.fail {
				if err == nil || !strings.Contains(err.Error(), c.field) {
					t.Fatalf("answer %q, error %v; want an error naming %s", got, err, c.field)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("answer %q, error %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestAnswerFromClips bounds an answer found in a JSON array like one
// found anywhere else.
func TestAnswerFromClips(t *testing.T) {
	long := strings.Repeat("é", MaxAnswer)
	got, err := answerFrom([]byte(`[{"result":"`+long+`"}]`), &results.AnswerSpec{JSON: "result"})
	if err != nil || len(got) > MaxAnswer || !strings.HasPrefix(long, got) {
		t.Fatalf("answer of %d bytes, error %v; want a prefix of at most %d bytes", len(got), err, MaxAnswer)
	}
}
