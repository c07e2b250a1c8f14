package meter

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"
)

// Probe is what this node can measure.
type Probe struct {
	NVML struct {
		OK      bool       `json:"ok"`
		Error   string     `json:"error,omitempty"`
		Driver  string     `json:"driver,omitempty"`
		Devices []GPUProbe `json:"devices,omitempty"`
	} `json:"nvml"`
	Tegra struct {
		OK         bool        `json:"ok"`
		Error      string      `json:"error,omitempty"`
		Rails      []RailProbe `json:"rails,omitempty"`
		GPUDevfreq string      `json:"gpu_devfreq,omitempty"`
	} `json:"tegra"`
	RAPL struct {
		OK    bool     `json:"ok"`
		Error string   `json:"error,omitempty"`
		Root  string   `json:"root"`
		Zones []string `json:"zones,omitempty"`
	} `json:"rapl"`
	// Meters are the meters built into this binary.
	Meters []string `json:"meters"`
	// Auto is the meter auto picks here.
	Auto string `json:"auto"`
}

// RailProbe is one Jetson power rail.
type RailProbe struct {
	Label  string `json:"label"`
	Layout string `json:"layout"`
	Path   string `json:"path"`
}

// GPUProbe describes one GPU.
type GPUProbe struct {
	Index         int     `json:"index"`
	Name          string  `json:"name"`
	UUID          string  `json:"uuid"`
	EnergyCounter bool    `json:"energy_counter"`
	PowerLimitW   float64 `json:"power_limit_w,omitempty"`
}

// ProbeNode looks for NVML, the tegra power rails and RAPL.
func ProbeNode(o Options) Probe {
	o.defaults()
	var p Probe
	p.Meters = BuiltIn()
	probeNVML(&p)
	if rails, err := findRails(o.SysRoot); err != nil {
		p.Tegra.Error = err.Error()
	} else {
		p.Tegra.OK = true
		for _, r := range rails {
			p.Tegra.Rails = append(p.Tegra.Rails, RailProbe{Label: r.label, Layout: r.layout, Path: r.dir})
		}
		if g := findGPUDevfreq(o.SysRoot); g != "" {
			p.Tegra.GPUDevfreq = g
		}
	}
	p.RAPL.Root = o.PowercapRoot
	if m, err := newRAPL(o, time.Now); err != nil {
		p.RAPL.Error = err.Error()
	} else {
		p.RAPL.OK = true
		for _, z := range m.zones {
			p.RAPL.Zones = append(p.RAPL.Zones, fmt.Sprintf("%s (%s)", z.name, filepath.Base(z.dir)))
		}
	}
	sort.Strings(p.RAPL.Zones)
	switch {
	case p.NVML.OK:
		p.Auto = NVML
	case p.Tegra.OK:
		p.Auto = Tegra
	case p.RAPL.OK:
		p.Auto = RAPL
	default:
		p.Auto = None
	}
	return p
}
