package harness

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// TestGPUCounterAgainstIntegration runs only on a GPU node
// (GRANITE_GPU_CHECK=1): trials against the Ollama double, slowed so each
// spans several counter updates, measured by the real NVML meter; it
// reports how the energy counter and integrated power differ per trial
// and writes the trials to $GRANITE_GPU_OUT.
func TestGPUCounterAgainstIntegration(t *testing.T) {
	if os.Getenv("GRANITE_GPU_CHECK") == "" {
		t.Skip("set GRANITE_GPU_CHECK=1 on a node with an NVIDIA GPU")
	}
	m, err := meter.Open(meter.Options{Kind: meter.NVML, Interval: 100 * time.Millisecond, Idle: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	t.Log(m.Describe())
	spec, lookup := tinySpec(t)
	f := newFakeOllama(t, []string{"fake:gold"}, func(req chatRequest, n int) step {
		s := goldModel(spec, lookup)(req, n)
		s.delay = 400 * time.Millisecond
		return s
	})
	cfg := testConfig("gpu", f.URL, "fake:gold")
	cfg.Granularities = []mcpdomain.Level{mcpdomain.L4}
	cfg.Repetitions = 2
	out := os.Getenv("GRANITE_GPU_OUT")
	if out == "" {
		out = t.TempDir()
	}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: m}); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	type cmp struct {
		Trial       string  `json:"trial"`
		WallS       float64 `json:"wall_s"`
		CounterJ    float64 `json:"counter_j"`
		IntegratedJ float64 `json:"integrated_j"`
		DiffPct     float64 `json:"diff_pct"`
	}
	var rows []cmp
	var sum, sumAbs float64
	for _, r := range recs {
		e := r.Energy
		if e == nil || e.EnergyJ == nil || e.IntegratedJ == nil || e.Estimated {
			t.Logf("%s: not a counter reading: %+v", r.TrialID, e)
			continue
		}
		d := 100 * (*e.EnergyJ - *e.IntegratedJ) / *e.IntegratedJ
		rows = append(rows, cmp{r.TrialID, r.Metrics.WallS, *e.EnergyJ, *e.IntegratedJ, d})
		sum += d
		sumAbs += math.Abs(d)
		t.Logf("%-32s %5.2f s  counter %8.2f J  integrated %8.2f J  %+6.2f%%", r.TrialID, r.Metrics.WallS, *e.EnergyJ, *e.IntegratedJ, d)
	}
	if len(rows) == 0 {
		t.Fatal("no trial was measured by the counter")
	}
	t.Logf("%d trials: mean difference %+.2f%%, mean absolute %.2f%%, idle %.1f W", len(rows), sum/float64(len(rows)), sumAbs/float64(len(rows)), m.IdleW())
	b, _ := json.MarshalIndent(rows, "", "  ")
	_ = os.WriteFile(filepath.Join(out, "counter_vs_integrated.json"), b, 0o644)
}
