package harness

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/surface"
)

// simGold is each planned trial's gold calls, in order, by trial id.
func simGold(t *testing.T, cfg *results.Config) map[string][]results.MessageCall {
	t.Helper()
	trials, err := Plan(context.Background(), cfg, loadSpec(t), gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]results.MessageCall{}
	for _, tr := range trials {
		for _, turn := range goldByTurn(tr.Task) {
			out[tr.ID] = append(out[tr.ID], turn...)
		}
	}
	return out
}

// simClean reports whether a trial made exactly its gold calls.
func simClean(r results.Record, gold []results.MessageCall) bool {
	if len(r.Calls) != len(gold) {
		return false
	}
	for i, c := range r.Calls {
		if c.Tool != gold[i].Name || string(c.Arguments) != string(gold[i].Arguments) {
			return false
		}
	}
	return true
}

// simLevelMetrics measures each domain's levels as written, as run.json
// does (MeasureInterface), and checks builtin:sim reads the same load off
// the tools it is listed.
func simLevelMetrics(t *testing.T) map[string]surface.Metrics {
	t.Helper()
	out := map[string]surface.Metrics{}
	for _, d := range loadSpec(t).Domains {
		dom, _ := gen.Lookup(d.Name)
		for _, lv := range level.Levels {
			iface, err := serve.DomainInterface(dom, surface.Spec{Name: string(lv), Level: lv})
			if err != nil {
				t.Fatal(err)
			}
			m := MeasureInterface(iface)
			out[d.Name+"/"+string(lv)] = m
			sess, err := serve.Open(context.Background(), dom, servetest.Level(t, dom, lv))
			if err != nil {
				t.Fatal(err)
			}
			listed, err := sess.Tools(context.Background())
			sess.Close()
			if err != nil {
				t.Fatal(err)
			}
			seen, err := agent.SimMeasure(listed)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := agent.SimLoad(m), agent.SimLoad(seen); math.Abs(a-b) > 0.01 {
				t.Errorf("%s %s: load %.4f measured from the level, %.4f from its listed tools (%+v vs %+v); want the same", d.Name, lv, a, b, m, seen)
			}
		}
	}
	return out
}

