package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestSimSkill reads the skill from an entry's name, and refuses every
// suffix that is not a finite number with the example to follow.
func TestSimSkill(t *testing.T) {
	cases := []struct {
		name      string
		skill     float64
		ok, isSim bool
		err       string
	}{
		{Sim, SimDefaultSkill, true, true, ""},
		{Sim + "@2.5", 2.5, true, true, ""},
		{Sim + "@-50", -50, true, true, ""},
		{Sim + "@1e1", 10, true, true, ""},
		{Sim + "@abc", 0, false, true, `found skill "abc"; expected a number after @, like builtin:sim@2.5`},
		{Sim + "@", 0, false, true, `found skill ""; expected a number after @`},
		{Sim + "@NaN", 0, false, true, `found skill "NaN"; expected a number after @`},
		{Sim + "@inf", 0, false, true, `found skill "inf"; expected a number after @`},
		{Sim + "ple", 0, false, false, ""},
		{Oracle, 0, false, false, ""},
		{"qwen2.5:3b", 0, false, false, ""},
	}
	for _, c := range cases {
		skill, ok := SimSkill(c.name)
		if skill != c.skill || ok != c.ok {
			t.Errorf("SimSkill(%q) = %v, %v; want %v, %v", c.name, skill, ok, c.skill, c.ok)
		}
		_, isSim, err := parseSim(c.name)
		if isSim != c.isSim || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("parseSim(%q): sim %v, error %v; want sim %v, error %q", c.name, isSim, err, c.isSim, c.err)
		}
	}
}

// TestSimDrawShares: over many calls, the share of right calls is the
// probability asked for, and the wrong ones split by SimErrors' shares,
// each within four standard errors.
func TestSimDrawShares(t *testing.T) {
	const n = 20000
	for _, p := range []float64{0, 0.3, 0.87} {
		right := 0
		kinds := map[SimError]int{}
		for i := range n {
			d := simDraw(7, fmt.Sprintf("builtin:sim/s-%03d/L3/r%d", i/10, i%3), 1+i%10, p)
			if d.right {
				right++
				continue
			}
			kinds[d.kind]++
		}
		if se := math.Sqrt(p * (1 - p) / n); math.Abs(float64(right)/n-p) > 4*se+1e-9 {
			t.Errorf("p %v: %d of %d right; want %v ± %.4f", p, right, n, p, 4*se)
		}
		wrong := float64(n - right)
		total := 0.0
		for _, e := range SimErrors {
			total += e.Share
			got := float64(kinds[e.Kind]) / wrong
			if se := math.Sqrt(e.Share * (1 - e.Share) / wrong); math.Abs(got-e.Share) > 4*se {
				t.Errorf("p %v: %s is %.4f of the wrong calls; want %v ± %.4f", p, e.Kind, got, e.Share, 4*se)
			}
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("SimErrors' shares sum to %v; want 1", total)
		}
	}
}

// TestSimDrawDeterministic: a draw depends on the seed, the trial and the
// call alone, and each of them changes it.
func TestSimDrawDeterministic(t *testing.T) {
	key := func(d simDrawn) string { return fmt.Sprint(d.right, d.kind, d.rng.Uint64()) }
	base := key(simDraw(1, "m/s/L2/r0", 3, 0.5))
	if again := key(simDraw(1, "m/s/L2/r0", 3, 0.5)); again != base {
		t.Errorf("the same draw twice: %s, then %s", base, again)
	}
	for _, c := range []struct {
		what  string
		seed  int
		trial string
		call  int
	}{{"seed", 2, "m/s/L2/r0", 3}, {"trial", 1, "m/s/L2/r1", 3}, {"call", 1, "m/s/L2/r0", 4}} {
		if key(simDraw(c.seed, c.trial, c.call, 0.5)) == base {
			t.Errorf("another %s draws the same stream", c.what)
		}
	}
}

