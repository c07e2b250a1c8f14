//go:build !nonvml

package meter

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/mcpgranite/granite/harness/results"
)

// counterPeriod is how often NVML refreshes the total-energy counter; a
// window shorter than a few periods is measured from sampled power.
const counterPeriod = 100 * time.Millisecond

type gpu struct {
	index   int
	name    string
	h       nvml.Device
	counter bool // the total-energy counter is supported
}

type nvmlMeter struct {
	lib  nvml.Interface
	gpus []gpu
	s    *sampler
	idle float64
	now  func() time.Time

	errs deviceErrors
}

// nvmlBuiltIn says this binary has the NVML meter (cgo, go-nvml).
const nvmlBuiltIn = true

// openNVML opens the system's NVML library.
func openNVML(o Options) (Meter, error) { return OpenNVML(nil, o) }

// OpenNVML opens the GPUs through lib (nil: the system's NVML library).
// Without the driver it returns an error; it never crashes.
func OpenNVML(lib nvml.Interface, o Options) (Meter, error) {
	o.defaults()
	if lib == nil {
		lib = nvml.New()
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml: %v (is the NVIDIA driver installed? libnvidia-ml.so.1 must load)", ret)
	}
	m, err := newNVML(lib, o, time.Now)
	if err != nil {
		lib.Shutdown()
		return nil, err
	}
	m.idle = meanPower(m.s.startIdle(o.Idle))
	return m, nil
}

// newNVML finds the devices; the sampler is not started.
func newNVML(lib nvml.Interface, o Options, now func() time.Time) (*nvmlMeter, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml: device count: %v", ret)
	}
	if n == 0 {
		return nil, fmt.Errorf("nvml: the driver sees no GPU")
	}
	idx := o.Devices
	if len(idx) == 0 {
		for i := range n {
			idx = append(idx, i)
		}
	}
	m := &nvmlMeter{lib: lib, now: now}
	for _, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("nvml: no GPU %d (the driver sees %d)", i, n)
		}
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml: GPU %d: %v", i, ret)
		}
		name, _ := h.GetName()
		_, ret = h.GetTotalEnergyConsumption()
		m.gpus = append(m.gpus, gpu{index: i, name: name, h: h, counter: ret == nvml.SUCCESS})
	}
	m.s = newSampler(o.Interval, now, m.read)
	return m, nil
}

func (m *nvmlMeter) Name() string { return NVML }

func (m *nvmlMeter) Describe() string {
	var ds []string
	for _, g := range m.gpus {
		c := "energy counter"
		if !g.counter {
			c = "no energy counter: power integrated"
		}
		ds = append(ds, fmt.Sprintf("GPU %d %s (%s)", g.index, g.name, c))
	}
	return fmt.Sprintf("meter: nvml, %s, sampled every %s, idle %.1f W", strings.Join(ds, "; "), m.s.interval, m.idle)
}

// fail records a device's first error; a failing device is reported in
// every reading, not fatal.
func (m *nvmlMeter) fail(i int, what string, ret nvml.Return) {
	m.errs.note(i, fmt.Sprintf("GPU %d: %s: %v", i, what, ret))
}

// read samples every device once.
func (m *nvmlMeter) read(t time.Time) []Sample {
	out := make([]Sample, 0, len(m.gpus))
	for _, g := range m.gpus {
		p, ret := g.h.GetPowerUsage()
		if ret != nvml.SUCCESS {
			m.fail(g.index, "power", ret)
			continue
		}
		s := Sample{T: t, Device: g.index, PowerW: float64(p) / 1000, EnergyJ: math.NaN()}
		if u, ret := g.h.GetUtilizationRates(); ret == nvml.SUCCESS {
			s.GPUUtil, s.MemUtil = float64(u.Gpu), float64(u.Memory)
		}
		if mem, ret := g.h.GetMemoryInfo(); ret == nvml.SUCCESS {
			s.MemUsedMiB = float64(mem.Used) / (1 << 20)
		}
		if c, ret := g.h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			s.TempC = float64(c)
		}
		if c, ret := g.h.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			s.SMClockMHz = float64(c)
		}
		out = append(out, s)
	}
	return out
}

