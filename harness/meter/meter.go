// Package meter measures the energy and telemetry of each trial: GPUs
// through NVML's total-energy counter with sampled power, utilisation,
// memory, temperature and clocks; Jetson modules through their INA3221
// power rails and GPU devfreq node (tegra); or CPUs through Linux powercap
// (RAPL). NVML needs cgo: a binary built with -tags nonvml leaves it out.
// A meter starts before the first trial, samples in one goroutine at a
// fixed interval independent of trial boundaries, and answers each trial's
// window from counter deltas and the samples that fall in it.
package meter

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpgranite/granite/harness/results"
)

// Names of the meters.
const (
	None  = "none"
	NVML  = "nvml"
	Tegra = "tegra"
	RAPL  = "rapl"
	Auto  = "auto"
)

// BuiltIn lists the meters this binary can use, in the order auto tries
// them.
func BuiltIn() []string {
	if nvmlBuiltIn {
		return []string{NVML, Tegra, RAPL}
	}
	return []string{Tegra, RAPL}
}

// Options select and tune a meter.
type Options struct {
	// Kind is auto, nvml, tegra, rapl or none.
	Kind string
	// Interval is the sampling period (default 100 ms).
	Interval time.Duration
	// Devices are the GPU indices to measure (default: all).
	Devices []int
	// PowercapRoot is the powercap sysfs folder (default
	// /sys/class/powercap).
	PowercapRoot string
	// SysRoot is the sysfs root the tegra meter reads its power rails
	// and GPU devfreq node under (default /sys).
	SysRoot string
	// Idle is how long to sample before the first trial to measure idle
	// power (default 1 s; 0 keeps the default, negative skips).
	Idle time.Duration
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.PowercapRoot == "" {
		o.PowercapRoot = "/sys/class/powercap"
	}
	if o.SysRoot == "" {
		o.SysRoot = "/sys"
	}
	if o.Idle == 0 {
		o.Idle = time.Second
	}
}

// Meter measures trials. Mark and Since never wait for the sampler.
type Meter interface {
	// Name is nvml, rapl or none.
	Name() string
	// Describe says in one line what is measured.
	Describe() string
	// Mark notes the start of a trial.
	Mark() Mark
	// Since measures from a mark to now.
	Since(Mark) results.Reading
	// IdleW is the power measured before the first trial (0: unknown).
	IdleW() float64
	// Latest returns the newest sample of each device, for live metrics.
	Latest() []Sample
	// Close stops sampling and releases the driver.
	Close() error
}

// Mark is a trial's start: the time and each device's energy counter.
type Mark struct {
	T        time.Time
	counters []float64 // joules; NaN when unread
}

// Sample is one reading of one device.
type Sample struct {
	T          time.Time `json:"t"`
	Device     int       `json:"device"`
	PowerW     float64   `json:"power_w"`
	GPUUtil    float64   `json:"gpu_util_pct"`
	MemUtil    float64   `json:"mem_util_pct"`
	MemUsedMiB float64   `json:"mem_used_mib"`
	TempC      float64   `json:"temp_c"`
	SMClockMHz float64   `json:"sm_clock_mhz"`
	// EnergyJ is the device's energy counter at T (NaN: none).
	EnergyJ float64 `json:"-"`
}

// Open returns the meter the options ask for. auto takes NVML when the
// driver loads and sees a GPU, else the tegra rails when the node has
// them, else RAPL when its counters are readable, else none; an explicit
// meter that cannot measure is an error, before any trial runs.
func Open(o Options) (Meter, error) {
	o.defaults()
	switch o.Kind {
	case "", None:
		return none{}, nil
	case NVML:
		return openNVML(o)
	case Tegra:
		return OpenTegra(o)
	case RAPL:
		return OpenRAPL(o)
	case Auto:
		var why []string
		for _, open := range []func(Options) (Meter, error){openNVML, OpenTegra, OpenRAPL} {
			m, err := open(o)
			if err == nil {
				return m, nil
			}
			why = append(why, err.Error())
		}
		return none{why: why}, nil
	}
	return nil, fmt.Errorf("meter %q: expected auto, nvml, tegra, rapl or none", o.Kind)
}