// TestSimOverTheBenchmark plays builtin:sim at its default skill over
// every scenario at every level. The share of trials that make exactly
// their gold calls is the mean of SimTaskSuccess over them, within four
// binomial standard errors, per level; each such trial completes (it is
// the oracle's); TC is at least that share, and above it only by the
// wrong calls that leave the task done (a read whose result the answer
// does not need). The records show each error's effect.
func TestSimOverTheBenchmark(t *testing.T) {
	cfg := testConfig("sim", "http://127.0.0.1:1", agent.Sim)
	cfg.Repetitions = 2
	gold := simGold(t, cfg)
	metrics := simLevelMetrics(t)
	recs, err := runTrials(t, cfg, loadSpec(t), gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(gold) {
		t.Fatalf("%d records of %d planned trials", len(recs), len(gold))
	}
	type tally struct{ n, clean, tc, pred, vari float64 }
	byLevel := map[level.Level]*tally{}
	effects := map[string]int{}
	for _, r := range recs {
		g := gold[r.TrialID]
		p := agent.SimTaskSuccess(metrics[r.Domain+"/"+string(r.Level)], agent.SimDefaultSkill, len(g))
		tl := byLevel[r.Level]
		if tl == nil {
			tl = &tally{}
			byLevel[r.Level] = tl
		}
		tl.n++
		tl.tc += r.Metrics.TC
		tl.pred += p
		tl.vari += p * (1 - p)
		if simClean(r, g) {
			tl.clean++
			if r.Metrics.TC != 1 {
				t.Errorf("%s made its gold calls and scored TC %v; want 1, as the oracle does", r.TrialID, r.Metrics.TC)
			}
		}
		if len(r.Calls) == 0 && len(g) > 0 {
			effects["zero_calls"]++
			if r.FinalAnswer != "I cannot do this with these tools." || r.Metrics.TC != 0 {
				t.Errorf("%s: no call, answer %q, TC %v; want the refusal, TC 0", r.TrialID, r.FinalAnswer, r.Metrics.TC)
			}
		}
		if len(r.Calls) > len(g) {
			t.Errorf("%s: %d calls for %d gold calls; want one call per gold call at most", r.TrialID, len(r.Calls), len(g))
			continue
		}
		for i, c := range r.Calls {
			switch {
			case c.ErrorClass == results.ErrMalformed:
				effects["malformed"]++
				if c.Tool != g[i].Name || string(c.Arguments) != `"{\""` {
					t.Errorf("%s: malformed call %s %s; want the gold tool %s, the text {\" kept as a JSON string", r.TrialID, c.Tool, c.Arguments, g[i].Name)
				}
			case c.Tool != g[i].Name:
				effects["wrong_tool"]++
				if string(c.Arguments) != string(g[i].Arguments) {
					t.Errorf("%s: wrong tool %s with %s; want the gold call's arguments %s", r.TrialID, c.Tool, c.Arguments, g[i].Arguments)
				}
			case string(c.Arguments) != string(g[i].Arguments):
				effects["wrong_argument"]++
			}
		}
	}
	for _, k := range []string{"zero_calls", "malformed", "wrong_tool", "wrong_argument"} {
		if effects[k] == 0 {
			t.Errorf("no record shows %s (effects %v); want each error's effect somewhere", k, effects)
		}
	}
	for _, lv := range level.Levels {
		tl := byLevel[lv]
		if tl == nil {
			t.Errorf("no trial at %s", lv)
			continue
		}
		pred, se := tl.pred/tl.n, math.Sqrt(tl.vari)/tl.n
		clean, tc := tl.clean/tl.n, tl.tc/tl.n
		t.Logf("%s: %v trials, SimTaskSuccess mean %.3f ± %.3f, gold-only share %.3f, TC %.3f", lv, tl.n, pred, se, clean, tc)
		if math.Abs(clean-pred) > 4*se {
			t.Errorf("%s: %.3f of trials made only their gold calls; want SimTaskSuccess's mean %.3f ± %.3f", lv, clean, pred, 4*se)
		}
		if tc < clean || tc > clean+0.25 {
			t.Errorf("%s: TC %.3f; want at least the gold-only share %.3f, and wrong calls that leave the task done a small part (under 0.25)", lv, tc, clean)
		}
	}
	t.Logf("effects: %v", effects)
}

// TestSimSkillExtremes: a very skilled sim scores as the oracle does,
// TC = 1 on every trial with the gold calls made; a hopeless one makes no
// gold call.
func TestSimSkillExtremes(t *testing.T) {
	spec := loadSpec(t)
	expert, hopeless := agent.Sim+"@50", agent.Sim+"@-50"
	cfg := testConfig("sim-extremes", "http://127.0.0.1:1", expert, hopeless)
	for _, d := range spec.Domains {
		cfg.Scenarios = append(cfg.Scenarios, d.Scenarios[len(d.Scenarios)-1].ID)
	}
	gold := simGold(t, cfg)
	recs, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(spec.Domains) * len(level.Levels); len(recs) != want {
		t.Fatalf("%d records; want %d", len(recs), want)
	}
	tc := 0.0
	for _, r := range recs {
		g := gold[r.TrialID]
		switch r.Model {
		case expert:
			if r.Metrics.TC != 1 || r.Metrics.F1 != 1 || r.Metrics.ArgAcc != 1 || r.ErrorClass != "" || !simClean(r, g) {
				t.Errorf("%s: TC %v F1 %v ArgAcc %v class %q; want the oracle's calls, scored full", r.TrialID, r.Metrics.TC, r.Metrics.F1, r.Metrics.ArgAcc, r.ErrorClass)
			}
		case hopeless:
			tc += r.Metrics.TC
			for i, c := range r.Calls {
				if c.Tool == g[i].Name && string(c.Arguments) == string(g[i].Arguments) {
					t.Errorf("%s: call %d is the gold %s %s; want every call wrong at skill -50", r.TrialID, i, c.Tool, c.Arguments)
				}
			}
		}
	}
	t.Logf("skill -50: TC %.3f over %d trials", tc/float64(len(recs)/2), len(recs)/2)
}

// TestSimReplays: a run of builtin:sim replays call for call under the
// same seed, and another seed draws other calls.
func TestSimReplays(t *testing.T) {
	spec := loadSpec(t)
	cfg := testConfig("sim-replays", "http://127.0.0.1:1", agent.Sim)
	cfg.Repetitions = 3
	for _, d := range spec.Domains {
		cfg.Scenarios = append(cfg.Scenarios, d.Scenarios[0].ID)
	}
	play := func(seed int) map[string]string {
		cfg.Seed = seed
		recs, err := runTrials(t, cfg, spec, gen.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range recs {
			var b strings.Builder
			for _, c := range r.Calls {
				fmt.Fprintf(&b, "%s %s %s|", c.Tool, c.Arguments, c.ErrorClass)
			}
			out[r.TrialID] = b.String() + r.FinalAnswer
		}
		return out
	}
	first, again, other := play(42), play(42), play(43)
	differ := 0
	for id, calls := range first {
		if again[id] != calls {
			t.Errorf("%s replayed other calls:\n%s\nthen\n%s", id, calls, again[id])
		}
		if other[id] != calls {
			differ++
		}
	}
	if len(first) == 0 || differ == 0 {
		t.Errorf("seed 43 drew the same calls as seed 42 in all %d trials; want the run's seed to count", len(first))
	}
}

// TestSimConfig: builtin:sim is a built-in agent, with a skill in its
// name; a skill that is no number, or settings, are positioned errors.
func TestSimConfig(t *testing.T) {
	spec := loadSpec(t)
	cases := []struct {
		yaml string
		want string
	}{
		{"name: x\nmodels: [builtin:sim]\n", ""},
		{"name: x\nmodels: [builtin:oracle, builtin:sim@2.5, builtin:sim@-1]\n", ""},
		{"name: x\nmodels: [builtin:sim@abc]\n",
			`x.yaml:2:10: $.models[0]: found built-in agent "builtin:sim@abc": found skill "abc"; expected a number after @, like builtin:sim@2.5`},
		{"name: x\nmodels:\n  - builtin:oracle\n  - builtin:sim@\n",
			`x.yaml:4:5: $.models[1]: found built-in agent "builtin:sim@": found skill ""; expected a number after @, like builtin:sim@2.5`},
		{"name: x\nmodels: [builtin:simple]\n",
			`x.yaml:2:10: $.models[0]: found built-in agent "builtin:simple"; expected builtin:oracle or builtin:silent, or builtin:sim (builtin:sim@2.5 for a skill of 2.5)`},
		{"name: x\nmodels: [{name: builtin:sim@2, parallel: 2}]\n",
			`x.yaml:2:10: $.models[0]: found built-in agent builtin:sim@2 with model settings; expected it as a plain name`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "x.yaml")
		if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(path, spec)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v; want it loaded", c.yaml, err)
				continue
			}
			for _, m := range cfg.ModelNames() {
				if _, ok := agent.SimSkill(m); strings.HasPrefix(m, agent.Sim) && !ok {
					t.Errorf("%q: model %s has no skill", c.yaml, m)
				}
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: loaded; want %s", c.yaml, c.want)
			continue
		}
		if got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), ""); !strings.Contains(got, c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, c.want)
		}
	}
	if _, err := agent.For(results.ModelEntry{Name: "builtin:sim@x"}).Workers(context.Background(), &agent.Env{Config: testConfig("x", "")}, results.ModelEntry{Name: "builtin:sim@x"}, 1); err == nil || !strings.Contains(err.Error(), "expected a number after @") {
		t.Errorf("workers of builtin:sim@x: %v; want the skill refused", err)
	}
}