// counters reads every device's energy counter in joules (NaN: none).
func (m *nvmlMeter) counters() []float64 {
	out := make([]float64, len(m.gpus))
	for i, g := range m.gpus {
		out[i] = math.NaN()
		if !g.counter {
			continue
		}
		mj, ret := g.h.GetTotalEnergyConsumption()
		if ret != nvml.SUCCESS {
			m.fail(g.index, "energy counter", ret)
			continue
		}
		out[i] = float64(mj) / 1000
	}
	return out
}

func (m *nvmlMeter) Mark() Mark { return Mark{T: m.now(), counters: m.counters()} }

// Since measures a trial: each device's counter delta when the counter is
// supported and the window spans at least three counter updates, else its
// sampled power integrated over the window (and the reading says so).
func (m *nvmlMeter) Since(mk Mark) results.Reading {
	end := m.now()
	endC := m.counters()
	samples := m.s.window(mk.T, end)
	r := results.Reading{Meter: NVML, IdleW: m.idle}
	total, integrated := 0.0, 0.0
	integratedOK := true
	var methods []string
	for i, g := range m.gpus {
		var own []Sample
		for _, s := range samples {
			if s.Device == g.index {
				own = append(own, s)
			}
		}
		ie, ierr := trapezoid(own, mk.T, end)
		integrated += ie
		integratedOK = integratedOK && ierr == nil
		d := results.DeviceReading{Index: g.index, Name: g.name}
		start, stop := math.NaN(), endC[i]
		if i < len(mk.counters) {
			start = mk.counters[i]
		}
		switch {
		case !math.IsNaN(start) && !math.IsNaN(stop) && end.Sub(mk.T) >= 3*counterPeriod:
			d.EnergyJ = stop - start
		default:
			if ierr != nil {
				d.Error = ierr.Error()
			}
			d.EnergyJ, d.Estimated = ie, true
			why := "no energy counter"
			if g.counter {
				why = "window shorter than three counter updates"
			}
			methods = append(methods, fmt.Sprintf("GPU %d: sampled power integrated (trapezoid), %s", g.index, why))
		}
		total += d.EnergyJ
		r.Estimated = r.Estimated || d.Estimated
		r.Devices = append(r.Devices, d)
	}
	r.EnergyJ = &total
	if integratedOK {
		r.IntegratedJ = &integrated
	}
	if len(methods) == 0 {
		r.Method = "energy counter delta"
	} else {
		r.Method = strings.Join(methods, "; ")
	}
	r.Telemetry = summarise(inWindow(samples, mk.T, end))
	m.errs.attach(&r)
	return r
}

func (m *nvmlMeter) IdleW() float64   { return m.idle }
func (m *nvmlMeter) Latest() []Sample { return m.s.last() }

func (m *nvmlMeter) Close() error {
	m.s.close()
	if ret := m.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %v", ret)
	}
	return nil
}

// probeNVML fills in what the NVIDIA driver sees.
func probeNVML(p *Probe) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		p.NVML.Error = fmt.Sprintf("%v (no NVIDIA driver?)", ret)
		return
	}
	defer lib.Shutdown()
	p.NVML.Driver, _ = lib.SystemGetDriverVersion()
	n, _ := lib.DeviceGetCount()
	for i := range n {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		g := GPUProbe{Index: i}
		g.Name, _ = h.GetName()
		g.UUID, _ = h.GetUUID()
		_, ret = h.GetTotalEnergyConsumption()
		g.EnergyCounter = ret == nvml.SUCCESS
		if mw, ret := h.GetEnforcedPowerLimit(); ret == nvml.SUCCESS {
			g.PowerLimitW = float64(mw) / 1000
		}
		p.NVML.Devices = append(p.NVML.Devices, g)
	}
	p.NVML.OK = len(p.NVML.Devices) > 0
	if !p.NVML.OK {
		p.NVML.Error = "the driver sees no GPU"
	}
}