// none measures nothing, and says why.
type none struct{ why []string }

func (none) Name() string { return None }
func (n none) Describe() string {
	if len(n.why) == 0 {
		return "meter: none"
	}
	return "meter: none (" + strings.Join(n.why, "; ") + ")"
}
func (none) Mark() Mark                 { return Mark{T: time.Now()} }
func (none) Since(Mark) results.Reading { return results.Reading{Meter: None} }
func (none) IdleW() float64             { return 0 }
func (none) Latest() []Sample           { return nil }
func (none) Close() error               { return nil }

// deviceErrors keeps each device's first error, which every later
// reading reports: a failing device is reported, never fatal.
type deviceErrors struct {
	mu sync.Mutex
	m  map[int]string
}

func (e *deviceErrors) note(device int, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[int]string{}
	}
	if _, ok := e.m[device]; !ok {
		e.m[device] = msg
	}
}

// attach adds the errors to a reading, in device order, and to the
// readings of the devices they belong to.
func (e *deviceErrors) attach(r *results.Reading) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range r.Devices {
		d := &r.Devices[k]
		if msg, ok := e.m[d.Index]; ok {
			r.Errors = append(r.Errors, msg)
			if d.Error == "" {
				d.Error = msg
			}
		}
	}
}

// summarise computes telemetry over samples (of all devices; power is
// the sum over devices at each sample time, utilisation the mean).
func summarise(samples []Sample) *results.Telemetry {
	if len(samples) == 0 {
		return nil
	}
	t := &results.Telemetry{Samples: len(samples)}
	type slot struct {
		power float64
		n     int
	}
	byTime := map[time.Time]*slot{}
	var util, mutil, clock float64
	for _, s := range samples {
		sl := byTime[s.T]
		if sl == nil {
			sl = &slot{}
			byTime[s.T] = sl
		}
		sl.power += s.PowerW
		sl.n++
		util += s.GPUUtil
		mutil += s.MemUtil
		clock += s.SMClockMHz
		t.MaxMemUsedMiB = math.Max(t.MaxMemUsedMiB, s.MemUsedMiB)
		t.MaxTempC = math.Max(t.MaxTempC, s.TempC)
	}
	n := float64(len(samples))
	t.MeanGPUUtil, t.MeanMemUtil, t.MeanSMClockMHz = util/n, mutil/n, clock/n
	for _, sl := range byTime {
		t.MeanPowerW += sl.power
		t.MaxPowerW = math.Max(t.MaxPowerW, sl.power)
	}
	t.MeanPowerW /= float64(len(byTime))
	return t
}

// trapezoid integrates one device's sampled power over [from, to]: the
// samples in the window, held flat to the window's edges.
func trapezoid(samples []Sample, from, to time.Time) (float64, error) {
	var in []Sample
	for _, s := range samples {
		if !s.T.Before(from) && !s.T.After(to) {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		// No sample inside: use the last one before the window.
		var last *Sample
		for i := range samples {
			if samples[i].T.Before(from) {
				last = &samples[i]
			}
		}
		if last == nil {
			return 0, errors.New("no power sample covers the trial")
		}
		return last.PowerW * to.Sub(from).Seconds(), nil
	}
	sort.Slice(in, func(i, j int) bool { return in[i].T.Before(in[j].T) })
	e := in[0].PowerW * in[0].T.Sub(from).Seconds()
	for i := 1; i < len(in); i++ {
		e += (in[i-1].PowerW + in[i].PowerW) / 2 * in[i].T.Sub(in[i-1].T).Seconds()
	}
	e += in[len(in)-1].PowerW * to.Sub(in[len(in)-1].T).Seconds()
	return e, nil
}

// meanPower is the mean over sample times of the power summed over
// devices.
func meanPower(ss []Sample) float64 {
	if t := summarise(ss); t != nil {
		return t.MeanPowerW
	}
	return 0
}
