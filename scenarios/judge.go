package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/templates"
)

// Quality is the deterministic part of judging a set of artifacts.
type Quality struct {
	Artifacts int `json:"artifacts"`
	Calls     int `json:"calls"`
	// UnknownTools and InvalidCalls count expected calls naming a tool the
	// source lacks, and calls whose arguments its schema refuses.
	UnknownTools int `json:"unknown_tools"`
	InvalidCalls int `json:"invalid_calls"`
	// ToolUse counts expected calls per tool (unused tools at 0);
	// Coverage is the share of tools used; Gini the inequality of use (0
	// even, toward 1 concentrated).
	ToolUse  map[string]int `json:"tool_use"`
	Coverage float64        `json:"coverage"`
	Gini     float64        `json:"gini"`
	// Pairs are the tool pairs most often used in the same artifact.
	Pairs []Pair `json:"pairs"`
	// Retries sums the stage retries the artifacts needed.
	Retries int `json:"retries"`
	// AssertionProblems are assertions that cannot mean what they say: a
	// tool_call whose arguments the tool's schema refuses (no agent can
	// pass it), a not_call whose arguments are valid (it refuses a good
	// call), an assertion naming a tool the source lacks.
	AssertionProblems []AssertionProblem `json:"assertion_problems"`
}

// AssertionProblem is one assertion that cannot mean what it says.
type AssertionProblem struct {
	Artifact  string `json:"artifact"`
	Assertion int    `json:"assertion"`
	Kind      string `json:"kind"`
	Tool      string `json:"tool"`
	Why       string `json:"why"`
}

// Pair is two tools used together, and how often.
type Pair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Count int    `json:"count"`
}

// Check computes the deterministic quality of artifacts against their
// tools.
func Check(tools []Tool, arts []Artifact) Quality {
	q := Quality{Artifacts: len(arts), ToolUse: map[string]int{}}
	byName := map[string]*Tool{}
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
		q.ToolUse[tools[i].Name] = 0
	}
	pairs := map[[2]string]int{}
	for _, a := range arts {
		q.AssertionProblems = append(q.AssertionProblems, checkAssertions(byName, a)...)
		q.Retries += a.Provenance.Retries
		var names []string
		for _, c := range a.ExpectedCalls {
			q.Calls++
			t, ok := byName[c.Tool]
			switch {
			case !ok:
				q.UnknownTools++
				continue
			case !t.Valid(c.Arguments):
				q.InvalidCalls++
			}
			q.ToolUse[c.Tool]++
			if !slices.Contains(names, c.Tool) {
				names = append(names, c.Tool)
			}
		}
		sort.Strings(names)
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				pairs[[2]string{names[i], names[j]}]++
			}
		}
	}
	used := 0
	var counts []float64
	for _, n := range q.ToolUse {
		if n > 0 {
			used++
		}
		counts = append(counts, float64(n))
	}
	if len(tools) > 0 {
		q.Coverage = float64(used) / float64(len(tools))
	}
	q.Gini = Gini(counts)
	for p, n := range pairs {
		q.Pairs = append(q.Pairs, Pair{p[0], p[1], n})
	}
	sort.Slice(q.Pairs, func(i, j int) bool {
		if q.Pairs[i].Count != q.Pairs[j].Count {
			return q.Pairs[i].Count > q.Pairs[j].Count
		}
		return q.Pairs[i].A+q.Pairs[i].B < q.Pairs[j].A+q.Pairs[j].B
	})
	if len(q.Pairs) > 10 {
		q.Pairs = q.Pairs[:10]
	}
	return q
}

// checkAssertions finds an artifact's assertions that cannot mean what
// they say.
func checkAssertions(byName map[string]*Tool, a Artifact) []AssertionProblem {
	var out []AssertionProblem
	for i, as := range a.Assertions {
		p := AssertionProblem{Artifact: a.ID, Assertion: i, Kind: as.Kind, Tool: as.Tool}
		t, ok := byName[as.Tool]
		switch {
		case !ok:
			p.Why = fmt.Sprintf("names tool %q, which the source does not list", as.Tool)
		case len(as.Arguments) == 0:
			continue
		case as.Kind == "tool_call":
			if err := t.Validate(as.Arguments); err != nil {
				p.Why = "asserts a call whose arguments the tool's schema refuses: " + err.Error()
			}
		case as.Kind == "not_call":
			if t.Valid(as.Arguments) && as.Probes != "" {
				p.Why = fmt.Sprintf("says it probes %s, but the tool's schema accepts its arguments", as.Probes)
			} else if t.Valid(as.Arguments) {
				p.Why = "forbids a call whose arguments the tool's schema accepts"
			}
		}
		if p.Why != "" {
			out = append(out, p)
		}
	}
	return out
}

// Gini is the Gini coefficient of non-negative counts: 0 when all are
// equal, (n-1)/n when one holds everything.
func Gini(xs []float64) float64 {
	n := float64(len(xs))
	var sum, diff float64
	for _, a := range xs {
		sum += a
		for _, b := range xs {
			diff += math.Abs(a - b)
		}
	}
	if sum == 0 {
		return 0
	}
	return diff / (2 * n * sum)
}

// Scores are a judge's scores of one artifact, normalised to 0..1.
type Scores struct {
	ID string `json:"id"`
	// Tool-calling correctness (0-10 each, normalised).
	Usage, Selection, Ordering                            float64
	Completeness, Names, Values, Types, Format, Relevance float64
	// Coherence (1-3 each, normalised).
	LogicalFlow, TaskCompleteness, Conciseness, Topicality, Context float64
	Comment                                                         string
	// Penalised says the cascade zeroed values, types and format: a call
	// names an unknown tool or misses a required argument.
	Penalised bool
	Retries   int
}