// TestSimWrong: each error changes the call as documented, and a call
// that cannot make the drawn error makes the next one that it can.
func TestSimWrong(t *testing.T) {
	tools := []string{"get_lamp", "list_lamps", "set_lamp"}
	cases := []struct {
		drawn SimError
		tools []string
		args  string
		want  SimError
		check func(name string, args map[string]any) string
	}{
		{SimWrongTool, tools, `{"lamp_id":"LP01"}`, SimWrongTool, func(name string, args map[string]any) string {
			if name == "set_lamp" || !slices.Contains(tools, name) || args["lamp_id"] != "LP01" {
				return "want another listed tool with the same arguments"
			}
			return ""
		}},
		{SimWrongArgument, tools, `{"lamp_id":"LP01"}`, SimWrongArgument, func(name string, args map[string]any) string {
			if name != "set_lamp" || args["lamp_id"] != "LP01x" {
				return `want lamp_id "LP01x"`
			}
			return ""
		}},
		{SimWrongArgument, tools, `{"level":40}`, SimWrongArgument, func(_ string, args map[string]any) string {
			if args["level"] != 41.0 {
				return "want level 41"
			}
			return ""
		}},
		{SimWrongArgument, tools, `{"watts":6.5}`, SimWrongArgument, func(_ string, args map[string]any) string {
			if args["watts"] != 7.5 {
				return "want watts 7.5"
			}
			return ""
		}},
		{SimWrongArgument, tools, `{"on":true}`, SimWrongArgument, func(_ string, args map[string]any) string {
			if args["on"] != false {
				return "want on flipped"
			}
			return ""
		}},
		{SimWrongArgument, tools, `{"config":{"color":"warm"}}`, SimWrongArgument, func(_ string, args map[string]any) string {
			if _, ok := args["config"]; ok || len(args) != 0 {
				return "want config dropped"
			}
			return ""
		}},
		{SimWrongTool, []string{"set_lamp"}, `{"on":true}`, SimWrongArgument, nil},
		{SimWrongArgument, tools, `{}`, SimWrongTool, nil},
		{SimWrongTool, []string{"set_lamp"}, `{}`, SimMalformed, nil},
		{SimMalformed, tools, `{"on":true}`, SimMalformed, nil},
		{SimNoCall, tools, `{"on":true}`, SimNoCall, nil},
	}
	for i, c := range cases {
		d := simDraw(1, "m/s/L4/r0", i, 0)
		d.kind = c.drawn
		name, raw, kind := d.wrong(results.MessageCall{Name: "set_lamp", Arguments: json.RawMessage(c.args)}, c.tools)
		if kind != c.want {
			t.Errorf("%s on %s with tools %v: made %s; want %s", c.drawn, c.args, c.tools, kind, c.want)
			continue
		}
		if kind == SimMalformed || kind == SimNoCall {
			if name != "set_lamp" && kind == SimMalformed || raw != nil {
				t.Errorf("%s: call %s %s; want the gold tool, arguments left to the record", kind, name, raw)
			}
			continue
		}
		var args map[string]any
		if err := json.Unmarshal(raw, &args); err != nil {
			t.Fatalf("%s: arguments %s: %v", kind, raw, err)
		}
		if string(raw) == c.args && name == "set_lamp" {
			t.Errorf("%s on %s: the gold call unchanged", kind, c.args)
		}
		if c.check != nil {
			if msg := c.check(name, args); msg != "" {
				t.Errorf("%s on %s: call %s %s; %s", kind, c.args, name, raw, msg)
			}
		}
	}
}

// simTrial is a trial of the tiny domain at L4 whose gold is calls, on a
// fresh store.
func simTrial(t *testing.T, id string, calls ...results.MessageCall) *Trial {
	t.Helper()
	sess, err := serve.Open(context.Background(), tiny.Domain, servetest.Level(t, tiny.Domain, level.L4))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	tools, err := sess.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]func(json.RawMessage) bool{}
	for _, tool := range tools {
		valid[tool.Name] = func(raw json.RawMessage) bool { return json.Valid(raw) && len(raw) > 0 && raw[0] == '{' }
	}
	return &Trial{Session: sess, Tools: tools, ToolSet: "tiny/L4", Valid: valid, Prompts: []string{"Dim the hall lamp."},
		Record: &results.Record{TrialID: id, Calls: []results.Call{}}, Gold: [][]results.MessageCall{calls}}
}

