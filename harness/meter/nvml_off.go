//go:build nonvml

package meter

import "errors"

// nvmlBuiltIn says this binary has the NVML meter; a nonvml build (the
// static, CGO-free one) leaves go-nvml out.
const nvmlBuiltIn = false

// errNVMLNotBuilt says which build measures NVIDIA GPUs.
var errNVMLNotBuilt = errors.New("nvml: not built into this binary (built with -tags nonvml, CGO_ENABLED=0); " +
	"use the cgo build (granite-linux-amd64 or granite-linux-arm64 from make release) to measure NVIDIA GPUs")

func openNVML(Options) (Meter, error) { return nil, errNVMLNotBuilt }

func probeNVML(p *Probe) { p.NVML.Error = errNVMLNotBuilt.Error() }
