package mcpdomain

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgranite/granite/internal/opkind"
)

func noteTool() *Tool {
	op := &Operation{Name: "add_note", Kind: opkind.Create, Schema: `{"type":"object","properties":{` +
		`"text":{"type":"string"},"title":{"type":"string","maxLength":2000},` +
		`"config":{"type":"object"},"kind":{"type":"string","enum":["a","b"]}},"additionalProperties":false}`}
	return &Tool{Name: "add_note", Operations: []*Operation{op}}
}

func args(kv map[string]any) []byte {
	b, _ := json.Marshal(kv)
	return b
}

// TestStringArgumentsAreBounded: a string argument is held to its schema's
// maxLength, or else to DefaultMaxString, at any depth, and the refusal
// names the argument.
func TestStringArgumentsAreBounded(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name string
		args map[string]any
		want string // "" for accepted
	}{
		{"at the default bound", map[string]any{"text": long(DefaultMaxString)}, ""},
		{"over the default bound", map[string]any{"text": long(DefaultMaxString + 1)}, `argument "text": a string of 1001 characters is over the limit of 1000; shorten it`},
		{"within the schema's own bound", map[string]any{"title": long(1500)}, ""},
		{"over the schema's own bound", map[string]any{"title": long(2001)}, `argument "title"`},
		{"nested in an object", map[string]any{"config": map[string]any{"note": long(5000)}}, `argument "config.note": a string of 5000 characters is over the limit of 1000`},
	}
	for _, c := range cases {
		_, _, err := noteTool().Prepare(args(c.args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !IsToolError(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}

// TestErrorsEchoAShortPrefix: a bad value is repeated in part, not whole.
func TestErrorsEchoAShortPrefix(t *testing.T) {
	huge := strings.Repeat("y", 100000)
	_, _, err := noteTool().Prepare(args(map[string]any{"kind": huge}))
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), `argument "kind"`) || !strings.Contains(err.Error(), "(100000 characters)") {
		t.Errorf("got %.400v", err)
	}
	if err := NotFound("thing_id", "thing", huge, []string{"TH001"}); len(err.Error()) > 300 {
		t.Errorf("NotFound echoes %d bytes", len(err.Error()))
	}
}

// TestErrorsAreBounded: a call of 0.9 MB with 60,000 unknown keys (the
// red team's, which got a 7.5 MB error back, re-sent to the model every
// turn) gets an error that lists the first few problems and counts the
// rest.
func TestErrorsAreBounded(t *testing.T) {
	keys := map[string]any{}
	for i := range 60000 {
		keys[fmt.Sprintf("unknown_key_%05d", i)] = 1
	}
	call := args(keys)
	_, _, err := noteTool().Prepare(call)
	if err == nil || !IsToolError(err) {
		t.Fatalf("got %v", err)
	}
	msg := err.Error()
	t.Logf("a %d-byte call with %d unknown keys gets a %d-byte error", len(call), len(keys), len(msg))
	if len(msg) > 4096 || !strings.Contains(msg, `unknown argument "unknown_key_`) || !strings.Contains(msg, "more problems of the same kinds") {
		t.Errorf("error of %d bytes: %.600s", len(msg), msg)
	}
}

// TestResultsAreBounded: a result over MaxResultBytes is a tool error
// that says how to ask for less.
func TestResultsAreBounded(t *testing.T) {
	big := func(*Operation, []byte) (any, error) { return strings.Repeat("z", MaxResultBytes), nil }
	res, err := noteTool().Handler(big)(context.Background(), mcp.CallToolRequest{})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "over the limit") {
		t.Errorf("got %v %+v", err, res)
	}
}

// TestClipRepeatsAPrefix: an error repeats the first echoRunes characters
// of a value and says how long it was, counting characters, not bytes.
func TestClipRepeatsAPrefix(t *testing.T) {
	long := strings.Repeat("é", echoRunes+5)
	cases := []struct{ in, clip, quoted string }{
		{"short", "short", `"short"`},
		{strings.Repeat("x", echoRunes), strings.Repeat("x", echoRunes), `"` + strings.Repeat("x", echoRunes) + `"`},
		{long, strings.Repeat("é", echoRunes) + fmt.Sprintf("… (%d characters)", echoRunes+5),
			fmt.Sprintf("%q (%d characters)", strings.Repeat("é", echoRunes)+"…", echoRunes+5)},
	}
	for _, c := range cases {
		if got := Clip(c.in); got != c.clip {
			t.Errorf("Clip(%.10q…) = %q, want %q", c.in, got, c.clip)
		}
		if got := quote(c.in); got != c.quoted {
			t.Errorf("quote(%.10q…) = %q, want %q", c.in, got, c.quoted)
		}
	}
}

// BenchmarkQuoteMegabyte: repeating part of a 1 MB argument in an error
// costs what scanning it does, not a conversion of it all to runes.
func BenchmarkQuoteMegabyte(b *testing.B) {
	s := strings.Repeat("x", 1<<20)
	for b.Loop() {
		_ = quote(s)
	}
}
