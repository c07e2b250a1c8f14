//go:build !nonvml

// These tests measure with go-nvml's mock, which needs cgo.

package harness

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
)

// TestParallelTrials: parallel: 4 runs up to four trials of the model at
// once, each recorded once with its parallel and a shared energy reading
// whose parts add up to what the meter measured; the journal holds every
// trial once and a resume has nothing left to run.
func TestParallelTrials(t *testing.T) {
	spec, lookup := tinySpec(t)
	var active, peak atomic.Int32
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
		n := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(30 * time.Millisecond) // the reply's latency, with others in flight
		return openaitest.Step{Content: "No."}
	})
	m, err := meter.OpenNVML(steadyGPU(), meter.Options{Interval: 5 * time.Millisecond, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := openaiConfig("parallel", f.URL, "m")
	cfg.Models[0].Parallel = 4
	cfg.Repetitions = 2
	out := t.TempDir()
	start := time.Now()
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: m})
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	checkRecordSchema(t, filepath.Join(out, results.TrialsFile))
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != sum.Planned || sum.Ran != sum.Planned || peak.Load() != 4 {
		t.Fatalf("%d records of %d planned, %d ran, %d requests at once at most; want every trial once and 4 at once", len(recs), sum.Planned, sum.Ran, peak.Load())
	}
	seen := map[string]bool{}
	var shares float64
	for _, r := range recs {
		if seen[r.TrialID] {
			t.Errorf("%s recorded twice", r.TrialID)
		}
		seen[r.TrialID] = true
		e := r.Energy
		if r.Parallel != 4 || e == nil || !e.Shared || e.EnergyJ == nil || e.WindowJ == nil || *e.EnergyJ > *e.WindowJ+1e-9 || e.MeanActive < 1 || e.MeanActive > 4 {
			t.Fatalf("%s: parallel %d, energy %+v", r.TrialID, r.Parallel, e)
		}
		if *r.Metrics.EnergyJ != *e.EnergyJ {
			t.Errorf("%s: metrics energy %v, reading %v", r.TrialID, *r.Metrics.EnergyJ, *e.EnergyJ)
		}
		shares += *e.EnergyJ
	}
	// The steady GPU draws 100 W: the parts cannot add up to more than the
	// run's wall time at 100 W, and the trials overlapped, so they add up
	// to less than their windows do.
	if shares <= 0 || shares > 100*wall.Seconds() {
		t.Errorf("the trials' parts add up to %.2f J over a %.2f s run at 100 W", shares, wall.Seconds())
	}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: m, Resume: true}); err != nil {
		t.Fatal(err)
	}
	again, _, _ := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if len(again) != len(recs) {
		t.Errorf("a resume of a finished parallel run: %d records, want %d", len(again), len(recs))
	}
}

// TestParallelOnOllama: parallel on an Ollama model runs that many trials
// at once on each host (which needs OLLAMA_NUM_PARALLEL there).
func TestParallelOnOllama(t *testing.T) {
	spec, lookup := tinySpec(t)
	var active, peak atomic.Int32
	f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step {
		n := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(30 * time.Millisecond)
		return ollamatest.Step{Content: "No."}
	})
	cfg := testConfig("parallel-ollama", f.URL)
	cfg.Models = []results.ModelEntry{{Name: "m", Parallel: 3}}
	recs, err := runTrials(t, cfg, spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 3 || len(recs) == 0 || recs[0].Parallel != 3 || recs[0].Agent != "ollama" {
		t.Errorf("%d at once, %d records (first %+v); want 3 at once", peak.Load(), len(recs), recs[0])
	}
}
