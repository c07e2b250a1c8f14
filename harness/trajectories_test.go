package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/speclang"
)

// TestTrajectoriesByHand plays the hand-made trajectories of
// testdata/trajectories.yaml on the benchmark's domains and checks the
// verdicts they pin: right outcomes that the byte-equal store fails, and
// collateral damage that task completion must catch.
func TestTrajectoriesByHand(t *testing.T) {
	cases := loadTrajectories(t)
	spec := loadSpec(t)
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			d, s := findScenario(spec, c.Scenario)
			if s == nil {
				t.Fatalf("no scenario %s", c.Scenario)
			}
			dom, _ := gen.Lookup(d.Name)
			rights, err := gold.RightsOf(ctx, dom, s)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := serve.Open(ctx, dom, servetest.Level(t, dom, c.Level))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			rec := &results.Record{FinalAnswer: c.Answer, StopReason: results.StopAnswer}
			for _, call := range c.Calls {
				tool, _ := call[0].(string)
				args, _ := json.Marshal(call[1])
				res, err := sess.Call(ctx, tool, args)
				if err != nil || res.IsError {
					t.Fatalf("call %s %s: %v %+v", tool, args, err, res)
				}
				rec.Calls = append(rec.Calls, results.Call{Tool: tool, Arguments: args})
			}
			m, err := score.Score(rec, score.NewGold(d, s, c.Level, dom, rights), sess.Store.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			if m.TC != c.TC || m.TCStrict != c.Strict {
				t.Errorf("tc %v tc_strict %v, want %v %v; why %q", m.TC, m.TCStrict, c.TC, c.Strict, m.Why)
			}
			if c.Why != "" && !slices.ContainsFunc(m.Why, func(w string) bool { return strings.Contains(w, c.Why) }) {
				t.Errorf("why %q; want a reason containing %q", m.Why, c.Why)
			}
		})
	}
}

// findScenario finds a scenario of any domain by its id.
func findScenario(spec *speclang.Spec, id string) (*speclang.Domain, *speclang.Scenario) {
	for _, d := range spec.Domains {
		for _, s := range d.Scenarios {
			if s.ID == id {
				return d, s
			}
		}
	}
	return nil, nil
}

// TestOptionalArgumentsLeftOutTogether plays every scenario's gold at L4
// with every optional argument left out at once. verify proves each
// omission right alone; task completion must accept them together, which
// the byte-equal store does not when two of them change the store.
func TestOptionalArgumentsLeftOutTogether(t *testing.T) {
	spec := loadSpec(t)
	played, strictFails := 0, 0
	for _, d := range spec.Domains {
		dom, _ := gen.Lookup(d.Name)
		for _, s := range d.Scenarios {
			g, rec, final := playWithoutOptionals(t, d, dom, s)
			m, err := score.Score(rec, g, final)
			if err != nil {
				t.Fatal(err)
			}
			played++
			if m.TC != 1 {
				t.Errorf("%s: tc %v with every optional argument left out: %q", s.ID, m.TC, m.Why)
			}
			if m.TCStrict == 0 {
				strictFails++
			}
		}
	}
	t.Logf("%d scenarios; the byte-equal store fails %d of them", played, strictFails)
}

// BenchmarkScoreByChanges scores a trajectory whose store no right store
// equals byte for byte, so that task completion judges it change by
// change: the cost a model's trial pays that the oracle's does not.
func BenchmarkScoreByChanges(b *testing.B) {
	spec := loadSpec(b)
	for _, d := range spec.Domains {
		dom, _ := gen.Lookup(d.Name)
		for _, s := range d.Scenarios {
			g, rec, final := playWithoutOptionals(b, d, dom, s)
			if m, _ := score.Score(rec, g, final); m.SnapshotOK {
				continue // judged byte for byte: not the case measured
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := score.Score(rec, g, final); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(final)), "store_bytes")
			return
		}
	}
	b.Skip("no scenario's store changes when its optional arguments are left out")
}

// BenchmarkScore1000Calls scores a scenario's trial that made its gold
// calls and then a thousand in all, the rest repeating the gold's tools
// and actions with wrong arguments. Target: under 10 ms.
func BenchmarkScore1000Calls(b *testing.B) {
	spec := loadSpec(b)
	d := spec.Domains[0]
	dom, _ := gen.Lookup(d.Name)
	var s *speclang.Scenario
	for _, c := range d.Scenarios {
		if s == nil || len(c.Gold[level.L4]) > len(s.Gold[level.L4]) {
			s = c
		}
	}
	g, rec, final := playWithoutOptionals(b, d, dom, s)
	gold := len(rec.Calls)
	for i := 0; len(rec.Calls) < 1000; i++ {
		var args map[string]any
		_ = json.Unmarshal(rec.Calls[i%gold].Arguments, &args)
		for k := range args {
			if k != "action" {
				args[k] = fmt.Sprintf("wrong-%d", i)
			}
		}
		raw, _ := json.Marshal(args)
		rec.Calls = append(rec.Calls, results.Call{Tool: rec.Calls[i%gold].Tool, Arguments: raw})
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := score.Score(rec, g, final); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(gold), "gold_calls")
}

// playWithoutOptionals plays a scenario's gold at L4 with every optional
// argument left out, and answers with what the tools returned, as the
// oracle does. It returns the scenario's gold, the record and the store
// the calls left.
func playWithoutOptionals(t testing.TB, d *speclang.Domain, dom *mcpdomain.Domain, s *speclang.Scenario) (*score.Gold, *results.Record, []byte) {
	t.Helper()
	ctx := context.Background()
	rights, err := gold.RightsOf(ctx, dom, s)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := serve.Open(ctx, dom, servetest.Level(t, dom, level.L4))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rec := &results.Record{StopReason: results.StopAnswer}
	var outputs []string
	for _, c := range s.Gold[level.L4] {
		args := map[string]any{}
		for k, v := range c.Args {
			if !slices.Contains(c.Optional, k) {
				args[k] = v
			}
		}
		raw, _ := json.Marshal(args)
		res, err := sess.Call(ctx, c.Tool, raw)
		if err != nil || res.IsError {
			t.Fatalf("%s: %s %s: %v %+v", s.ID, c.Tool, raw, err, res)
		}
		rec.Calls = append(rec.Calls, results.Call{Tool: c.Tool, Arguments: raw})
		outputs = append(outputs, res.Text)
	}
	g := score.NewGold(d, s, level.L4, dom, rights)
	rec.FinalAnswer = g.OracleAnswer()
	return g, rec, sess.Store.Snapshot()
}
