package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// Manifest is <out>/run.json: what a run was, so that resumes and merges
// can refuse results of another config.
type Manifest struct {
	Experiment string `json:"experiment"`
	// ConfigHash covers the config (without its output folder) and the
	// benchmark's specs; runs with equal hashes produce comparable trials.
	ConfigHash string  `json:"config_hash"`
	Config     *Config `json:"config"`
	Shard      string  `json:"shard"`
	Trials     int     `json:"trials"`
	Grid       int     `json:"grid"`
	StartedAt  string  `json:"started_at"`
	// Lost lists, per domain/level and tool, the schema keywords Ollama's
	// tool types drop before a model sees them.
	Lost map[string]map[string][]string `json:"lost_keywords,omitempty"`
	// Interfaces describes every interface the trials played, by
	// "<domain>/<interface>": its level, transforms and what its tools
	// show a model (the report's complexity model reads them here).
	Interfaces map[string]InterfaceInfo `json:"interfaces,omitempty"`
	WarmUps    []WarmUp                 `json:"warm_ups,omitempty"`
	// Meter is the energy meter that measured the trials, MeterInfo what it
	// saw, IdleW the power before the first trial.
	Meter     string  `json:"meter"`
	MeterInfo string  `json:"meter_info,omitempty"`
	IdleW     float64 `json:"idle_w,omitempty"`
	// Isolation is how agent commands were contained: "namespaces" or
	// "none" (see package sandbox); empty when the run ran none.
	Isolation string `json:"isolation,omitempty"`
	// Build is the granite binary that wrote the run (its last resume).
	Build *Build `json:"build,omitempty"`
	// Models describes each Ollama model as /api/show reported it.
	Models map[string]ModelInfo `json:"models,omitempty"`
}

// InterfaceInfo is one interface of one domain (or artifact source) as a
// run played it.
type InterfaceInfo struct {
	Domain     string             `json:"domain"`
	Interface  string             `json:"interface"`
	Level      level.Level        `json:"level"`
	Transforms surface.Transforms `json:"transforms"`
	Metrics    surface.Metrics    `json:"metrics"`
}

// InterfaceKey is the key of Manifest.Interfaces.
func InterfaceKey(domain, iface string) string { return domain + "/" + iface }

// ModelInfo is what Ollama says of a model: the report takes sizes and
// quantisation from here, never from hand-typed tables.
type ModelInfo struct {
	Family        string `json:"family,omitempty"`
	ParameterSize string `json:"parameter_size,omitempty"`
	// Parameters is general.parameter_count, or ParameterSize read as a
	// number when Ollama gives no count.
	Parameters   float64 `json:"parameters,omitempty"`
	Quantization string  `json:"quantization,omitempty"`
	// ContextTokens is the context the model ran with, when known: an
	// Ollama model's num_ctx, or what an OpenAI-compatible server said
	// after the warm-up (0: it did not say).
	ContextTokens int `json:"context_tokens,omitempty"`
	// Context says where that context comes from, and for an
	// OpenAI-compatible entry that granite cannot set it.
	Context string `json:"context,omitempty"`
}

// ParseSize reads Ollama's parameter sizes ("268.10M", "3.2B", "20.9B").
func ParseSize(s string) float64 {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := map[byte]float64{'K': 1e3, 'M': 1e6, 'B': 1e9, 'T': 1e12}
	if s == "" {
		return 0
	}
	m, ok := mult[s[len(s)-1]]
	if !ok {
		m = 1
	} else {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f * m
}

// WarmUp is one model load before a model's first trial on a host.
type WarmUp struct {
	Model  string  `json:"model"`
	Host   string  `json:"host"`
	LoadS  float64 `json:"load_s"`
	Error  string  `json:"error,omitempty"`
	WallS  float64 `json:"wall_s"`
	Config string  `json:"options"`
}

// AddWarmUp keeps one warm-up per model and host: the first. A resume
// loads the model again, often from Ollama's memory in no time; listing
// that load too would misstate what loading the model costs, and the
// manifest of a resumed run should read like that of a run never
// interrupted. (A merge lists every shard's, which were separate runs.)
func (m *Manifest) AddWarmUp(w WarmUp) {
	if !slices.ContainsFunc(m.WarmUps, func(o WarmUp) bool { return o.Model == w.Model && o.Host == w.Host }) {
		m.WarmUps = append(m.WarmUps, w)
	}
}

// ManifestFile is the manifest's name in the output folder.
const ManifestFile = "run.json"

// ReadManifest reads <dir>/run.json.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// WriteManifest replaces run.json atomically: a new file, synced, renamed
// over the old one. When that fails the old run.json stands and the new
// file is removed, so that a full disk leaves no run.json.tmp behind.
func WriteManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(dir, ManifestFile, append(b, '\n'))
}
