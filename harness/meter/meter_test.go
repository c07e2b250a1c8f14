//go:build !nonvml

package meter

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// fakeGPU is a GPU behind go-nvml's mock: its energy counter (mJ) and
// power (mW) are set by the test.
type fakeGPU struct {
	energy    atomic.Uint64
	power     atomic.Uint32
	noCounter bool
	lost      atomic.Bool // every read fails from now on
	slow      time.Duration
}

func (g *fakeGPU) device(name string) *mock.Device {
	return &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) {
			if g.noCounter {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if g.lost.Load() {
				return 0, nvml.ERROR_GPU_IS_LOST
			}
			return g.energy.Load(), nvml.SUCCESS
		},
		GetPowerUsageFunc: func() (uint32, nvml.Return) {
			time.Sleep(g.slow)
			if g.lost.Load() {
				return 0, nvml.ERROR_GPU_IS_LOST
			}
			return g.power.Load(), nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 80, Memory: 40}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 16 << 30, Used: 6 << 30}, nvml.SUCCESS
		},
		GetTemperatureFunc: func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 61, nvml.SUCCESS },
		GetClockInfoFunc:   func(nvml.ClockType) (uint32, nvml.Return) { return 1590, nvml.SUCCESS },
	}
}

// fakeLib is go-nvml's mock library holding the fake GPUs.
func fakeLib(gpus ...*fakeGPU) *mock.Interface {
	devs := make([]nvml.Device, len(gpus))
	for i, g := range gpus {
		devs[i] = g.device("Tesla T4")
	}
	return &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) { return devs[i], nvml.SUCCESS },
	}
}

