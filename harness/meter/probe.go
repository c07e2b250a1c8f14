package meter

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Probe is what this node can measure.
type Probe struct {
	NVML struct {
		OK      bool       `json:"ok"`
		Error   string     `json:"error,omitempty"`
		Driver  string     `json:"driver,omitempty"`
		Devices []GPUProbe `json:"devices,omitempty"`
	} `json:"nvml"`
	RAPL struct {
		OK    bool     `json:"ok"`
		Error string   `json:"error,omitempty"`
		Root  string   `json:"root"`
		Zones []string `json:"zones,omitempty"`
	} `json:"rapl"`
	// Auto is the meter auto picks here.
	Auto string `json:"auto"`
}

// GPUProbe describes one GPU.
type GPUProbe struct {
	Index         int     `json:"index"`
	Name          string  `json:"name"`
	UUID          string  `json:"uuid"`
	EnergyCounter bool    `json:"energy_counter"`
	PowerLimitW   float64 `json:"power_limit_w,omitempty"`
}

// ProbeNode looks for NVML (through lib, nil: the system's) and RAPL.
func ProbeNode(lib nvml.Interface, o Options) Probe {
	o.defaults()
	var p Probe
	if lib == nil {
		lib = nvml.New()
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		p.NVML.Error = fmt.Sprintf("%v (no NVIDIA driver?)", ret)
	} else {
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
		lib.Shutdown()
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
	case p.RAPL.OK:
		p.Auto = RAPL
	default:
		p.Auto = None
	}
	return p
}
