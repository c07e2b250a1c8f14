package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/paper"
)

// benchConditions is how many conditions BenchmarkImportRun imports.
const benchConditions = 1000

// BenchmarkImportRun imports and re-scores a synthesized reference run
// of benchConditions conditions (results.jsonl and a trace each, written
// before the timer starts) over the fixture scenarios, every condition
// with its gold calls, a repeated call and an error every few.
func BenchmarkImportRun(b *testing.B) {
	scens, err := ReadScenarios(scenarioDir)
	if err != nil {
		b.Fatal(err)
	}
	runDir := synthesizeRun(b, scens, benchConditions)
	outs := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		sum, err := ImportRun(b.Context(), runDir, scens, filepath.Join(outs, fmt.Sprint(i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Reproduced != benchConditions {
			b.Fatalf("reproduced %d of %d: %v", sum.Reproduced, benchConditions, sum.Mismatches[:min(3, len(sum.Mismatches))])
		}
	}
	b.ReportMetric(float64(benchConditions)*float64(b.N)/b.Elapsed().Seconds(), "conditions/s")
}

// synthesizeRun writes a reference run folder of n conditions: each
// scenario at each of its levels, for models and repetitions enough to
// make n. Its recorded metrics are paper.Score's, so that every condition
// must reproduce.
func synthesizeRun(b *testing.B, scens []Scenario, n int) string {
	b.Helper()
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, TracesDir), 0o755); err != nil {
		b.Fatal(err)
	}
	type pair struct {
		s   *Scenario
		lvl int
	}
	var pairs []pair
	for i := range scens {
		for j := range scens[i].Levels() {
			pairs = append(pairs, pair{&scens[i], j})
		}
	}
	var lines strings.Builder
	for k := range n {
		p := pairs[k%len(pairs)]
		lv := p.s.Levels()[p.lvl]
		c := Condition{Model: fmt.Sprintf("bench/m%d:1b", k/len(pairs)%4), Domain: p.s.Domain, Granularity: paper.Granularity(lv), Level: lv,
			Scenario: p.s.ID, Repetition: k / len(pairs) / 4}
		type call struct {
			Tool      string         `json:"tool_name"`
			Arguments map[string]any `json:"arguments"`
			Timestamp float64        `json:"timestamp"`
		}
		type response struct {
			Tool      string         `json:"tool_name"`
			Response  map[string]any `json:"response"`
			IsError   bool           `json:"is_error"`
			Timestamp float64        `json:"timestamp"`
		}
		var calls []call
		var resps []response
		trial := &paper.Trial{Answer: "done: " + strings.Join(p.s.Contains, ", "), Tokens: 100 + k}
		add := func(tool string, args map[string]any, isErr bool) {
			at := float64(len(calls))
			calls = append(calls, call{tool, args, at})
			resps = append(resps, response{tool, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok " + tool}}, "isError": isErr}, isErr, at + 0.5})
			raw, _ := json.Marshal(args)
			trial.Calls = append(trial.Calls, paper.Call{Tool: tool, Arguments: raw})
			trial.Errors = append(trial.Errors, isErr)
		}
		for i, g := range p.s.Gold[lv] {
			add(g.Tool, g.Arguments, k%5 == 0 && i == 0)
			if k%7 == 0 {
				add(g.Tool, g.Arguments, false)
			}
		}
		m := paper.Score(trial, p.s.PaperGold(lv))
		trace := map[string]any{"tool_calls": calls, "tool_responses": resps, "final_answer": trial.Answer,
			"total_tokens_in": 100, "total_tokens_out": k, "wall_time_seconds": 1.5, "num_llm_turns": len(calls) + 1, "timed_out": false, "error": nil}
		data, err := json.Marshal(trace)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(traceFile(dir, &c), data, 0o644); err != nil {
			b.Fatal(err)
		}
		line, err := json.Marshal(map[string]any{
			"condition": map[string]any{"model": c.Model, "domain": c.Domain, "granularity": c.Granularity, "scenario_id": c.Scenario,
				"fault_rate": 0.0, "repetition": c.Repetition, "seed": paper.Seed(c.Model, c.Scenario, c.Granularity, 0, c.Repetition)},
			"metrics":       m,
			"trace_summary": map[string]any{"num_tool_calls": len(calls), "num_llm_turns": len(calls) + 1, "wall_time_seconds": 1.5, "timed_out": false, "total_tokens": trial.Tokens},
			"error":         nil})
		if err != nil {
			b.Fatal(err)
		}
		lines.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), []byte(lines.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}
