package score_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
)

// The corpus is real agent work: LLM agents that never read a scenario's
// gold solved the scenarios through granite serve --record and wrote
// their answers (testdata/corpus/<domain>/<scenario>.<level>.*). Every
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
	levels := map[string]int{}
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
		levels[string(e.rc.Level)]++
	}
	// Every scenario at L4, and at least three per domain at L1.
	scenarios := 0
	for _, d := range spec.Domains {
		scenarios += len(d.Scenarios)
	}
	if levels["L4"] < scenarios || levels["L1"] < 3*len(spec.Domains) {
		t.Errorf("corpus covers %d recordings at L4 and %d at L1; want every one of %d scenarios at L4 and three per domain at L1", levels["L4"], levels["L1"], scenarios)
	}
}

func TestCorpusMutantsFail(t *testing.T) {
	spec, ctx := spectest.All(t), context.Background()
	counts := map[string]int{}
	for _, e := range loadCorpus(t) {
		if e.wrong != "" {
			continue
		}
		// The gold a recording is scored against, as ScoreRecording
		// prepares it.
		d, s := spec.Domain(e.rc.Domain), (*speclang.Scenario)(nil)
		for _, sc := range d.Scenarios {
			if sc.ID == e.rc.Scenario {
				s = sc
			}
		}
		dom, ok := gen.Lookup(d.Name)
		if s == nil || !ok {
			t.Fatalf("%s: no scenario %s in domain %s", e.name, e.rc.Scenario, e.rc.Domain)
		}
		rights, err := gold.RightsOf(ctx, dom, s)
		if err != nil {
			t.Fatal(err)
		}
		g := score.NewGold(d, s, e.rc.Level, dom, rights)
		for _, m := range score.Mutants(g, s, e.answer, e.rc.FinalStore) {
			rc := *e.rc
			if m.Store != nil {
				rc.FinalStore = m.Store
			}
			rec, err := harness.ScoreRecording(ctx, spec, gen.Lookup, &rc, "mutant", m.Answer)
			if err != nil {
				t.Fatalf("%s %s: %v", e.name, m.Kind, err)
			}
			counts[m.Kind]++
			if rec.Metrics.TC != 0 {
				t.Errorf("%s: the %s mutant scores tc 1; answer %q", e.name, m.Kind, m.Answer[max(0, len(m.Answer)-200):])
			}
		}
	}
	for _, kind := range []string{"swap", "count", "no-subject", "non-member", "dictated", "untouched-row"} {
		if counts[kind] == 0 {
			t.Errorf("no %s mutant made from the corpus", kind)
		}
	}
	t.Logf("mutants, all failed: %v", counts)
}
