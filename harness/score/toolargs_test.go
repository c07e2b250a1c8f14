package score

import (
	"encoding/json"
	"testing"
)

// TestArgumentsAtTheirDefault: an argument given its schema default is the
// same call as one leaving it out; other differences are not.
func TestArgumentsAtTheirDefault(t *testing.T) {
	ta := ArgsOf(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"raw":{"type":"boolean","default":false},"n":{"type":"integer","default":5000},"mode":{"enum":["a","b"]}}}`))
	for _, c := range []struct {
		got, want string
		same      bool
	}{
		{`{"url":"x","raw":false}`, `{"url":"x"}`, true},
		{`{"url":"x","n":5000.0}`, `{"raw":false,"url":"x"}`, true},
		{`{"url":" X "}`, `{"url":"x"}`, true},
		{`{"url":"x","raw":true}`, `{"url":"x"}`, false},
		{`{"url":"x","n":50}`, `{"url":"x"}`, false},
		{`{"url":"x","extra":1}`, `{"url":"x"}`, false},
		{`not json`, `{"url":"x"}`, false},
	} {
		if got := ta.Same(json.RawMessage(c.got), json.RawMessage(c.want)); got != c.same {
			t.Errorf("same(%s, %s) = %v", c.got, c.want, got)
		}
	}
	if !ta.Exact["mode"] || ta.Exact["url"] {
		t.Errorf("exact: %v", ta.Exact)
	}
}
