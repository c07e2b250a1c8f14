// Package live publishes a run's progress and its meter's newest
// telemetry in the Prometheus exposition format (granite run --metrics).
package live

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
)

// Metrics publishes a run's progress and its meter's newest telemetry in the
// Prometheus exposition format, so an existing Prometheus and Grafana see
// runs as they happen.
type Metrics struct {
	reg       *prometheus.Registry
	planned   prometheus.Gauge
	finishedN prometheus.Counter
	energy    prometheus.Counter

	mu sync.Mutex
	m  meter.Meter
}

// New returns an empty set of live metrics.
func New() *Metrics {
	l := &Metrics{reg: prometheus.NewRegistry(),
		planned:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "granite_trials_planned", Help: "Trials in this run's shard."}),
		finishedN: prometheus.NewCounter(prometheus.CounterOpts{Name: "granite_trials_done_total", Help: "Trials finished and recorded (resumed ones included)."}),
		energy:    prometheus.NewCounter(prometheus.CounterOpts{Name: "granite_trial_energy_joules_total", Help: "Energy measured over finished trials."}),
	}
	l.reg.MustRegister(l.planned, l.finishedN, l.energy, l)
	return l
}

// Handler serves the metrics.
func (l *Metrics) Handler() http.Handler { return promhttp.HandlerFor(l.reg, promhttp.HandlerOpts{}) }

// Attach starts publishing a run; nil-safe.
func (l *Metrics) Attach(m meter.Meter, planned, resumed int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.m = m
	l.mu.Unlock()
	l.planned.Set(float64(planned))
	l.finishedN.Add(float64(resumed))
}

// Finished counts a recorded trial and its energy; nil-safe.
func (l *Metrics) Finished(r *results.Record) {
	if l == nil {
		return
	}
	l.finishedN.Inc()
	if r.Energy != nil && r.Energy.EnergyJ != nil && *r.Energy.EnergyJ >= 0 {
		l.energy.Add(*r.Energy.EnergyJ)
	}
}

var (
	descPower = prometheus.NewDesc("granite_device_power_watts", "Power of a measured device (GPU or CPU package).", []string{"meter", "device"}, nil)
	descUtil  = prometheus.NewDesc("granite_gpu_utilization_percent", "GPU utilisation.", []string{"device"}, nil)
	descMem   = prometheus.NewDesc("granite_gpu_memory_used_bytes", "GPU memory in use.", []string{"device"}, nil)
	descTemp  = prometheus.NewDesc("granite_gpu_temperature_celsius", "GPU temperature.", []string{"device"}, nil)
	descClock = prometheus.NewDesc("granite_gpu_sm_clock_hertz", "GPU SM clock.", []string{"device"}, nil)
	descIdle  = prometheus.NewDesc("granite_idle_power_watts", "Power measured before the first trial.", []string{"meter"}, nil)
)

// Describe implements prometheus.Collector for the meter's telemetry.
func (l *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPower, descUtil, descMem, descTemp, descClock, descIdle} {
		ch <- d
	}
}

// Collect reports the meter's newest samples.
func (l *Metrics) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	m := l.m
	l.mu.Unlock()
	if m == nil || m.Name() == meter.None {
		return
	}
	ch <- prometheus.MustNewConstMetric(descIdle, prometheus.GaugeValue, m.IdleW(), m.Name())
	for _, s := range m.Latest() {
		dev := strconv.Itoa(s.Device)
		ch <- prometheus.MustNewConstMetric(descPower, prometheus.GaugeValue, s.PowerW, m.Name(), dev)
		switch m.Name() {
		case meter.Tegra: // a Jetson's GPU load and clock; its memory is the host's
			ch <- prometheus.MustNewConstMetric(descUtil, prometheus.GaugeValue, s.GPUUtil, dev)
			ch <- prometheus.MustNewConstMetric(descClock, prometheus.GaugeValue, s.SMClockMHz*1e6, dev)
			continue
		case meter.NVML:
		default:
			continue
		}
		ch <- prometheus.MustNewConstMetric(descUtil, prometheus.GaugeValue, s.GPUUtil, dev)
		ch <- prometheus.MustNewConstMetric(descMem, prometheus.GaugeValue, s.MemUsedMiB*(1<<20), dev)
		ch <- prometheus.MustNewConstMetric(descTemp, prometheus.GaugeValue, s.TempC, dev)
		ch <- prometheus.MustNewConstMetric(descClock, prometheus.GaugeValue, s.SMClockMHz*1e6, dev)
	}
}
