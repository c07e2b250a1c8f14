package meter

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/results"
)

// Jetson modules have no NVML and no energy counter. Their power comes
// from INA3221 monitors on the module, one per three rails, which Linux
// exposes in one of two layouts (NVIDIA Jetson Linux Developer Guide,
// "Power Monitoring"; the same files tegrastats, jtop and ASTRON's PMT
// read):
//
//   - hwmon (JetPack 5 and 6, ina3221 driver):
//     bus/i2c/drivers/ina3221/<bus>-<addr>/hwmon/hwmon<k>/in<N>_label,
//     in<N>_input (mV) and curr<N>_input (mA);
//   - iio (JetPack 4, ina3221x driver):
//     bus/i2c/drivers/ina3221x/<bus>-<addr>/iio:device<k>/rail_name_<N>,
//     in_voltage<N>_input (mV), in_current<N>_input (mA) and
//     in_power<N>_input (mW).
//
// Rails are found by their labels, never by fixed paths: VDD_IN on Orin
// Nano/NX and Xavier NX, POM_5V_IN on the Nano, is the whole module; a
// module without such a rail (AGX Xavier, AGX Orin) is measured as the sum
// of its rails. GPU load (per mille) and frequency (Hz) come from the
// GPU's devfreq node. Energy is sampled power integrated over the trial.

// rail layouts.
const (
	layoutHwmon = "hwmon"
	layoutIIO   = "iio"
)

// Plausible INA3221 readings: its bus input is 0–26 V; a current beyond
// 100 A, or a negative one, is a failed read (such as an all-ones word),
// not a rail's draw.
const (
	maxRailMilliVolts = 26_000
	maxRailMilliAmps  = 100_000
)

// rail is one monitored power rail.
type rail struct {
	label  string
	layout string
	dir    string
	// voltage (mV) and current (mA) files; power (mW) when the driver
	// computes it (iio).
	voltage, current, power string
}

var (
	hwmonLabel = regexp.MustCompile(`^in(\d+)_label$`)
	iioLabel   = regexp.MustCompile(`^rail_name_(\d+)$`)
	// moduleInput matches the rail that feeds the whole module.
	moduleInput = regexp.MustCompile(`(?i)(^|_)IN$`)
	// gpuDevfreq matches the devfreq node of a Tegra GPU by its name.
	gpuDevfreq = regexp.MustCompile(`(^|[.])(gpu|gm20b|gp10b|gv11b|ga10b|gb10b)$`)
)

// findRails lists the power rails under a sysfs root, in path and channel
// order. Channels labelled NC (not connected) and the driver's "sum of
// shunt voltages" channel are not rails.
func findRails(sysRoot string) ([]rail, error) {
	var rails []rail
	hw, _ := filepath.Glob(filepath.Join(sysRoot, "bus/i2c/drivers/ina3221/*/hwmon/hwmon*/in*_label"))
	for _, f := range hw {
		m := hwmonLabel.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			continue
		}
		dir, n := filepath.Dir(f), m[1]
		r := rail{label: readString(f), layout: layoutHwmon, dir: dir,
			voltage: filepath.Join(dir, "in"+n+"_input"), current: filepath.Join(dir, "curr"+n+"_input")}
		if usable(r) {
			rails = append(rails, r)
		}
	}
	iio, _ := filepath.Glob(filepath.Join(sysRoot, "bus/i2c/drivers/ina3221x/*/iio:device*/rail_name_*"))
	for _, f := range iio {
		m := iioLabel.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			continue
		}
		dir, n := filepath.Dir(f), m[1]
		r := rail{label: readString(f), layout: layoutIIO, dir: dir,
			voltage: filepath.Join(dir, "in_voltage"+n+"_input"), current: filepath.Join(dir, "in_current"+n+"_input"),
			power: filepath.Join(dir, "in_power"+n+"_input")}
		if _, err := os.Stat(r.power); err != nil {
			r.power = ""
		}
		if usable(r) {
			rails = append(rails, r)
		}
	}
	if len(rails) == 0 {
		return nil, fmt.Errorf("tegra: no INA3221 power rail under %s (not a Jetson, or its ina3221 driver is not loaded)", filepath.Join(sysRoot, "bus/i2c/drivers"))
	}
	sort.SliceStable(rails, func(i, j int) bool { return rails[i].voltage < rails[j].voltage })
	return rails, nil
}

