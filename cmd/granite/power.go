package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
)

// powerReport is `granite power --json`.
type powerReport struct {
	Probe   meter.Probe      `json:"probe"`
	Meter   string           `json:"meter"`
	Seconds float64          `json:"seconds"`
	Reading *results.Reading `json:"reading,omitempty"`
	// CounterMinusIntegratedPct compares the energy counter with sampled
	// power integrated over the same window.
	CounterMinusIntegratedPct *float64 `json:"counter_minus_integrated_pct,omitempty"`
}

func runPower(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("power", "[--json] [--seconds N] [--interval-ms N] [--powercap DIR] [--sysfs DIR]",
		"Probes what this node can measure (NVIDIA driver and GPUs with their energy counters,\n"+
			"a Jetson's INA3221 power rails and GPU devfreq node, RAPL zones), then samples for N\n"+
			"seconds with the meter auto picks and prints the energy from the counter beside the\n"+
			"energy from integrated power.", stderr)
	asJSON := fset.Bool("json", false, "print JSON")
	seconds := fset.Float64("seconds", 5, "how long to sample (0: probe only)")
	interval := fset.Int("interval-ms", 100, "sampling period")
	root := fset.String("powercap", "/sys/class/powercap", "powercap sysfs folder")
	sysfs := fset.String("sysfs", "/sys", "sysfs root for the Jetson power rails")
	if err := parse(fset, args); err != nil {
		return err
	}
	o := meter.Options{Kind: meter.Auto, Interval: time.Duration(*interval) * time.Millisecond, PowercapRoot: *root, SysRoot: *sysfs, Idle: -1}
	rep := powerReport{Probe: meter.ProbeNode(o), Seconds: *seconds}
	m, err := meter.Open(o)
	if err != nil {
		return err
	}
	rep.Meter = m.Describe()
	if *seconds > 0 && m.Name() != meter.None {
		mk := m.Mark()
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(*seconds * float64(time.Second))):
		}
		r := m.Since(mk)
		rep.Reading = &r
		if r.EnergyJ != nil && r.IntegratedJ != nil && *r.IntegratedJ > 0 && !r.Estimated {
			d := 100 * (*r.EnergyJ - *r.IntegratedJ) / *r.IntegratedJ
			rep.CounterMinusIntegratedPct = &d
		}
	}
	if err := m.Close(); err != nil {
		fail(stderr, "power", err) // the reading is taken: say it, and go on
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return exitStatus(1)
		}
		return nil
	}
	p := rep.Probe
	if p.NVML.OK {
		fmt.Fprintf(stdout, "nvml: driver %s\n", p.NVML.Driver)
		for _, g := range p.NVML.Devices {
			fmt.Fprintf(stdout, "  GPU %d %s (%s): energy counter %v, power limit %.0f W\n", g.Index, g.Name, g.UUID, g.EnergyCounter, g.PowerLimitW)
		}
	} else {
		fmt.Fprintf(stdout, "nvml: not available: %s\n", p.NVML.Error)
	}
	if p.Tegra.OK {
		fmt.Fprintln(stdout, "tegra: Jetson power rails")
		for _, r := range p.Tegra.Rails {
			fmt.Fprintf(stdout, "  %s (%s, %s)\n", r.Label, r.Layout, r.Path)
		}
		if p.Tegra.GPUDevfreq != "" {
			fmt.Fprintf(stdout, "  GPU load and clock: %s\n", p.Tegra.GPUDevfreq)
		}
	} else {
		fmt.Fprintf(stdout, "tegra: not available: %s\n", p.Tegra.Error)
	}
	if p.RAPL.OK {
		fmt.Fprintf(stdout, "rapl: %v under %s\n", p.RAPL.Zones, p.RAPL.Root)
	} else {
		fmt.Fprintf(stdout, "rapl: not available: %s\n", p.RAPL.Error)
	}
	fmt.Fprintf(stdout, "built in: %s\nauto picks: %s\n", strings.Join(p.Meters, ", "), rep.Meter)
	if r := rep.Reading; r != nil {
		fmt.Fprintf(stdout, "sampled %.1f s: %.3f J (%s)", rep.Seconds, *r.EnergyJ, r.Method)
		if r.IntegratedJ != nil {
			fmt.Fprintf(stdout, "; integrated power %.3f J", *r.IntegratedJ)
		}
		if rep.CounterMinusIntegratedPct != nil {
			fmt.Fprintf(stdout, "; counter - integrated = %+.2f%%", *rep.CounterMinusIntegratedPct)
		}
		fmt.Fprintln(stdout)
		if t := r.Telemetry; t != nil {
			fmt.Fprintf(stdout, "mean power %.1f W (max %.1f), GPU util %.0f%%, memory util %.0f%%, max memory %.0f MiB, max %.0f °C, SM clock %.0f MHz, %d samples\n",
				t.MeanPowerW, t.MaxPowerW, t.MeanGPUUtil, t.MeanMemUtil, t.MaxMemUsedMiB, t.MaxTempC, t.MeanSMClockMHz, t.Samples)
		}
		for _, e := range r.Errors {
			fmt.Fprintf(stdout, "error: %s\n", e)
		}
	}
	return nil
}
