package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
	"github.com/mcpgranite/granite/internal/surface"
)

// compositionWorld is a run of a subject that fails each call with a
// fixed probability, whatever the tools: a task succeeds when every gold
// call does, so fewer calls is more success. Every level has the same
// gold as written (grouping changes no call count); atomic gold has more
// calls on the tasks a composite serves. The cause is composition alone.
func compositionWorld(t testing.TB) *Results {
	t.Helper()
	const callFails = 0.08
	rng := rand.New(rand.NewPCG(3, 5))
	cfg := &results.Config{Name: "composition", Repetitions: 3, Granularities: level.Levels}
	man := &results.Manifest{Experiment: "composition", Shard: "0/1", Config: cfg, Interfaces: map[string]results.InterfaceInfo{}}
	cfg.Models = []results.ModelEntry{{Name: "flaky"}}
	for _, lv := range level.Levels {
		spec, err := surface.Parse(string(lv) + "-atomic")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Interfaces = append(cfg.Interfaces, spec)
	}
	var recs []results.Record
	for _, domain := range []string{"d1", "d2", "d3"} {
		for sc := 1; sc <= 20; sc++ {
			scen := fmt.Sprintf("%s-%03d", domain, sc)
			written := 2 + sc%4
			atomic := written
			if sc%2 == 0 {
				atomic = written + 6 // a preset expanded: a list and updates
			}
			for rep := 1; rep <= cfg.Repetitions; rep++ {
				for _, spec := range cfg.Played() {
					n := written
					if spec.Get("composition") == "atomic" {
						n = atomic
					}
					tc := b2f(rng.Float64() < math.Pow(1-callFails, float64(n)))
					rec := results.Record{TrialID: results.TrialID("flaky", scen, spec.Name, rep), Index: len(recs), Model: "flaky", Domain: domain,
						Level: spec.Level, Scenario: scen, Difficulty: "hard", Repetition: rep, StopReason: "answer",
						Metrics: &results.Metrics{TC: tc, TCStrict: tc, ToolCalls: n, GoldCalls: n, WallS: 1}}
					if !spec.IsIdentity() {
						rec.Interface = spec.Name
					}
					recs = append(recs, rec)
				}
			}
		}
	}
	man.Trials = len(recs)
	return &Results{Dir: t.TempDir(), Manifest: man, Records: recs}
}

// TestCompositionEffectApart: on a subject whose success falls with the
// number of calls alone, the report finds composition (atomic below as
// written, at every level the paired test can tell) and no grouping: no
// level term of the composition model is significant, and the atomic
// term is, negative.
func TestCompositionEffectApart(t *testing.T) {
	r := Build(compositionWorld(t), 0)
	by, model := r.Table("by_composition"), r.Table("composition_model")
	if by == nil || model == nil {
		t.Fatalf("tables %v; want by_composition and composition_model", tableNames(r))
	}
	if len(by.Rows) != 2*len(level.Levels) {
		t.Fatalf("by_composition has %d rows, want a row per level and composition", len(by.Rows))
	}
	col := func(name string) int {
		for i, h := range by.Header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	significant := 0
	for _, row := range by.Rows {
		if row[1] != "atomic" {
			continue
		}
		if d := row[col("d_tc")].(float64); !(d < 0) {
			t.Errorf("%v: d_tc %v; want atomic below as written", row[0], d)
		}
		if row[col("gold_calls")].(float64) <= 0 {
			t.Errorf("%v: gold calls %v", row[0], row[col("gold_calls")])
		}
		if p := row[col("p_tc")].(float64); p < 0.05 {
			significant++
		}
	}
	if significant == 0 {
		t.Errorf("no level shows a significant composition effect:\n%v", by.Rows)
	}
	// Grouping is a family of terms (a level each): no effect means none
	// of them is significant once the family is adjusted (Holm).
	var levelTerms []string
	var levelPs []float64
	for _, c := range model.Rows {
		name, beta, p := c[0].(string), c[1].(float64), c[6].(float64)
		switch {
		case strings.HasPrefix(name, "level=") && !strings.Contains(name, ":"):
			levelTerms, levelPs = append(levelTerms, name), append(levelPs, p)
		case name == "composition=atomic" && (p >= 0.05 || beta >= 0):
			t.Errorf("composition=atomic: beta %.3g p %.3g; want a significant negative effect", beta, p)
		}
	}
	if len(levelTerms) != len(level.Levels)-1 {
		t.Fatalf("level terms %v; want one per level but the first", levelTerms)
	}
	for i, q := range stats.Holm(levelPs) {
		if q < 0.05 {
			t.Errorf("%s: Holm-adjusted p %.3g; want no grouping effect, the cause is the number of calls", levelTerms[i], q)
		}
	}
}

func tableNames(r *Report) []string {
	var out []string
	for _, tb := range r.Tables {
		out = append(out, tb.Name)
	}
	return out
}
