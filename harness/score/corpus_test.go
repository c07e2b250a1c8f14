package score_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/spectest"
)

// The corpus is real agent work: LLM agents that never read a scenario's
// gold solved the scenarios through granite serve --record and wrote
// their answers (testdata/corpus/<domain>/<scenario>.<level>.*), every
// scenario at every level. Every
// recording must score TC 1, or carry the reason the agent was wrong
// (.agent-wrong.txt) and score 0; and every wrong-answer and wrong-store
// mutant made from a right one must score 0.
//
// The recordings are scored as granite score scores them, through the
// harness (which runs the gold for the right stores), so this is an
// external test of package score; the mutants are made inside the
// package (mutants_test.go), from the gold's facts and changes.

type corpusEntry struct {
	name   string
	rc     *harness.Recording
	answer string
	wrong  string
}

func loadCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*/*.record.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusEntry
	for _, f := range files {
		base := strings.TrimSuffix(f, ".record.json")
		rc, err := harness.ReadRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := os.ReadFile(base + ".answer.txt")
		if err != nil {
			t.Errorf("a recording without its answer: %v", err)
			continue
		}
		wrong, _ := os.ReadFile(base + ".agent-wrong.txt")
		out = append(out, corpusEntry{filepath.Base(base), rc, string(ans), strings.TrimSpace(string(wrong))})
	}
	return out
}

func TestCorpusScores(t *testing.T) {
	spec, ctx := spectest.All(t), context.Background()
	covered := map[string]map[string]bool{} // domain → scenario.level
	for _, e := range loadCorpus(t) {
		rec, err := harness.ScoreRecording(ctx, spec, gen.Lookup, e.rc, "corpus", e.answer)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		want := 1.0
		if e.wrong != "" {
			want = 0
		}
		if rec.Metrics.TC != want {
			t.Errorf("%s: tc %v, want %v (agent wrong: %q); why: %q", e.name, rec.Metrics.TC, want, e.wrong, rec.Metrics.Why)
		}
		if covered[e.rc.Domain] == nil {
			covered[e.rc.Domain] = map[string]bool{}
		}
		covered[e.rc.Domain][e.rc.Scenario+"."+string(e.rc.Level)] = true
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
		if e.wrong != "" {
			continue
		}
		verdicts, err := harness.MutateRecording(ctx, spec, gen.Lookup, e.rc, e.answer)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		ms.Add(e.name, verdicts)
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
