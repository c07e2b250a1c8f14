//go:build !nonvml

// These tests measure with go-nvml's mock, which needs cgo.

package harness

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/live"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
)

// steadyGPU is go-nvml's mock of a GPU drawing a steady 100 W: its energy
// counter grows with the wall clock.
func steadyGPU() *mock.Interface {
	start := time.Now()
	dev := &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) {
			return uint64(time.Since(start).Milliseconds() * 100), nvml.SUCCESS // 100 W = 100 mJ/ms
		},
		GetPowerUsageFunc:       func() (uint32, nvml.Return) { return 100_000, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 55, Memory: 20}, nvml.SUCCESS },
		GetMemoryInfoFunc:       func() (nvml.Memory, nvml.Return) { return nvml.Memory{Used: 4 << 30}, nvml.SUCCESS },
		GetTemperatureFunc:      func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 58, nvml.SUCCESS },
		GetClockInfoFunc:        func(nvml.ClockType) (uint32, nvml.Return) { return 1500, nvml.SUCCESS },
	}
	return &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(int) (nvml.Device, nvml.Return) { return dev, nvml.SUCCESS },
	}
}

// TestMeteredRunRecordsEnergy runs trials with an NVML meter over go-nvml's
// mock: every record carries the meter and its energy, and live metrics
// show the run. (The report's joules per completed task are checked
// against records in harness/report.)
func TestMeteredRunRecordsEnergy(t *testing.T) {
	spec, lookup := tinySpec(t)
	m, err := meter.OpenNVML(steadyGPU(), meter.Options{Interval: 5 * time.Millisecond, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	metrics := live.New()
	cfg := testConfig("metered", "http://127.0.0.1:1", agent.Oracle, agent.Silent)
	out := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: m, Live: metrics}); err != nil {
		t.Fatal(err)
	}
	checkRecordSchema(t, filepath.Join(out, results.TrialsFile))
	recs, _, _ := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	var energy, successes float64
	for _, r := range recs {
		e := r.Energy
		if e == nil || e.Meter != meter.NVML || e.EnergyJ == nil || *e.EnergyJ < 0 || r.Metrics.EnergyJ == nil || *r.Metrics.EnergyJ != *e.EnergyJ || len(e.Devices) != 1 {
			t.Fatalf("%s: energy %+v", r.TrialID, e)
		}
		if r.Model == agent.Oracle {
			energy += *e.EnergyJ
			successes += r.Metrics.TC
		}
	}
	man, _ := results.ReadManifest(out)
	if man.Meter != meter.NVML || !strings.Contains(man.MeterInfo, "GPU 0 Tesla T4 (energy counter)") {
		t.Errorf("run.json meter: %q %q", man.Meter, man.MeterInfo)
	}
	if successes != 16 || energy <= 0 {
		t.Errorf("oracle: %v J over %v completed tasks", energy, successes)
	}
	srv := httptest.NewServer(metrics.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"granite_trials_planned 32", "granite_trials_done_total 32", `granite_device_power_watts{device="0",meter="nvml"} 100`, `granite_gpu_utilization_percent{device="0"} 55`, "granite_trial_energy_joules_total "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestResumeKeepsWhatEarlierRunsLearned interrupts a run of two models in
// the second one's first trial and resumes it twice: run.json must keep
// both models' /api/show details although the first resume touches only
// the second model, one warm-up per model and host, and the meter line
// although the last resume has nothing to measure.
func TestResumeKeepsWhatEarlierRunsLearned(t *testing.T) {
	spec, lookup := tinySpec(t)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	gold := goldModel(spec, lookup)
	f := ollamatest.NewServer(t, []string{"fake:a", "fake:b"}, func(req ollamatest.Request, n int) ollamatest.Step {
		if req.Model == "fake:b" {
			interrupt() // Ctrl-C as fake:b's first trials start
		}
		return gold(req, n)
	})
	m, err := meter.OpenNVML(steadyGPU(), meter.Options{Interval: 5 * time.Millisecond, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := testConfig("learned", f.URL, "fake:a", "fake:b")
	out := t.TempDir()
	if _, err := Run(ctx, cfg, spec, Options{Out: out, Lookup: lookup, Meter: m}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	first, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, resume := range []struct {
		name  string
		meter meter.Meter
		ran   func(n int) bool
	}{
		{"fake:b's trials", m, func(n int) bool { return n > 0 && n < 32 }},
		{"nothing left", nil, func(n int) bool { return n == 0 }},
	} {
		sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup, Meter: resume.meter})
		if err != nil || !resume.ran(sum.Ran) {
			t.Fatalf("resume with %s: %+v %v", resume.name, sum, err)
		}
		man, err := results.ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, model := range cfg.ModelNames() {
			if info := man.Models[model]; info.Parameters != 3212749888 || info.Quantization != "Q4_K_M" {
				t.Errorf("resume with %s: run.json has %s as %+v, want what /api/show said", resume.name, model, info)
			}
		}
		var warmUps []string
		for _, w := range man.WarmUps {
			warmUps = append(warmUps, w.Model+"@"+w.Host)
		}
		if want := []string{"fake:a@" + f.URL, "fake:b@" + f.URL}; !slices.Equal(warmUps, want) {
			t.Errorf("resume with %s: warm-ups %v, want %v", resume.name, warmUps, want)
		}
		if man.Meter != meter.NVML || man.MeterInfo != first.MeterInfo || man.StartedAt != first.StartedAt {
			t.Errorf("resume with %s: meter %q %q, started %s; want %q %q, %s", resume.name, man.Meter, man.MeterInfo, man.StartedAt, meter.NVML, first.MeterInfo, first.StartedAt)
		}
	}
}
