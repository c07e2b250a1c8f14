package meter

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgranite/granite/harness/results"
)

// raplZone is one top-level powercap zone (a CPU package): its
// sub-zones (cores, uncore, dram) are inside it and are not added again.
type raplZone struct {
	index int
	name  string
	dir   string
	max   float64 // max_energy_range_uj, in joules: where the counter wraps
}

type raplMeter struct {
	zones []raplZone
	s     *sampler
	now   func() time.Time
	idle  float64

	mu   sync.Mutex
	prev map[int][2]float64 // last counter and time (s) per zone, for sampled power
	errs deviceErrors
}

var topZone = regexp.MustCompile(`^intel-rapl:(\d+)$`)

// OpenRAPL opens the CPU packages under the powercap root.
func OpenRAPL(o Options) (Meter, error) {
	o.defaults()
	m, err := newRAPL(o, time.Now)
	if err != nil {
		return nil, err
	}
	m.idle = meanPower(m.s.startIdle(o.Idle))
	return m, nil
}

func newRAPL(o Options, now func() time.Time) (*raplMeter, error) {
	entries, err := os.ReadDir(o.PowercapRoot)
	if err != nil {
		return nil, fmt.Errorf("rapl: %v", err)
	}
	m := &raplMeter{now: now, prev: map[int][2]float64{}}
	for _, e := range entries {
		sub := topZone.FindStringSubmatch(e.Name())
		if sub == nil {
			continue
		}
		i, _ := strconv.Atoi(sub[1])
		dir := filepath.Join(o.PowercapRoot, e.Name())
		z := raplZone{index: i, dir: dir, name: readString(filepath.Join(dir, "name"))}
		maxUJ, err := readUint(filepath.Join(dir, "max_energy_range_uj"))
		if err != nil {
			return nil, fmt.Errorf("rapl: %v", err)
		}
		z.max = float64(maxUJ) / 1e6
		if _, err := readUint(filepath.Join(dir, "energy_uj")); err != nil {
			return nil, fmt.Errorf("rapl: %v (reading energy_uj needs root on recent kernels)", err)
		}
		m.zones = append(m.zones, z)
	}
	if len(m.zones) == 0 {
		return nil, fmt.Errorf("rapl: no intel-rapl zone under %s", o.PowercapRoot)
	}
	sort.Slice(m.zones, func(a, b int) bool { return m.zones[a].index < m.zones[b].index })
	m.s = newSampler(o.Interval, now, m.read)
	return m, nil
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

func (m *raplMeter) Name() string { return RAPL }

func (m *raplMeter) Describe() string {
	var zs []string
	for _, z := range m.zones {
		zs = append(zs, fmt.Sprintf("%s (zone %d)", z.name, z.index))
	}
	return fmt.Sprintf("meter: rapl, CPU energy of %s, sampled every %s, idle %.1f W", strings.Join(zs, ", "), m.s.interval, m.idle)
}

// counter reads a zone's energy in joules.
func (m *raplMeter) counter(z raplZone) float64 {
	uj, err := readUint(filepath.Join(z.dir, "energy_uj"))
	if err != nil {
		m.errs.note(z.index, fmt.Sprintf("zone %d: %v", z.index, err))
		return math.NaN()
	}
	return float64(uj) / 1e6
}

// delta is the energy between two counter readings, across one wrap.
func delta(start, end, max float64) float64 {
	if end >= start {
		return end - start
	}
	return end + max - start
}

// read samples each zone's power from its counter's change since the last
// sample.
func (m *raplMeter) read(t time.Time) []Sample {
	var out []Sample
	sec := float64(t.UnixNano()) / 1e9
	for _, z := range m.zones {
		c := m.counter(z)
		if math.IsNaN(c) {
			continue
		}
		m.mu.Lock()
		p, ok := m.prev[z.index]
		m.prev[z.index] = [2]float64{c, sec}
		m.mu.Unlock()
		if ok && sec > p[1] {
			out = append(out, Sample{T: t, Device: z.index, PowerW: delta(p[0], c, z.max) / (sec - p[1]), EnergyJ: c})
		}
	}
	return out
}

func (m *raplMeter) Mark() Mark {
	c := make([]float64, len(m.zones))
	for i, z := range m.zones {
		c[i] = m.counter(z)
	}
	return Mark{T: m.now(), counters: c}
}

// Since is the counter delta of every zone (RAPL counters update about
// every millisecond, so any window is exact), wraps included.
func (m *raplMeter) Since(mk Mark) results.Reading {
	end := m.now()
	r := results.Reading{Meter: RAPL, IdleW: m.idle, Method: "energy counter delta"}
	total := 0.0
	for i, z := range m.zones {
		d := results.DeviceReading{Index: z.index, Name: z.name}
		c := m.counter(z)
		if i < len(mk.counters) && !math.IsNaN(mk.counters[i]) && !math.IsNaN(c) {
			d.EnergyJ = delta(mk.counters[i], c, z.max)
		} else {
			d.Error = "counter unreadable"
		}
		total += d.EnergyJ
		r.Devices = append(r.Devices, d)
	}
	r.EnergyJ = &total
	r.Telemetry = summarise(inWindow(m.s.window(mk.T, end), mk.T, end))
	m.errs.attach(&r)
	return r
}

func (m *raplMeter) IdleW() float64   { return m.idle }
func (m *raplMeter) Latest() []Sample { return m.s.last() }
func (m *raplMeter) Close() error {
	m.s.close()
	return nil
}