// TestSimPlays plays tiny trials: a very skilled sim makes the oracle's
// calls and answers with their results, a hopeless one gets every call
// wrong or makes none, and a trial replays call for call.
func TestSimPlays(t *testing.T) {
	gold := []results.MessageCall{
		{Name: "get_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP01"}`)},
		{Name: "list_lamps", Arguments: json.RawMessage(`{"room":"hall","on":true}`)},
		{Name: "set_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP01","level":40}`)},
	}
	play := func(skill float64, id string) *results.Record {
		tr := simTrial(t, id, gold...)
		sim{skill: skill, seed: 42}.Run(context.Background(), tr)
		return tr.Record
	}
	expert := play(50, "builtin:sim@50/tiny-001/L4/r0")
	if len(expert.Calls) != len(gold) || expert.ErrorClass != "" || expert.StopReason != results.StopAnswer {
		t.Fatalf("skill 50: %d calls, class %q, stop %s; want the oracle's 3 calls, none failed", len(expert.Calls), expert.ErrorClass, expert.StopReason)
	}
	for i, c := range expert.Calls {
		if c.Tool != gold[i].Name || string(c.Arguments) != string(gold[i].Arguments) {
			t.Errorf("skill 50: call %d is %s %s; want the gold %s %s", i, c.Tool, c.Arguments, gold[i].Name, gold[i].Arguments)
		}
	}
	if !strings.Contains(expert.FinalAnswer, "LP01") {
		t.Errorf("skill 50: answer %q; want the tools' results", expert.FinalAnswer)
	}
	kinds := map[string]int{}
	for r := range 40 {
		id := fmt.Sprintf("builtin:sim@-50/tiny-001/L4/r%d", r)
		rec := play(-50, id)
		again := play(-50, id)
		if a, b := callsOf(rec), callsOf(again); a != b || rec.FinalAnswer != again.FinalAnswer {
			t.Errorf("%s replayed: %s, then %s", id, a, b)
		}
		if len(rec.Calls) == 0 {
			kinds["none"]++
			if rec.FinalAnswer != simNoCallAnswer || rec.StopReason != results.StopAnswer {
				t.Errorf("%s: no call, answer %q (%s); want %q", id, rec.FinalAnswer, rec.StopReason, simNoCallAnswer)
			}
		}
		for i, c := range rec.Calls {
			switch {
			case c.Tool != gold[i].Name:
				kinds["tool"]++
			case c.ErrorClass == results.ErrMalformed:
				kinds["malformed"]++
				if string(c.Arguments) != `"{\""` || !c.IsError {
					t.Errorf("%s: malformed call %s %s; want the text {\" kept as a JSON string", id, c.Tool, c.Arguments)
				}
			case string(c.Arguments) != string(gold[i].Arguments):
				kinds["argument"]++
			default:
				t.Errorf("%s: call %d is the gold %s %s at skill -50", id, i, c.Tool, c.Arguments)
			}
		}
	}
	for _, k := range []string{"none", "tool", "malformed", "argument"} {
		if kinds[k] == 0 {
			t.Errorf("skill -50 over 40 trials: errors %v; want some of kind %s", kinds, k)
		}
	}
}

// callsOf writes a record's calls in one line, to compare two plays.
func callsOf(r *results.Record) string {
	var b strings.Builder
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "%s %s %s|", c.Tool, c.Arguments, c.ErrorClass)
	}
	return b.String()
}

// TestSimMeasuresOnce: a tool set is measured once per process, and the
// metrics are those of the tools as listed.
func TestSimMeasuresOnce(t *testing.T) {
	tr := simTrial(t, "m/s/L4/r0")
	want, err := SimMeasure(tr.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if want.Tools != len(tr.Tools) || want.SchemaTokens == 0 || want.DescriptionChars == 0 {
		t.Fatalf("metrics %+v of %d tools; want them counted", want, len(tr.Tools))
	}
	for range 2 {
		got, err := simMetricsOf(tr)
		if err != nil || got != want {
			t.Errorf("cached metrics %+v, %v; want %+v", got, err, want)
		}
	}
	if _, ok := simMetrics.Load(simToolsKey(tr)); !ok {
		t.Error("the tool set's metrics are not cached")
	}
	other := simTrial(t, "m/s/L4/r0")
	other.Tools = other.Tools[:1]
	if simToolsKey(other) == simToolsKey(tr) {
		t.Error("two tool lists of one tool set name share a cache key")
	}
}

// TestSimUnmeasurable: tools whose schema is no JSON object cannot be
// measured, and the trial stops saying so, before any call.
func TestSimUnmeasurable(t *testing.T) {
	tr := simTrial(t, "m/s/L4/r0", results.MessageCall{Name: "get_lamp", Arguments: json.RawMessage(`{"lamp_id":"LP01"}`)})
	tr.Tools[0].RawInputSchema = json.RawMessage(`[1]`)
	sim{skill: 50}.Run(context.Background(), tr)
	r := tr.Record
	if r.StopReason != results.StopError || r.ErrorClass != results.ErrAgent || len(r.Calls) != 0 || !strings.Contains(r.Error, "cannot measure the trial's tools") {
		t.Errorf("stop %s, class %q, %d calls, error %q; want the trial stopped for its tools", r.StopReason, r.ErrorClass, len(r.Calls), r.Error)
	}
}
