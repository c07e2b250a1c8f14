package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// ExperimentSchemaFile validates experiment configs.
const ExperimentSchemaFile = "experiment.schema.json"

// Built-in agents: they run without a model and are labelled as such in
// every record.
const (
	Oracle = "builtin:oracle"
	Silent = "builtin:silent"
)

// IsBuiltin reports whether a model name is a built-in agent.
func IsBuiltin(model string) bool { return strings.HasPrefix(model, "builtin:") }

// Config is one experiment. Zero fields take the documented defaults in
// LoadConfig.
type Config struct {
	Name                string            `json:"name"`
	Description         string            `json:"description,omitempty"`
	Models              []string          `json:"models"`
	Domains             []string          `json:"domains,omitempty"`
	Scenarios           []string          `json:"scenarios,omitempty"`
	Granularities       []mcpdomain.Level `json:"granularities,omitempty"`
	Repetitions         int               `json:"repetitions"`
	MaxAgentTurns       int               `json:"max_agent_turns"`
	AgentTimeoutSeconds float64           `json:"agent_timeout_seconds"`
	Temperature         float64           `json:"temperature"`
	MaxTokens           int               `json:"max_tokens"`
	NumCtx              int               `json:"num_ctx"`
	KeepAlive           string            `json:"keep_alive"`
	Seed                int               `json:"seed"`
	Stream              *bool             `json:"stream,omitempty"`
	Ollama              OllamaConfig      `json:"ollama"`
	Meter               string            `json:"meter"`
	MeterIntervalMS     int               `json:"meter_interval_ms,omitempty"`
	GPUs                []int             `json:"gpus,omitempty"`
	PowercapRoot        string            `json:"powercap_root,omitempty"`
	Output              string            `json:"output"`
	// Artifacts makes this an artifact run: models x artifacts x
	// repetitions, each artifact on a replay server (see LoadArtifacts).
	Artifacts     string `json:"artifacts,omitempty"`
	ArtifactTools string `json:"artifact_tools,omitempty"`
}

// MeterOptions are the meter settings of the config.
func (c *Config) MeterOptions() meter.Options {
	return meter.Options{Kind: c.Meter, Interval: time.Duration(c.MeterIntervalMS) * time.Millisecond, Devices: c.GPUs, PowercapRoot: c.PowercapRoot}
}

// OllamaConfig says where Ollama runs.
type OllamaConfig struct {
	Host  string   `json:"host,omitempty"`
	Hosts []string `json:"hosts,omitempty"`
}

// Timeout is the wall-clock limit of one trial.
func (c *Config) Timeout() time.Duration {
	return time.Duration(c.AgentTimeoutSeconds * float64(time.Second))
}

// Streaming reports whether replies are streamed.
func (c *Config) Streaming() bool { return c.Stream == nil || *c.Stream }

// HostList returns the Ollama hosts, one worker each.
func (c *Config) HostList() []string {
	if len(c.Ollama.Hosts) > 0 {
		return c.Ollama.Hosts
	}
	return []string{c.Ollama.Host}
}