var judgeKeys = []string{"usage", "selection", "ordering", "completeness", "names", "values", "types", "format", "relevance"}
var coherenceKeys = []string{"logical_flow", "task_completeness", "conciseness", "topicality", "context_retention"}

// JudgeSchema is the judge's reply contract.
func JudgeSchema() json.RawMessage {
	props := map[string]any{"comment": map[string]any{"type": "string"}}
	req := []string{"comment"}
	for _, k := range judgeKeys {
		props[k] = map[string]any{"type": "integer", "minimum": 0, "maximum": 10}
		req = append(req, k)
	}
	for _, k := range coherenceKeys {
		props[k] = map[string]any{"type": "integer", "minimum": 1, "maximum": 3}
		req = append(req, k)
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": req, "properties": props})
	return b
}

// Judge scores an artifact with the model (temperature 0, structured
// output). Single-call scenarios get full ordering. A call that names an
// unknown tool or misses a required argument zeroes values, types and
// format, whatever the model said.
func (l *LLM) Judge(ctx context.Context, tools []Tool, a Artifact) (Scores, error) {
	type pt struct{ Name, Description, Schema string }
	var pts []pt
	byName := map[string]*Tool{}
	for i, t := range tools {
		pts = append(pts, pt{t.Name, t.Description, string(t.InputSchema)})
		byName[t.Name] = &tools[i]
	}
	var prompt strings.Builder
	if err := templates.Judge.Execute(&prompt, map[string]any{"Tools": pts, "Turns": a.Turns, "Calls": a.ExpectedCalls}); err != nil {
		return Scores{}, err
	}
	raw := map[string]any{}
	retries, err := l.Stage(ctx, prompt.String(), JudgeSchema(), &raw)
	if err != nil {
		return Scores{ID: a.ID, Retries: retries}, err
	}
	num := func(k string) float64 { f, _ := raw[k].(float64); return f }
	s := Scores{ID: a.ID, Retries: retries,
		Usage: num("usage") / 10, Selection: num("selection") / 10, Ordering: num("ordering") / 10,
		Completeness: num("completeness") / 10, Names: num("names") / 10, Values: num("values") / 10,
		Types: num("types") / 10, Format: num("format") / 10, Relevance: num("relevance") / 10,
		LogicalFlow: (num("logical_flow") - 1) / 2, TaskCompleteness: (num("task_completeness") - 1) / 2,
		Conciseness: (num("conciseness") - 1) / 2, Topicality: (num("topicality") - 1) / 2, Context: (num("context_retention") - 1) / 2}
	s.Comment, _ = raw["comment"].(string)
	if len(a.ExpectedCalls) < 2 {
		s.Ordering = 1
	}
	for _, c := range a.ExpectedCalls {
		t, ok := byName[c.Tool]
		if !ok || missingRequired(t, c.Arguments) {
			s.Penalised = true
		}
	}
	if s.Penalised {
		s.Values, s.Types, s.Format = 0, 0, 0
	}
	return s, nil
}

// missingRequired reports whether arguments lack a required argument of
// the tool's top-level schema.
func missingRequired(t *Tool, args json.RawMessage) bool {
	var schema map[string]any
	var got map[string]any
	if json.Unmarshal(t.InputSchema, &schema) != nil || json.Unmarshal(args, &got) != nil {
		return true
	}
	for _, r := range asList(schema["required"]) {
		if _, ok := got[r]; !ok {
			return true
		}
	}
	return false
}

// Summary renders a quality check and judge scores as Markdown; the
// artifacts' and tools' names, a server's, are escaped (oneline.Escape).
func Summary(q Quality, scores []Scores, discarded int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scenario quality\n\n%d artifacts, %d expected calls: %d name unknown tools, %d have arguments their tool's schema refuses. Tool coverage %.0f%%, Gini of tool use %.3f, %d stage retries.\n\n",
		q.Artifacts, q.Calls, q.UnknownTools, q.InvalidCalls, 100*q.Coverage, q.Gini, q.Retries)
	if n := len(q.AssertionProblems); n > 0 {
		fmt.Fprintf(&b, "%d assertions cannot mean what they say:\n\n", n)
		for _, p := range q.AssertionProblems {
			fmt.Fprintf(&b, "- %s, assertion %d (%s of %s): %s\n", oneline.Escape(p.Artifact), p.Assertion, p.Kind, oneline.Escape(p.Tool), oneline.Escape(p.Why))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Every assertion names a listed tool; every tool_call's arguments fit its schema and every not_call's break it.\n\n")
	}
	if discarded > 0 {
		fmt.Fprintf(&b, "%d artifacts could not be judged (replies failed validation %d times).\n\n", discarded, Retries+1)
	}
	if len(q.Pairs) > 0 {
		b.WriteString("Tools most often used together: ")
		for i, p := range q.Pairs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s + %s (%d)", oneline.Escape(p.A), oneline.Escape(p.B), p.Count)
		}
		b.WriteString(".\n\n")
	}
	if len(scores) > 0 {
		var tc, coh float64
		penalised := 0
		for _, s := range scores {
			tc += (s.Usage + s.Selection + s.Ordering + s.Completeness + s.Names + s.Values + s.Types + s.Format + s.Relevance) / 9
			coh += (s.LogicalFlow + s.TaskCompleteness + s.Conciseness + s.Topicality + s.Context) / 5
			if s.Penalised {
				penalised++
			}
		}
		n := float64(len(scores))
		fmt.Fprintf(&b, "Judge: mean tool-calling correctness %.3f, mean coherence %.3f over %d artifacts; %d penalised (unknown tool or missing required argument).\n", tc/n, coh/n, len(scores), penalised)
	}
	return b.String()
}
