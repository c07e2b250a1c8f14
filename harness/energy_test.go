package harness

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
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
	live := NewLive()
	cfg := testConfig("metered", "http://127.0.0.1:1", Oracle, Silent)
	out := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: m, Live: live}); err != nil {
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
		if r.Model == Oracle {
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
	srv := httptest.NewServer(live.Handler())
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
