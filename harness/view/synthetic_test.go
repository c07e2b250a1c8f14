package view_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
)

// writeSynthetic writes a results folder shaped like the paper's grid (9
// models × 9 domains × 9 scenarios × 4 levels × reps), cut at limit
// trials when limit > 0: whole records with transcripts of the size real
// ones have (a system prompt with the tool list, tool calls and their
// JSON results, thinking), metrics and explanations, drawn from a seeded
// generator. It returns the number of trials written.
func writeSynthetic(tb testing.TB, dir string, reps, limit int) int {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	file, err := os.Create(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(file)
	enc := json.NewEncoder(w)
	system := "You operate the system through its tools. " + strings.Repeat("Tool get_widget(widget_id: string, required) returns one widget with its state, room and settings. ", 20)
	var models, domains []string
	for i := range 9 {
		models = append(models, fmt.Sprintf("model-%d:%db", i, 1+i))
		domains = append(domains, fmt.Sprintf("domain%d", i))
	}
	n := 0
	grid := len(models) * len(domains) * 9 * 4 * reps
	for _, m := range models {
		for _, d := range domains {
			for lv := range 4 {
				for s := range 9 {
					for rep := 1; rep <= reps; rep++ {
						if limit > 0 && n == limit {
							break
						}
						level := level.Level(fmt.Sprintf("L%d", 4-lv))
						scenario := fmt.Sprintf("%s-%03d", d, s+1)
						r := synthetic(rng, system, m, d, scenario, level, rep, n)
						if err := enc.Encode(r); err != nil {
							tb.Fatal(err)
						}
						n++
					}
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	file.Close()
	man := &results.Manifest{Experiment: "synthetic", ConfigHash: "synthetic", Trials: max(n, min(grid, n)), Grid: grid, Meter: "nvml",
		Config: &results.Config{Name: "synthetic", Models: results.Entries(models...), Domains: domains, Repetitions: reps}}
	if err := results.WriteManifest(dir, man); err != nil {
		tb.Fatal(err)
	}
	return n
}

func synthetic(rng *rand.Rand, system, model, domain, scenario string, lv level.Level, rep, index int) *results.Record {
	r := &results.Record{TrialID: results.TrialID(model, scenario, string(lv), rep), Index: index, Experiment: "synthetic", Model: model, Agent: "ollama",
		Domain: domain, Level: lv, Scenario: scenario, Difficulty: []string{"easy", "medium", "hard"}[index%3], Repetition: rep,
		StartedAt: "2026-01-01T00:00:00Z", EndedAt: "2026-01-01T00:00:09Z", StopReason: results.StopAnswer}
	r.Messages = []results.Message{{Role: "system", Content: system}, {Role: "user", Content: "Turn on the hall lamp at 40 percent and tell me the kitchen temperature."}}
	calls := 1 + rng.IntN(6)
	m := &results.Metrics{F1: rng.Float64(), ActionF1: rng.Float64(), ArgAcc: rng.Float64(), ActionArgAcc: rng.Float64(),
		WallS: 1 + 30*rng.Float64(), ToolCalls: calls, Explain: &results.Explanation{}}
	energy := 50 + 900*rng.Float64()
	m.EnergyJ = &energy
	for c := range calls {
		args := json.RawMessage(fmt.Sprintf(`{"action":"set_widget","widget_id":"WG%03d","level":%d}`, rng.IntN(40), rng.IntN(100)))
		result := fmt.Sprintf(`{"id":"DV%03d","name":"device %d","room":"hall","on":true,"level":%d,"updated_at":"2026-01-01T00:00:0%dZ","notes":%q}`,
			c, c, rng.IntN(100), c, strings.Repeat("x", 200))
		r.Messages = append(r.Messages, results.Message{Role: "assistant", Thinking: strings.Repeat("I should call the tool. ", 10),
			ToolCalls: []results.MessageCall{{Name: domain + "_control", Arguments: args}}},
			results.Message{Role: "tool", ToolName: domain + "_control", Content: result})
		r.Calls = append(r.Calls, results.Call{Turn: c + 1, Tool: domain + "_control", Arguments: args, Result: result, LatencyMS: rng.Float64()})
		m.Explain.Alignment = append(m.Explain.Alignment, results.GoldMatch{Gold: c, Tool: domain + "_control", Action: "set_widget", Call: c, ActionCall: c,
			Args: []results.ArgMatch{{Name: "widget_id", Want: "WG001", Got: "WG001", Given: true, Right: true}, {Name: "level", Want: 40, Got: 41, Given: true}}})
	}
	r.FinalAnswer = "The hall lamp is on at 40 percent; the kitchen reads 21.5 °C."
	r.Messages = append(r.Messages, results.Message{Role: "assistant", Content: r.FinalAnswer})
	r.Turns = calls + 1
	if rng.Float64() < 0.6 {
		m.TC, m.TCStrict, m.StateOK, m.FactsOK, m.ChangesOK, m.SnapshotOK = 1, 1, true, true, true, true
	} else {
		m.Why = []string{"state condition fails: lamp LP02 with {\"level\":40}: row LP02: found level = 41; expected 40"}
		m.Explain.FailedConditions = m.Why
		m.Explain.StoreDiff = &results.StoreDiff{Rights: 1, Rows: []results.RowDiff{{Collection: "lamps", ID: "LP02", Change: results.RowChanged,
			Fields: []results.FieldDiff{{Field: "level", Got: 41, Want: 40}}}}}
		if rng.IntN(4) == 0 {
			r.ErrorClass = []results.ErrorClass{results.ErrSchema, results.ErrTool, results.ErrUnknown}[rng.IntN(3)]
		}
	}
	r.Metrics = m
	return r
}