func testNVML(t *testing.T, gpus ...*fakeGPU) (*nvmlMeter, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	m, err := newNVML(fakeLib(gpus...), Options{Interval: 100 * time.Millisecond}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

func TestCounterDeltaIsExact(t *testing.T) {
	g := &fakeGPU{}
	g.energy.Store(1_000_000)
	g.power.Store(70_000)
	m, c := testNVML(t, g)
	m.s.sampleOnce()
	mk := m.Mark()
	for range 20 {
		c.add(100 * time.Millisecond)
		g.energy.Add(12_500) // 125 W
		m.s.sampleOnce()
	}
	r := m.Since(mk)
	if r.EnergyJ == nil || *r.EnergyJ != 250 || r.Estimated || r.Method != "energy counter delta" || r.Meter != NVML {
		t.Fatalf("%+v", r)
	}
	if tm := r.Telemetry; tm == nil || tm.Samples != 21 || tm.MeanPowerW != 70 || tm.MeanGPUUtil != 80 || tm.MaxMemUsedMiB != 6144 || tm.MaxTempC != 61 || tm.MeanSMClockMHz != 1590 {
		t.Errorf("telemetry %+v", r.Telemetry)
	}
}

func TestShortWindowsIntegratePower(t *testing.T) {
	g := &fakeGPU{}
	g.power.Store(100_000)
	m, c := testNVML(t, g)
	m.s.sampleOnce()
	mk := m.Mark()
	c.add(100 * time.Millisecond)
	m.s.sampleOnce()
	c.add(100 * time.Millisecond)
	r := m.Since(mk)
	if *r.EnergyJ != 20 || !r.Estimated || !strings.Contains(r.Method, "window shorter than three counter updates") {
		t.Fatalf("%+v", r)
	}
}

func TestNoCounterFallsBackToTrapezoid(t *testing.T) {
	g := &fakeGPU{noCounter: true}
	m, c := testNVML(t, g)
	mk := m.Mark()
	for _, mw := range []uint32{50_000, 100_000, 100_000} {
		g.power.Store(mw)
		m.s.sampleOnce()
		if mw != 100_000 || c.now().Sub(mk.T) < 2*time.Second {
			c.add(time.Second)
		}
	}
	// Samples at 0 s (50 W), 1 s (100 W), 2 s (100 W): 75 + 100 J.
	r := m.Since(mk)
	if *r.EnergyJ != 175 || !r.Estimated || !r.Devices[0].Estimated || !strings.Contains(r.Method, "no energy counter") {
		t.Fatalf("%+v", r)
	}
}

func TestTwoDevicesSumAndAFailingOneIsReported(t *testing.T) {
	a, b := &fakeGPU{}, &fakeGPU{}
	a.power.Store(60_000)
	b.power.Store(90_000)
	m, c := testNVML(t, a, b)
	mk := m.Mark()
	c.add(time.Second)
	a.energy.Add(60_000)
	b.energy.Add(90_000)
	m.s.sampleOnce()
	r := m.Since(mk)
	if *r.EnergyJ != 150 || len(r.Devices) != 2 || r.Devices[0].EnergyJ != 60 || r.Devices[1].EnergyJ != 90 || len(r.Errors) != 0 {
		t.Fatalf("%+v", r)
	}
	if r.Telemetry.MeanPowerW != 150 {
		t.Errorf("power summed over devices: %v", r.Telemetry.MeanPowerW)
	}
	// GPU 1 falls off the bus: its readings fail, GPU 0 goes on.
	mk = m.Mark()
	b.lost.Store(true)
	c.add(time.Second)
	a.energy.Add(60_000)
	m.s.sampleOnce()
	r = m.Since(mk)
	if r.Devices[0].EnergyJ != 60 || r.Devices[1].Error == "" || !strings.Contains(strings.Join(r.Errors, ";"), "GPU 1: power: ") {
		t.Fatalf("%+v", r)
	}
}

func TestSamplerStopsAndNeverBlocksATrial(t *testing.T) {
	before := runtime.NumGoroutine()
	g := &fakeGPU{slow: 300 * time.Millisecond} // a device whose reads take 300 ms
	g.power.Store(50_000)
	m, err := newNVML(fakeLib(g), Options{Interval: time.Millisecond}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	m.s.start()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	mk := m.Mark()
	m.Since(mk)
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("Mark and Since took %v while the sampler was busy", d)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before, %d after Close", before, after)
	}
}

func TestWithoutTheDriver(t *testing.T) {
	lib := fakeLib()
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if _, err := OpenNVML(lib, Options{}); err == nil || !strings.Contains(err.Error(), "is the NVIDIA driver installed?") {
		t.Errorf("no library: %v", err)
	}
	// On a machine without a GPU: the real library fails to load, no crash;
	// auto falls back with a reason.
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has the NVIDIA driver")
	}
	if _, err := Open(Options{Kind: NVML}); err == nil {
		t.Error("explicit nvml without a driver opened")
	}
	m, err := Open(Options{Kind: Auto, PowercapRoot: t.TempDir(), Idle: -1})
	if err != nil || m.Name() != None || !strings.Contains(m.Describe(), "nvml:") || !strings.Contains(m.Describe(), "rapl: no intel-rapl zone") {
		t.Errorf("auto: %v %v", m, err)
	}
	if r := m.Since(m.Mark()); r.Meter != None || r.EnergyJ != nil {
		t.Errorf("none: %+v", r)
	}
}

// fakePowercap writes a powercap tree: two packages with a sub-zone each.
func fakePowercap(t *testing.T) string {
	root := t.TempDir()
	for _, z := range []struct{ dir, name, energy string }{
		{"intel-rapl:0", "package-0", "999000000"},
		{"intel-rapl:0:0", "core", "5"},
		{"intel-rapl:1", "package-1", "1000"},
	} {
		d := filepath.Join(root, z.dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"name": z.name, "energy_uj": z.energy, "max_energy_range_uj": "1000000000"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestRAPLHandlesWraparound(t *testing.T) {
	root := fakePowercap(t)
	c := &clock{t: time.Now()}
	m, err := newRAPL(Options{PowercapRoot: root, Interval: 100 * time.Millisecond}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	mk := m.Mark()
	c.add(time.Second)
	// Package 0 wraps: 999,000,000 -> max 1,000,000,000 -> 1,000,000 µJ.
	if err := os.WriteFile(filepath.Join(root, "intel-rapl:0", "energy_uj"), []byte("1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "intel-rapl:1", "energy_uj"), []byte("3001000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := m.Since(mk)
	if len(r.Devices) != 2 || r.Devices[0].EnergyJ != 2 || r.Devices[1].EnergyJ != 3 || math.Abs(*r.EnergyJ-5) > 1e-9 || r.Estimated || r.Meter != RAPL {
		t.Fatalf("%+v", r)
	}
	if _, err := newRAPL(Options{PowercapRoot: t.TempDir()}, time.Now); err == nil {
		t.Error("empty powercap tree opened")
	}
}

// BenchmarkSample is one sampling pass over one GPU against the mock: at
// the default 100 ms interval its cost, divided by 100 ms, is the
// sampler's share of one core. Target: under 0.5%.
func BenchmarkSample(b *testing.B) {
	g := &fakeGPU{}
	g.power.Store(70_000)
	m, err := newNVML(fakeLib(g), Options{Interval: 100 * time.Millisecond}, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.s.sampleOnce()
		if len(m.s.samples) > 1000 {
			m.s.samples = m.s.samples[:0]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(100*time.Millisecond)*100, "%core@100ms")
}
