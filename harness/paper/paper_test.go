package paper

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
)

func call(tool, args string) Call { return Call{Tool: tool, Arguments: json.RawMessage(args)} }

func gold(tool string, args map[string]any) GoldCall { return GoldCall{Tool: tool, Arguments: args} }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Each case's figures were worked out by hand from the definitions.
func TestScore(t *testing.T) {
	pumpGold := []GoldCall{gold("list_pumps", map[string]any{"site": "north"}), gold("read_pump", map[string]any{"pump_id": "PM004"})}
	cases := []struct {
		name  string
		trial Trial
		gold  Gold
		want  results.PaperMetrics
	}{{
		// One of two gold tools, its argument right after trimming and
		// case-folding.
		name:  "half the tools",
		trial: Trial{Calls: []Call{call("list_pumps", `{"site":" North "}`)}, Errors: []bool{false}, Answer: "Pump PM004 at North runs at 35 L/min.", Tokens: 120},
		gold:  Gold{Calls: pumpGold, Contains: []string{"north", "l/min"}},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 0.5, ToolF1: 2.0 / 3, ArgAcc: 0.5, EditDistance: 0.5, TaskCompletion: 1, Tokens: 120},
	}, {
		// The first call takes the only gold call with half its keys
		// right, and the right second call finds none left: greedy.
		name:  "greedy",
		trial: Trial{Calls: []Call{call("pumps", `{"action":"status","site":"north"}`), call("pumps", `{"action":"overview","site":"north"}`)}, Errors: []bool{false, false}, Answer: "done"},
		gold:  Gold{Calls: []GoldCall{gold("pumps", map[string]any{"action": "overview", "site": "north"})}},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 1, ToolF1: 1, ArgAcc: 0.5, EditDistance: 0.5, TaskCompletion: 1},
	}, {
		// At one tool any call has F1 1, whatever its action.
		name:  "one tool, wrong action",
		trial: Trial{Calls: []Call{call("plant", `{"action":"stop","pump_id":"PM004"}`)}, Answer: "stopped"},
		gold:  Gold{Calls: []GoldCall{gold("plant", map[string]any{"action": "start", "pump_id": "PM004"})}, Contains: []string{"started"}},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 1, ToolF1: 1, ArgAcc: 0.5},
	}, {
		// Gold a, b, c called c, a, b: one concordant pair, two
		// discordant.
		name:  "order",
		trial: Trial{Calls: []Call{call("c", `{}`), call("a", `{}`), call("b", `{}`)}, Answer: "ok"},
		gold:  Gold{Calls: []GoldCall{gold("a", nil), gold("b", nil), gold("c", nil)}},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 1, ToolF1: 1, ArgAcc: 1, EditDistance: 2.0 / 3, KendallTau: -1.0 / 3, TaskCompletion: 1},
	}, {
		// Repeats of a gold tool count once for τ; a gold call without
		// arguments is matched only by a call without any; an optional
		// gold call is left out of everything.
		name:  "repeats and optional",
		trial: Trial{Calls: []Call{call("a", `{}`), call("a", `{}`), call("b", `{"x":1}`)}, Errors: []bool{false, false, false}, Answer: "ok"},
		gold:  Gold{Calls: []GoldCall{gold("a", nil), gold("b", nil), {Tool: "z", Optional: true}}},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 1, ToolF1: 1, ArgAcc: 0.5, EditDistance: 1.0 / 3, KendallTau: 1, TaskCompletion: 1, RedundantRate: 1.0 / 3},
	}, {
		// The first error is followed by a call, the last is not.
		name:  "recovery",
		trial: Trial{Calls: []Call{call("a", `{"n":1}`), call("a", `{"n":2}`), call("b", `{}`)}, Errors: []bool{true, false, true}, Answer: "ok"},
		gold:  Gold{Calls: []GoldCall{gold("a", map[string]any{"n": 2.0})}},
		want:  results.PaperMetrics{ToolPrecision: 0.5, ToolRecall: 1, ToolF1: 2.0 / 3, ArgAcc: 0, EditDistance: 2.0 / 3, TaskCompletion: 1, ErrorRecovery: ptr(0.5)},
	}, {
		name:  "nothing at all",
		trial: Trial{},
		gold:  Gold{},
		want:  results.PaperMetrics{ToolPrecision: 1, ToolRecall: 1, ToolF1: 1, ArgAcc: 1},
	}, {
		name:  "no call, gold calls",
		trial: Trial{Answer: "I cannot do that."},
		gold:  Gold{Calls: pumpGold},
		want:  results.PaperMetrics{EditDistance: 1, TaskCompletion: 1},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Score(&c.trial, &c.gold)
			pairs := []struct {
				key       string
				got, want float64
			}{
				{"precision", got.ToolPrecision, c.want.ToolPrecision}, {"recall", got.ToolRecall, c.want.ToolRecall}, {"f1", got.ToolF1, c.want.ToolF1},
				{"argument_accuracy", got.ArgAcc, c.want.ArgAcc}, {"edit", got.EditDistance, c.want.EditDistance}, {"tau", got.KendallTau, c.want.KendallTau},
				{"task_completion", got.TaskCompletion, c.want.TaskCompletion}, {"redundant", got.RedundantRate, c.want.RedundantRate},
			}
			for _, p := range pairs {
				if !near(p.got, p.want) {
					t.Errorf("%s: got %v, want %v", p.key, p.got, p.want)
				}
			}
			if got.Tokens != c.want.Tokens {
				t.Errorf("tokens: got %d, want %d", got.Tokens, c.want.Tokens)
			}
			switch {
			case (got.ErrorRecovery == nil) != (c.want.ErrorRecovery == nil):
				t.Errorf("error recovery: got %v, want %v", got.ErrorRecovery, c.want.ErrorRecovery)
			case got.ErrorRecovery != nil && !near(*got.ErrorRecovery, *c.want.ErrorRecovery):
				t.Errorf("error recovery: got %v, want %v", *got.ErrorRecovery, *c.want.ErrorRecovery)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

// Values compare as Python compares decoded JSON, strings and objects
// loosely.
func TestValuesMatch(t *testing.T) {
	var decode = func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		got, want string
		match     bool
	}{
		{`1`, `1.0`, true},
		{`true`, `1`, true},
		{`false`, `0`, true},
		{`" ON "`, `"on"`, true},
		{`"1"`, `1`, false},
		{`["A"]`, `["a"]`, false},
		{`["a", 2]`, `["a", 2.0]`, true},
		{`{"x": " Y ", "extra": 1}`, `{"x": "y"}`, true},
		{`{"x": "y"}`, `{"x": "y", "z": 1}`, false},
		{`[{"x": "Y"}]`, `[{"x": "y"}]`, false},
		{`null`, `null`, true},
		{`null`, `"null"`, false},
	}
	for _, c := range cases {
		if got := valuesMatch(decode(c.got), decode(c.want)); got != c.match {
			t.Errorf("%s against gold %s: got %v, want %v", c.got, c.want, got, c.match)
		}
	}
}

// A repeat is the same tool with arguments Python writes alike: key order
// at the top does not count, anything else does.
func TestRedundantKey(t *testing.T) {
	same := [][2]string{
		{`{"a":1,"b":"x"}`, `{"b":"x","a":1}`},
		{`{"a":[1,2]}`, `{ "a" : [1, 2] }`},
		{`{"a":1.50}`, `{"a":1.5}`},
		{`{"a":"\u00e9"}`, `{"a":"é"}`},
	}
	for _, p := range same {
		if argumentsKey(json.RawMessage(p[0])) != argumentsKey(json.RawMessage(p[1])) {
			t.Errorf("%s and %s: want the same key, got %q and %q", p[0], p[1], argumentsKey(json.RawMessage(p[0])), argumentsKey(json.RawMessage(p[1])))
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1}`, `{"a":true}`},
		{`{"a":{"p":1,"q":2}}`, `{"a":{"q":2,"p":1}}`},
		{`{"a":"x"}`, `{"a":"X"}`},
	}
	for _, p := range differ {
		if argumentsKey(json.RawMessage(p[0])) == argumentsKey(json.RawMessage(p[1])) {
			t.Errorf("%s and %s: want different keys, got %q", p[0], p[1], argumentsKey(json.RawMessage(p[0])))
		}
	}
	if got, want := argumentsKey(json.RawMessage(`{"y":{"q":2,"p":1},"x":1}`)), `[("x", 1), ("y", {"q": 2, "p": 1})]`; got != want {
		t.Errorf("key: got %s, want %s (Python's str of the sorted items)", got, want)
	}
}

// Seeds and float spellings as Python computes them (python3, hashlib).
func TestSeedIsTheReferences(t *testing.T) {
	if got := Seed("mini:1b", "pumps-001", "primitive", 0, 0); got != 903507537 {
		t.Errorf("seed: got %d, want 903507537", got)
	}
	if got := Seed("org/model:7b", "pumps-002", "composite_1", 0.2, 2); got != 1836920324 {
		t.Errorf("seed: got %d, want 1836920324", got)
	}
	for f, want := range map[float64]string{0: "0.0", 0.2: "0.2", 1e-05: "1e-05", 1e16: "1e+16", 100: "100.0", 0.0001: "0.0001", 1e15: "1000000000000000.0", 1.5e-7: "1.5e-07"} {
		if got := FloatText(f); got != want {
			t.Errorf("FloatText(%v): got %q, want %q", f, got, want)
		}
	}
}

func TestGranularities(t *testing.T) {
	for _, lv := range level.Levels {
		g := Granularity(lv)
		back, ok := LevelOf(g)
		if g == "" || !ok || back != lv {
			t.Errorf("%s: granularity %q reads back as %q, %v", lv, g, back, ok)
		}
	}
	if _, ok := LevelOf("composite_3"); ok {
		t.Error("composite_3 is no level of the reference's")
	}
}

// A granite record reads as its calls, their errors, its answer and its
// tokens.
func TestFromRecord(t *testing.T) {
	rec := &results.Record{FinalAnswer: "ok", PromptTokens: 100, CompletionTokens: 20, Calls: []results.Call{
		{Tool: "a", Arguments: json.RawMessage(`{"x":1}`), IsError: true},
		{Tool: "b", Arguments: json.RawMessage(`{}`)},
	}}
	tr := FromRecord(rec)
	if len(tr.Calls) != 2 || tr.Calls[0].Tool != "a" || string(tr.Calls[0].Arguments) != `{"x":1}` || !tr.Errors[0] || tr.Errors[1] || tr.Answer != "ok" || tr.Tokens != 120 {
		t.Errorf("trial: %+v", tr)
	}
}

// A spec's gold holds integers as int64; a call's decoded JSON holds
// float64: the same number either way.
func TestSpecIntegersMatchJSONNumbers(t *testing.T) {
	if !valuesMatch(float64(3), int64(3)) || valuesMatch(float64(3.5), int64(3)) {
		t.Error("int64 gold values must compare by value with decoded JSON numbers")
	}
}
