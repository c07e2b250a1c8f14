package meter

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A fake sysfs tree as each Jetson generation lays it out (NVIDIA Jetson
// Linux Developer Guide, power monitoring; the paths jtop and tegrastats
// read). Values are strings as the kernel writes them.
type jetson struct {
	name  string
	files map[string]string
	// want: the module's rail (or "" for the sum of rails), its power in
	// W, the rails found, GPU load % and clock MHz.
	module string
	powerW float64
	rails  []string
	util   float64
	clock  float64
}

func hwmonRail(dev, n, label, mv, ma string) map[string]string {
	d := "bus/i2c/drivers/ina3221/" + dev + "/hwmon/hwmon1/"
	return map[string]string{d + "in" + n + "_label": label, d + "in" + n + "_input": mv, d + "curr" + n + "_input": ma}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var jetsons = []jetson{
	{
		// Orin Nano / NX on JetPack 6: VDD_IN is the module; the driver's
		// sum-of-shunts channel and an unconnected one are not rails.
		name: "orin-jetpack6",
		files: merge(
			hwmonRail("1-0040", "1", "VDD_IN", "5000", "1400"),
			hwmonRail("1-0040", "2", "VDD_CPU_GPU_CV", "5000", "600"),
			hwmonRail("1-0040", "3", "VDD_SOC", "5000", "300"),
			map[string]string{
				"bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/in7_label":   "sum of shunt voltages",
				"bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/in7_input":   "12",
				"class/devfreq/17000000.ga10b/device/of_node/name":        "gpu",
				"class/devfreq/17000000.ga10b/device/load":                "455",
				"class/devfreq/17000000.ga10b/cur_freq":                   "624750000",
				"class/devfreq/15340000.vic/cur_freq":                     "115200000",
				"bus/i2c/drivers/ina3221/1-0041/hwmon/hwmon2/in1_label":   "NC",
				"bus/i2c/drivers/ina3221/1-0041/hwmon/hwmon2/in1_input":   "0",
				"bus/i2c/drivers/ina3221/1-0041/hwmon/hwmon2/curr1_input": "0",
			}),
		module: "VDD_IN", powerW: 7, rails: []string{"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"}, util: 45.5, clock: 624.75,
	},
	{
		// AGX Xavier on JetPack 5: two monitors, no module input rail.
		name: "xavier-jetpack5",
		files: merge(
			hwmonRail("1-0040", "1", "GPU", "19000", "100"),
			hwmonRail("1-0040", "2", "CPU", "19000", "200"),
			hwmonRail("1-0040", "3", "SOC", "19000", "100"),
			hwmonRail("1-0041", "1", "CV", "19000", "0"),
			hwmonRail("1-0041", "2", "VDDRQ", "19000", "100"),
			hwmonRail("1-0041", "3", "SYS5V", "5000", "400"),
			map[string]string{
				"class/devfreq/17000000.gv11b/device/load": "1000",
				"class/devfreq/17000000.gv11b/cur_freq":    "1377000000",
			}),
		module: "", powerW: 19*0.5 + 5*0.4, rails: []string{"GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"}, util: 100, clock: 1377,
	},
	{
		// Nano on JetPack 4: the ina3221x iio layout, which also gives power.
		name: "nano-jetpack4",
		files: map[string]string{
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/rail_name_0":       "POM_5V_IN",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/in_voltage0_input": "5080",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/in_current0_input": "1000",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/in_power0_input":   "5080",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/rail_name_1":       "POM_5V_GPU",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/in_power1_input":   "1000",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/rail_name_2":       "POM_5V_CPU",
			"bus/i2c/drivers/ina3221x/6-0040/iio:device0/in_power2_input":   "1500",
			"class/devfreq/57000000.gpu/device/load":                        "120",
			"class/devfreq/57000000.gpu/cur_freq":                           "921600000",
		},
		module: "POM_5V_IN", powerW: 5.08, rails: []string{"POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"}, util: 12, clock: 921.6,
	},
}

func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, v := range files {
		write(t, filepath.Join(root, p), v)
	}
	return root
}

func write(t testing.TB, path, v string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func testTegra(t *testing.T, root string) (*tegraMeter, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	m, err := newTegra(Options{SysRoot: root, Interval: 100 * time.Millisecond}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// run samples every 100 ms for d and measures that window.
func run(m *tegraMeter, c *clock, d time.Duration) (mk Mark) {
	mk = m.Mark()
	for range int(d / (100 * time.Millisecond)) {
		m.s.sampleOnce()
		c.add(100 * time.Millisecond)
	}
	m.s.sampleOnce()
	return mk
}

func TestTegraLayouts(t *testing.T) {
	for _, j := range jetsons {
		t.Run(j.name, func(t *testing.T) {
			m, c := testTegra(t, writeTree(t, j.files))
			var labels []string
			for _, r := range m.rails {
				labels = append(labels, r.label)
			}
			if strings.Join(labels, ",") != strings.Join(j.rails, ",") {
				t.Fatalf("rails %v, want %v", labels, j.rails)
			}
			if j.module == "" && m.total >= 0 || j.module != "" && (m.total < 0 || m.rails[m.total].label != j.module) {
				t.Fatalf("module power from %q, want %q", m.what(), j.module)
			}
			r := m.Since(run(m, c, 2*time.Second))
			if r.Meter != Tegra || !r.Estimated || !strings.Contains(r.Method, "integrated") || r.EnergyJ == nil {
				t.Fatalf("reading %+v", r)
			}
			if math.Abs(*r.EnergyJ-2*j.powerW) > 1e-9 {
				t.Errorf("energy %.6f J over 2 s, want %.6f", *r.EnergyJ, 2*j.powerW)
			}
			if len(r.Devices) != len(j.rails) || r.Devices[0].Name != j.rails[0] {
				t.Errorf("devices %+v", r.Devices)
			}
			tm := r.Telemetry
			if tm == nil || math.Abs(tm.MeanPowerW-j.powerW) > 1e-9 || tm.MeanGPUUtil != j.util || math.Abs(tm.MeanSMClockMHz-j.clock) > 1e-9 {
				t.Errorf("telemetry %+v, want %.2f W, %.1f%%, %.2f MHz", tm, j.powerW, j.util, j.clock)
			}
			if len(r.Errors) > 0 {
				t.Errorf("errors %v", r.Errors)
			}
			if l := m.Latest(); len(l) != 1 || l[0].Device != 0 {
				t.Errorf("latest %+v: want the module's sample alone", l)
			}
		})
	}
}

// TestTegraRailDisappears: a sub-rail that goes away mid-run is reported
// in every later reading and the module's energy still counts; when the
// module input rail goes, the reading says so instead of inventing power.
func TestTegraRailDisappears(t *testing.T) {
	root := writeTree(t, jetsons[0].files)
	m, c := testTegra(t, root)
	run(m, c, time.Second)
	if err := os.Remove(filepath.Join(root, "bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/curr3_input")); err != nil {
		t.Fatal(err)
	}
	r := m.Since(run(m, c, time.Second))
	if r.EnergyJ == nil || math.Abs(*r.EnergyJ-7) > 1e-9 {
		t.Errorf("module energy %v with a sub-rail gone, want 7 J", r.EnergyJ)
	}
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "VDD_SOC") || r.Devices[2].Error == "" {
		t.Errorf("errors %v, devices %+v: want VDD_SOC reported", r.Errors, r.Devices)
	}
	// The input rail now reads as an all-ones word: a failed read.
	write(t, filepath.Join(root, "bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/curr1_input"), "4294967295")
	c.add(time.Hour) // past any sample of the module
	r = m.Since(run(m, c, time.Second))
	found := false
	for _, e := range r.Errors {
		found = found || strings.Contains(e, "VDD_IN") && strings.Contains(e, "failed read")
	}
	if !found {
		t.Errorf("errors %v: want the input rail's failed read", r.Errors)
	}
}

// TestTegraValuesAtTheirLimits: the INA3221's full bus range is a value;
// anything past it, negative or not a number is a failed read.
func TestTegraValuesAtTheirLimits(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		v      string
		limit  float64
		want   float64
		failed bool
	}{
		{"26000", maxRailMilliVolts, 26000, false},
		{"0", maxRailMilliVolts, 0, false},
		{"26001", maxRailMilliVolts, 0, true},
		{"-5", maxRailMilliAmps, 0, true},
		{"65535", maxRailMilliAmps, 65535, false},
		{"18446744073709551615", maxRailMilliAmps, 0, true},
		{"", maxRailMilliAmps, 0, true},
		{"n/a", maxRailMilliAmps, 0, true},
	} {
		f := filepath.Join(dir, "v")
		write(t, f, c.v)
		got, err := readMilli(f, c.limit)
		if (err != nil) != c.failed || got != c.want {
			t.Errorf("%q: got %v, %v; want %v, failed %v", c.v, got, err, c.want, c.failed)
		}
	}
}

func TestTegraOpenAndProbe(t *testing.T) {
	if _, err := Open(Options{Kind: Tegra, SysRoot: t.TempDir(), Idle: -1}); err == nil || !strings.Contains(err.Error(), "no INA3221 power rail") {
		t.Errorf("tegra on a node without rails: %v", err)
	}
	root := writeTree(t, jetsons[2].files)
	m, err := Open(Options{Kind: Tegra, SysRoot: root, Idle: -1, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if d := m.Describe(); !strings.Contains(d, "POM_5V_IN (module input)") || !strings.Contains(d, "iio") {
		t.Errorf("describe: %s", d)
	}
	p := ProbeNode(Options{SysRoot: root, PowercapRoot: t.TempDir()})
	if !p.Tegra.OK || len(p.Tegra.Rails) != 3 || !strings.HasSuffix(p.Tegra.GPUDevfreq, "57000000.gpu") {
		t.Errorf("probe %+v", p.Tegra)
	}
	if !p.NVML.OK && p.Auto != Tegra {
		t.Errorf("auto picks %s on a Jetson without NVML", p.Auto)
	}
}

// BenchmarkTegraSample is one sampling pass over an AGX Xavier's six
// rails and its GPU node; divided by 100 ms it is the sampler's share of
// one core. Target: under 0.5%.
func BenchmarkTegraSample(b *testing.B) {
	root := writeTree(b, jetsons[1].files)
	m, err := newTegra(Options{SysRoot: root, Interval: 100 * time.Millisecond}, time.Now)
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