// usable reports whether a channel is a connected rail with readable files.
func usable(r rail) bool {
	l := strings.ToLower(r.label)
	if l == "" || l == "nc" || strings.HasPrefix(l, "sum of") {
		return false
	}
	if r.power != "" {
		_, err := os.Stat(r.power)
		return err == nil
	}
	for _, f := range []string{r.voltage, r.current} {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return true
}

// readPower reads a rail's power in watts.
func (r rail) readPower() (float64, error) {
	if r.power != "" {
		mw, err := readMilli(r.power, maxRailMilliVolts*maxRailMilliAmps/1000)
		return mw / 1000, err
	}
	mv, err := readMilli(r.voltage, maxRailMilliVolts)
	if err != nil {
		return 0, err
	}
	ma, err := readMilli(r.current, maxRailMilliAmps)
	if err != nil {
		return 0, err
	}
	return mv * ma / 1e6, nil
}

// readMilli reads one integer sysfs value and checks it is plausible.
// A sysfs attribute is one short line, read with one open, read and
// close (os.ReadFile would stat and read twice more): the sampler reads
// a dozen of them every 100 ms.
func readMilli(path string, limit float64) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	var buf [64]byte
	n, err := f.Read(buf[:])
	f.Close()
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return 0, err
	}
	text := strings.TrimSpace(string(buf[:n]))
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, text)
	}
	if v < 0 || v > limit {
		return 0, fmt.Errorf("%s: %g is outside 0..%g, a failed read", path, v, limit)
	}
	return v, nil
}

// findGPUDevfreq returns the devfreq node of the GPU, or "".
func findGPUDevfreq(sysRoot string) string {
	nodes, _ := filepath.Glob(filepath.Join(sysRoot, "class/devfreq/*"))
	sort.Strings(nodes)
	for _, n := range nodes {
		if readString(filepath.Join(n, "device/of_node/name")) == "gpu" || gpuDevfreq.MatchString(filepath.Base(n)) {
			return n
		}
	}
	return ""
}

type tegraMeter struct {
	rails []rail
	// total is the index of the module input rail, or -1: the module is
	// the sum of its rails.
	total int
	gpu   string
	s     *sampler
	idle  float64
	now   func() time.Time
	errs  deviceErrors
}

// OpenTegra opens the Jetson power rails under o.SysRoot and starts
// sampling them.
func OpenTegra(o Options) (Meter, error) {
	o.defaults()
	m, err := newTegra(o, time.Now)
	if err != nil {
		return nil, err
	}
	m.idle = meanPower(m.module(m.s.startIdle(o.Idle)))
	return m, nil
}

