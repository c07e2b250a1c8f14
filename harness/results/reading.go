package results

// Reading is one trial's energy and telemetry.
type Reading struct {
	// Meter is the meter that measured the trial: nvml, rapl or none.
	Meter string `json:"meter"`
	// EnergyJ is the trial's energy over all devices; nil without a meter.
	EnergyJ *float64 `json:"energy_j"`
	// Estimated is set when any device's energy was integrated from
	// sampled power instead of read from its counter; Method says how.
	Estimated bool   `json:"estimated"`
	Method    string `json:"method,omitempty"`
	// IntegratedJ is sampled power integrated over the window, kept beside
	// a counter reading so the two can be compared (nil when not sampled).
	IntegratedJ *float64 `json:"integrated_j,omitempty"`
	// IdleW is the idle power measured before the run, for net energy.
	IdleW   float64         `json:"idle_w,omitempty"`
	Devices []DeviceReading `json:"devices,omitempty"`
	// Telemetry summarises the samples in the trial's window.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	Errors    []string   `json:"errors,omitempty"`
	// Shared is set when other trials ran at once (parallel > 1): EnergyJ
	// is then this trial's part of what was measured, apportioned equally
	// over the trials active at each moment, WindowJ all that was measured
	// over the trial's window, and MeanActive the mean number of trials
	// active over it. Telemetry is the whole device's.
	Shared     bool     `json:"shared,omitempty"`
	WindowJ    *float64 `json:"window_j,omitempty"`
	MeanActive float64  `json:"mean_active,omitempty"`
}

// DeviceReading is one device's share of a trial.
type DeviceReading struct {
	Index     int     `json:"index"`
	Name      string  `json:"name"`
	EnergyJ   float64 `json:"energy_j"`
	Estimated bool    `json:"estimated"`
	Error     string  `json:"error,omitempty"`
}

// Telemetry summarises samples.
type Telemetry struct {
	Samples        int     `json:"samples"`
	MeanPowerW     float64 `json:"mean_power_w"`
	MaxPowerW      float64 `json:"max_power_w"`
	MeanGPUUtil    float64 `json:"mean_gpu_util_pct"`
	MeanMemUtil    float64 `json:"mean_mem_util_pct"`
	MaxMemUsedMiB  float64 `json:"max_mem_used_mib"`
	MaxTempC       float64 `json:"max_temp_c"`
	MeanSMClockMHz float64 `json:"mean_sm_clock_mhz"`
}
