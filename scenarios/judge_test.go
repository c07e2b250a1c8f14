package scenarios

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

func TestGini(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 0},
		{[]float64{4, 0, 0, 0}, 0.75},
		{[]float64{1, 2, 3}, 2.0 / 9},
		{[]float64{0, 0}, 0},
	} {
		if g := Gini(c.xs); math.Abs(g-c.want) > 1e-12 {
			t.Errorf("Gini(%v) = %v, want %v", c.xs, g, c.want)
		}
	}
}

func TestCheckCountsCoverageAndPairs(t *testing.T) {
	tools := FromDomain(gen.Domains[0], level.L4)
	ex := func(i int) ExpectedCall { return ExpectedCall{Tool: tools[i].Name, Arguments: tools[i].examples[0]} }
	arts := []Artifact{
		{ExpectedCalls: []ExpectedCall{ex(0), ex(1)}, Provenance: Provenance{Retries: 1}},
		{ExpectedCalls: []ExpectedCall{ex(1), ex(0), {Tool: "launch_rockets", Arguments: json.RawMessage(`{}`)}}},
		{ExpectedCalls: []ExpectedCall{{Tool: tools[2].Name, Arguments: json.RawMessage(`{"bogus":1}`)}}},
	}
	q := Check(tools, arts)
	if q.Calls != 6 || q.UnknownTools != 1 || q.InvalidCalls != 1 || q.Retries != 1 || q.ToolUse[tools[0].Name] != 2 {
		t.Fatalf("%+v", q)
	}
	if len(q.Pairs) != 1 || q.Pairs[0].Count != 2 {
		t.Errorf("pairs %+v", q.Pairs)
	}
	if want := 3.0 / float64(len(tools)); math.Abs(q.Coverage-want) > 1e-12 || q.Gini <= 0 {
		t.Errorf("coverage %v gini %v", q.Coverage, q.Gini)
	}
	if s := Summary(q, nil, 0); !strings.Contains(s, "1 name unknown tools, 1 have arguments their tool's schema refuses") {
		t.Errorf("summary: %s", s)
	}
}

// TestSummaryEscapesNames: the quality summary granite judge prints names
// a server's tools and a synthesized artifact; a terminal escape or a
// line break in any of them is printed escaped.
func TestSummaryEscapesNames(t *testing.T) {
	tools := Listed([]toolsrc.Tool{{Name: "a\x1b[2Jb", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "c\nd\u202e", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	call := func(name string) ExpectedCall { return ExpectedCall{Tool: name, Arguments: json.RawMessage(`{}`)} }
	arts := []Artifact{{ID: "art\rx", ExpectedCalls: []ExpectedCall{call("a\x1b[2Jb"), call("c\nd\u202e")}}, {ExpectedCalls: []ExpectedCall{call("a\x1b[2Jb"), call("c\nd\u202e")}}}
	q := Check(tools, arts)
	q.AssertionProblems = append(q.AssertionProblems, AssertionProblem{Artifact: "art\rx", Kind: "tool_call", Tool: "a\x1b[2Jb", Why: "no\nway"})
	s := Summary(q, nil, 0)
	if strings.ContainsAny(s, "\x1b\r\u202e") || strings.Contains(s, "\nd") || strings.Contains(s, "\nway") {
		t.Errorf("a name is printed raw:\n%q", s)
	}
	if !strings.Contains(s, `a\x1b[2Jb + c\x0ad\u202e (2)`) || !strings.Contains(s, `- art\x0dx, assertion 0 (tool_call of a\x1b[2Jb): no\x0away`) {
		t.Errorf("summary:\n%s", s)
	}
}

// TestJudgeNormalisesAndCascades: scores come back normalised, ordering is
// full for a single call, and a missing required argument zeroes values,
// types and format.
func TestJudgeNormalisesAndCascades(t *testing.T) {
	tools := FromDomain(gen.Domains[0], level.L4)
	reply, _ := json.Marshal(map[string]any{"usage": 8, "selection": 10, "ordering": 2, "completeness": 6, "names": 10, "values": 9, "types": 10, "format": 10, "relevance": 7,
		"logical_flow": 3, "task_completeness": 2, "conciseness": 1, "topicality": 3, "context_retention": 2, "comment": "fine"})
	f := synthModel(t, func(int, ollamatest.Request) (string, time.Duration) { return string(reply), 0 })
	l := llmFor(t, f)
	var withArgs *Tool
	for i := range tools {
		if strings.Contains(string(tools[i].InputSchema), `"required"`) {
			withArgs = &tools[i]
			break
		}
	}
	good := Artifact{ID: "a", Turns: []Turn{{Prompt: "p"}}, ExpectedCalls: []ExpectedCall{{Tool: withArgs.Name, Arguments: withArgs.examples[0]}}}
	s, err := l.Judge(context.Background(), tools, good)
	if err != nil {
		t.Fatal(err)
	}
	if s.Usage != 0.8 || s.Ordering != 1 || s.Values != 0.9 || s.LogicalFlow != 1 || s.Conciseness != 0 || s.TaskCompleteness != 0.5 || s.Penalised {
		t.Errorf("%+v", s)
	}
	bad := good
	bad.ExpectedCalls = []ExpectedCall{{Tool: withArgs.Name, Arguments: json.RawMessage(`{}`)}, {Tool: withArgs.Name, Arguments: withArgs.examples[0]}}
	s, err = l.Judge(context.Background(), tools, bad)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Penalised || s.Values != 0 || s.Types != 0 || s.Format != 0 || s.Ordering != 0.2 || s.Names != 1 {
		t.Errorf("%+v", s)
	}
	if format := f.Requests()[0].Format; !strings.Contains(string(format), `"logical_flow"`) {
		t.Errorf("format %s", format)
	}
}

// TestJudgeChecksAssertions: a tool_call the schema refuses, a not_call it
// accepts and an unknown tool are each reported.
func TestJudgeChecksAssertions(t *testing.T) {
	tools := []Tool{{Tool: toolsrc.Tool{Name: "get", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}}}
	a := Artifact{ID: "x", Assertions: []Assertion{
		{Kind: "tool_call", Tool: "get", Arguments: json.RawMessage(`{"id":3}`)},
		{Kind: "not_call", Tool: "get", Arguments: json.RawMessage(`{"id":"a"}`), Probes: "pattern"},
		{Kind: "tool_call", Tool: "gone"},
		{Kind: "tool_call", Tool: "get", Arguments: json.RawMessage(`{"id":"a"}`)},
	}}
	q := Check(tools, []Artifact{a})
	if len(q.AssertionProblems) != 3 {
		t.Fatalf("%+v", q.AssertionProblems)
	}
	for i, want := range []string{"arguments the tool's schema refuses: at /id:", "probes pattern, but the tool's schema accepts", `names tool "gone"`} {
		if !strings.Contains(q.AssertionProblems[i].Why, want) {
			t.Errorf("problem %d: %q; want %q", i, q.AssertionProblems[i].Why, want)
		}
	}
	if s := Summary(q, nil, 0); !strings.Contains(s, "3 assertions cannot mean what they say") {
		t.Errorf("summary: %s", s)
	}
}