// newTegra finds the rails and reads them once; the sampler is not started.
func newTegra(o Options, now func() time.Time) (*tegraMeter, error) {
	rails, err := findRails(o.SysRoot)
	if err != nil {
		return nil, err
	}
	m := &tegraMeter{rails: rails, total: -1, gpu: findGPUDevfreq(o.SysRoot), now: now}
	var inputs []int
	for i, r := range rails {
		if moduleInput.MatchString(r.label) {
			inputs = append(inputs, i)
		}
	}
	if len(inputs) == 1 {
		m.total = inputs[0]
	}
	var errs []error
	for _, r := range rails {
		if _, err := r.readPower(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(rails) {
		return nil, fmt.Errorf("tegra: no rail is readable: %w", errors.Join(errs...))
	}
	m.s = newSampler(o.Interval, now, m.read)
	return m, nil
}

func (m *tegraMeter) Name() string { return Tegra }

// what says what the module's power is.
func (m *tegraMeter) what() string {
	if m.total >= 0 {
		return m.rails[m.total].label + " (module input)"
	}
	return "sum of rails (no module input rail)"
}

func (m *tegraMeter) Describe() string {
	labels := make([]string, len(m.rails))
	for i, r := range m.rails {
		labels[i] = r.label
	}
	gpu := "no GPU devfreq node"
	if m.gpu != "" {
		gpu = "GPU load and clock from " + m.gpu
	}
	return fmt.Sprintf("meter: tegra, %s rails %s, module power %s, %s, sampled every %s, idle %.1f W",
		m.rails[0].layout, strings.Join(labels, ", "), m.what(), gpu, m.s.interval, m.idle)
}

// read samples every rail once: one sample per rail (Device 1 + its
// index) and the module's (Device 0), which carries the GPU's load and
// clock. A rail that fails is reported and left out; when the module
// input rail fails there is no module sample at that time.
func (m *tegraMeter) read(t time.Time) []Sample {
	out := make([]Sample, 0, len(m.rails)+1)
	sum, moduleOK := 0.0, true
	for i, r := range m.rails {
		p, err := r.readPower()
		if err != nil {
			m.errs.note(i+1, fmt.Sprintf("rail %s: %v", r.label, err))
			moduleOK = moduleOK && m.total >= 0 && m.total != i
			continue
		}
		out = append(out, Sample{T: t, Device: i + 1, PowerW: p, EnergyJ: math.NaN()})
		if m.total == i {
			sum = p
		} else if m.total < 0 {
			sum += p
		}
	}
	if moduleOK {
		s := Sample{T: t, Device: 0, PowerW: sum, EnergyJ: math.NaN()}
		if m.gpu != "" {
			if load, err := readMilli(filepath.Join(m.gpu, "device/load"), 1000); err == nil {
				s.GPUUtil = load / 10
			}
			if hz, err := readMilli(filepath.Join(m.gpu, "cur_freq"), math.MaxFloat64); err == nil {
				s.SMClockMHz = hz / 1e6
			}
		}
		out = append(out, s)
	}
	return out
}

// module keeps the module's samples.
func (m *tegraMeter) module(ss []Sample) []Sample {
	var out []Sample
	for _, s := range ss {
		if s.Device == 0 {
			out = append(out, s)
		}
	}
	return out
}

func (m *tegraMeter) Mark() Mark { return Mark{T: m.now()} }

// Since integrates the module's sampled power over the trial, and each
// rail's; the reading says the energy was integrated, not counted.
func (m *tegraMeter) Since(mk Mark) results.Reading {
	end := m.now()
	samples := m.s.window(mk.T, end)
	r := results.Reading{Meter: Tegra, IdleW: m.idle, Estimated: true,
		Method: "sampled power integrated (trapezoid), no energy counter on Jetson; module power is " + m.what() + "; devices are the rails"}
	total, err := trapezoid(m.module(samples), mk.T, end)
	if err != nil {
		r.Errors = append(r.Errors, "module: "+err.Error())
	} else {
		r.EnergyJ, r.IntegratedJ = &total, &total
	}
	for i, rl := range m.rails {
		var own []Sample
		for _, s := range samples {
			if s.Device == i+1 {
				own = append(own, s)
			}
		}
		d := results.DeviceReading{Index: i + 1, Name: rl.label, Estimated: true}
		if e, err := trapezoid(own, mk.T, end); err != nil {
			d.Error = err.Error()
		} else {
			d.EnergyJ = e
		}
		r.Devices = append(r.Devices, d)
	}
	r.Telemetry = summarise(m.module(inWindow(samples, mk.T, end)))
	m.errs.attach(&r)
	return r
}

func (m *tegraMeter) IdleW() float64 { return m.idle }

// Latest returns the module's newest sample.
func (m *tegraMeter) Latest() []Sample { return m.module(m.s.last()) }

func (m *tegraMeter) Close() error {
	m.s.close()
	return nil
}