// LoadConfig reads an experiment config: a path on disk, or the name of an
// embedded one ("smoke", "paper"). Domains and scenarios are checked
// against spec; every error carries its position.
func LoadConfig(name string, spec *speclang.Spec) (*Config, error) {
	file, data, err := readConfig(name)
	if err != nil {
		return nil, err
	}
	schemaData, err := fs.ReadFile(specs.FS, ExperimentSchemaFile)
	if err != nil {
		return nil, err
	}
	sch, err := speclang.CompileSchema(ExperimentSchemaFile, schemaData)
	if err != nil {
		return nil, err
	}
	doc, errs := speclang.ParseDocument(file, data, sch)
	if len(errs) > 0 {
		return nil, errs
	}
	c := &Config{}
	if err := doc.Decode(c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var list speclang.ErrorList
	for i, d := range c.Domains {
		if spec.Domain(d) == nil {
			list = append(list, doc.Errorf([]any{"domains", i}, "found domain %q; expected one of %s", d, strings.Join(domainNames(spec), ", ")))
		}
	}
	ids := map[string]bool{}
	for _, d := range spec.Domains {
		for _, s := range d.Scenarios {
			ids[s.ID] = true
		}
	}
	for i, s := range c.Scenarios {
		if !ids[s] {
			list = append(list, doc.Errorf([]any{"scenarios", i}, "found scenario %q, which no scenario table has; expected an id like %s-001", s, spec.Domains[0].Name))
		}
	}
	for i, m := range c.Models {
		if IsBuiltin(m) && m != Oracle && m != Silent {
			list = append(list, doc.Errorf([]any{"models", i}, "found built-in agent %q; expected %s or %s", m, Oracle, Silent))
		}
	}
	for _, f := range []struct {
		key string
		n   int
	}{{"domains", len(c.Domains)}, {"scenarios", len(c.Scenarios)}, {"granularities", len(c.Granularities)}} {
		if c.Artifacts != "" && f.n > 0 {
			list = append(list, doc.Errorf([]any{f.key}, "found %s beside artifacts; expected one or the other: an artifact run takes its tools and prompts from the artifacts", f.key))
		}
	}
	if c.ArtifactTools != "" && c.Artifacts == "" {
		list = append(list, doc.Errorf([]any{"artifact_tools"}, "found artifact_tools without artifacts; expected an artifacts file they belong to"))
	}
	if !strings.HasPrefix(file, "embedded:") {
		// Paths in a config on disk are relative to its folder.
		for _, p := range []*string{&c.Artifacts, &c.ArtifactTools} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(filepath.Dir(file), *p)
			}
		}
	}
	c.defaults()
	for i, h := range c.HostList() {
		if u, err := url.Parse(h); err != nil || u.Scheme == "" || u.Host == "" {
			at := []any{"ollama", "host"}
			if len(c.Ollama.Hosts) > 0 {
				at = []any{"ollama", "hosts", i}
			}
			list = append(list, doc.Errorf(at, "found host %q; expected a URL like http://127.0.0.1:11434", h))
		}
	}
	if len(list) > 0 {
		return nil, list
	}
	return c, nil
}

// readConfig finds a config on disk or among the embedded ones.
func readConfig(name string) (string, []byte, error) {
	data, err := os.ReadFile(name)
	if err == nil {
		return name, data, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	embedded := path.Join("experiments", strings.TrimSuffix(name, ".yaml")+".yaml")
	if data, eerr := fs.ReadFile(specs.FS, embedded); eerr == nil && !strings.Contains(name, "/") {
		return "embedded:" + embedded, data, nil
	}
	names, _ := fs.Glob(specs.FS, "experiments/*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(path.Base(n), ".yaml")
	}
	return "", nil, fmt.Errorf("config %s: no such file, and no embedded config of that name (embedded: %s)", name, strings.Join(names, ", "))
}

// defaults fills the documented defaults.
func (c *Config) defaults() {
	if len(c.Granularities) == 0 && c.Artifacts == "" {
		c.Granularities = slices.Clone(mcpdomain.Levels)
	}
	if c.Repetitions == 0 {
		c.Repetitions = 1
	}
	if c.MaxAgentTurns == 0 {
		c.MaxAgentTurns = 10
	}
	if c.AgentTimeoutSeconds == 0 {
		c.AgentTimeoutSeconds = 360
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 4096
	}
	if c.NumCtx == 0 {
		c.NumCtx = 8192
	}
	if c.KeepAlive == "" {
		c.KeepAlive = "30m"
	}
	if c.Seed == 0 {
		c.Seed = 42
	}
	if c.Meter == "" {
		c.Meter = "auto"
	}
	if c.Ollama.Host == "" && len(c.Ollama.Hosts) == 0 {
		c.Ollama.Host = os.Getenv("OLLAMA_HOST")
		if c.Ollama.Host == "" {
			c.Ollama.Host = "http://127.0.0.1:11434"
		}
		if !strings.Contains(c.Ollama.Host, "://") {
			c.Ollama.Host = "http://" + c.Ollama.Host
		}
	}
	if c.Output == "" {
		c.Output = path.Join("results", c.Name)
	}
}
