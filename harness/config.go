package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/configcheck"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// ExperimentSchemaFile validates experiment configs.
const ExperimentSchemaFile = "experiment.schema.json"

// meterOptions are the meter settings of a config.
func meterOptions(c *results.Config) meter.Options {
	return meter.Options{Kind: c.Meter, Interval: time.Duration(c.MeterIntervalMS) * time.Millisecond, Devices: c.GPUs, PowercapRoot: c.PowercapRoot, SysRoot: c.SysfsRoot}
}

// LoadConfig reads an experiment config: a path on disk, or the name of an
// embedded one ("smoke", "paper"). Domains and scenarios are checked
// against spec; every error carries its position.
func LoadConfig(name string, spec *speclang.Spec) (*results.Config, error) {
	file, data, err := readConfig(name)
	if err != nil {
		return nil, err
	}
	schemaData, err := fs.ReadFile(specs.FS, ExperimentSchemaFile)
	if err != nil {
		return nil, err
	}
	sch, err := schemacheck.Compile("granite:"+ExperimentSchemaFile, string(schemaData))
	if err != nil {
		return nil, err
	}
	doc, errs := speclang.ParseDocument(file, data, sch)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := configcheck.InterfaceNames(doc); len(errs) > 0 {
		return nil, errs
	}
	c := &results.Config{}
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
	list = append(list, configcheck.Models(doc, c.Models)...)
	for _, f := range []struct {
		key string
		n   int
	}{{"domains", len(c.Domains)}, {"scenarios", len(c.Scenarios)}} {
		if c.Artifacts != "" && f.n > 0 {
			list = append(list, doc.Errorf([]any{f.key}, "found %s beside artifacts; expected one or the other: an artifact run takes its tools and prompts from the artifacts", f.key))
		}
	}
	for _, f := range []struct{ key, v string }{{"artifact_tools", c.ArtifactTools}, {"groups", c.Groups}, {"artifact_cmd", c.ArtifactCmd}, {"artifact_url", c.ArtifactURL}} {
		if f.v != "" && c.Artifacts == "" {
			list = append(list, doc.Errorf([]any{f.key}, "found %s without artifacts; expected an artifacts file it belongs to", f.key))
		}
	}
	list = append(list, configcheck.Interfaces(doc, c)...)
	list = append(list, configcheck.Faults(doc, c)...)
	if c.ArtifactCmd != "" && c.ArtifactURL != "" {
		list = append(list, doc.Errorf([]any{"artifact_url"}, "found artifact_url beside artifact_cmd; expected one live source"))
	}
	if c.ArtifactCmd != "" {
		if _, err := reference.ParseCommandTemplate(c.ArtifactCmd); err != nil {
			list = append(list, doc.Errorf([]any{"artifact_cmd"}, "found a command template that does not expand: %v", err))
		}
	}
	if !strings.HasPrefix(file, "embedded:") {
		// Paths in a config on disk are relative to its folder.
		for _, p := range []*string{&c.Artifacts, &c.ArtifactTools, &c.Groups} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(filepath.Dir(file), *p)
			}
		}
	}
	Defaults(c)
	list = append(list, agent.CheckConfig(doc, c)...)
	if len(list) > 0 {
		return nil, list
	}
	return c, nil
}

// readConfig finds a config on disk or among the embedded ones.
func readConfig(name string) (string, []byte, error) {
	data, err := speclang.ReadYAMLFile(name)
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

// Defaults fills a config's zero fields with the documented defaults, the
// backends' settings among them, as LoadConfig does; granite advise builds
// its config in code.
func Defaults(c *results.Config) {
	// Interfaces without granularities are the whole plan: filling in the
	// four levels would run them as written too, which was not asked for.
	if len(c.Granularities) == 0 && len(c.Interfaces) == 0 && c.Artifacts == "" {
		c.Granularities = slices.Clone(level.Levels)
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
	agent.Defaults(c)
	if c.Output == "" {
		c.Output = path.Join("results", c.Name)
	}
}

// domainNames lists the spec's domains in spec order, for a message that
// names the choices.
func domainNames(spec *speclang.Spec) []string {
	var out []string
	for _, d := range spec.Domains {
		out = append(out, d.Name)
	}
	return out
}
