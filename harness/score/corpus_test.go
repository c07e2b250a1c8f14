package score_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/spectest"
)

// The corpus is real agent work: LLM agents that never read a scenario's
// gold solved the scenarios through granite serve --record and wrote
// their answers (testdata/corpus/<domain>/<scenario>.<level>.*), every
// scenario at every level. Every recording must score TC 1, or carry the
// reason the agent was wrong (.agent-wrong.txt) and score 0; and every
// variant the catalogue derives from a right one (score.Operators, in
// mutants.go) must score as its operator requires.
//
// The recordings are scored as granite score scores them, through the
// harness (which runs the gold for the right stores), so this is an
// external test of package score.

func loadCorpus(t *testing.T) []recorded.CorpusEntry {
	t.Helper()
	entries, err := recorded.ReadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestCorpusScores(t *testing.T) {
	spec, ctx := spectest.All(t), context.Background()
	covered := map[string]map[string]bool{} // domain → scenario.level
	for _, e := range loadCorpus(t) {
		rec, err := harness.ScoreRecording(ctx, spec, gen.Lookup, e.Recording, "corpus", e.Answer)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		want := 1.0
		if e.Wrong != "" {
			want = 0
		}
		if rec.Metrics.TC != want {
			t.Errorf("%s: tc %v, want %v (agent wrong: %q); why: %q", e.Name, rec.Metrics.TC, want, e.Wrong, rec.Metrics.Why)
		}
		if covered[e.Recording.Domain] == nil {
			covered[e.Recording.Domain] = map[string]bool{}
		}
		covered[e.Recording.Domain][e.Recording.Scenario+"."+string(e.Recording.Level)] = true
	}
	// The project's own domains (the paper's, as its config names them)
	// are covered: every scenario at every level. A domain added as spec
	// files alone has no recordings yet; it is named, not failed.
	paper, err := harness.LoadConfig("paper", spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range spec.Domains {
		if !slices.Contains(paper.Domains, d.Name) {
			if covered[d.Name] == nil {
				t.Logf("warning: domain %s has no corpus recordings (testdata/corpus/%s/): record LLM agents solving its scenarios through granite serve --scenario … --record", d.Name, d.Name)
			}
			continue
		}
		for _, s := range d.Scenarios {
			for _, l := range level.Levels {
				if !covered[d.Name][s.ID+"."+string(l)] {
					t.Errorf("the corpus has no recording of %s at %s", s.ID, l)
				}
			}
		}
	}
}

// TestMutation proves the verdict by mutation (score.Operators) on every
// right recording of the corpus and on the oracle's solution of every
// scenario at every level: every wrong variant must score TC 0 and every
// right rewrite TC 1. It logs the score per operator.
func TestMutation(t *testing.T) {
	spec, ctx := spectest.All(t), context.Background()
	ms := &score.MutationScore{}
	for _, e := range loadCorpus(t) {
		if e.Wrong != "" {
			continue
		}
		verdicts, err := harness.MutateRecording(ctx, spec, gen.Lookup, e.Recording, e.Answer)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		ms.Add(e.Name, verdicts)
	}
	oracle, err := gold.Mutation(ctx, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range oracle.Operators() {
		for _, f := range o.Failures {
			t.Error(f)
		}
	}
	for _, o := range ms.Operators() {
		for _, f := range o.Failures {
			t.Error(f)
		}
	}
	made := map[string]bool{}
	for _, side := range []struct {
		name string
		ms   *score.MutationScore
	}{{"corpus", ms}, {"oracle", oracle}} {
		for _, o := range side.ms.Operators() {
			made[o.Operator] = true
			t.Logf("%s %-18s %5d made, %5d as required", side.name, o.Operator, o.Made, o.AsRequired)
		}
	}
	// Every operator of the catalogue finds something to work on.
	for _, op := range score.Operators {
		if !made[op.Name] {
			t.Errorf("no %s variant made from the corpus or the oracle", op.Name)
		}
	}
}
