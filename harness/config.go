package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
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
	if errs := checkInterfaceNames(doc); len(errs) > 0 {
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
	list = append(list, checkModels(doc, c.Models)...)
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
	list = append(list, checkInterfaces(doc, c)...)
	list = append(list, checkFaults(doc, c)...)
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

// checkModels checks what the schema cannot say of the model entries:
// built-in agents by name, names given once, and the fields each backend
// takes.
func checkModels(doc *speclang.Document, models []results.ModelEntry) speclang.ErrorList {
	var list speclang.ErrorList
	seen := map[string]bool{}
	for i, m := range models {
		at := func(field string) []any {
			if field == "" || m.IsPlain() {
				return []any{"models", i}
			}
			return []any{"models", i, field}
		}
		if seen[m.Name] {
			list = append(list, doc.Errorf(at("name"), "found model name %q again; expected each name once: trial ids, records and the report tell models apart by it", m.Name))
		}
		seen[m.Name] = true
		list = append(list, agent.For(m).Check(doc, m, at)...)
	}
	return list
}

// checkInterfaces checks what the schema cannot say of the interfaces:
// transforms that conflict, transforms that change nothing at L4 (whose
// tools, a domain's or a server's as published, have no actions), names
// given once among the interfaces and the granularities, and names that
// say what the interface is. A missing name is filled with the standard
// one (surface.DefaultName), so that it is what granite list --interfaces
// and granite serve --interface call the same interface.
func checkInterfaces(doc *speclang.Document, c *results.Config) speclang.ErrorList {
	var list speclang.ErrorList
	// seen maps each name to what it names; same maps each interface's
	// level and transforms to its name, so that one interface listed twice
	// under two names is found too.
	type key struct {
		lv level.Level
		t  surface.Transforms
	}
	seen := map[string]string{}
	same := map[key]string{}
	for _, lv := range c.Granularities {
		seen[string(lv)] = "granularities"
		same[key{lv, surface.Transforms{}}] = string(lv)
	}
	for i := range c.Interfaces {
		s := &c.Interfaces[i]
		at := func(field string) []any { return []any{"interfaces", i, field} }
		for _, p := range s.Check() {
			list = append(list, doc.Errorf(at(p.Key), "%s", p.Msg))
		}
		named := s.Name != ""
		if !named {
			s.Name = surface.DefaultName(s.Level, s.Transforms)
		}
		// A name that reads as another interface (a bare level name is the
		// level as written) would have records say one and hold another.
		if p, err := surface.Parse(s.Name); err == nil && named && (p.Level != s.Level || p.Transforms.Normal() != s.Transforms.Normal()) {
			list = append(list, doc.Errorf(at("name"), "found name %q on %s; expected a name of its own, or no name for its standard one, %s: %q is the standard name of %s, and records, scores and the report tell interfaces apart by name",
				s.Name, describe(s.Level, s.Transforms), surface.DefaultName(s.Level, s.Transforms), s.Name, describe(p.Level, p.Transforms)))
			continue
		}
		if where, ok := seen[s.Name]; ok {
			what := "again"
			if where == "granularities" {
				what = "again, which granularities already runs as the level as written"
			}
			list = append(list, doc.Errorf(at("name"), "found interface name %q %s; expected each name once among interfaces and granularities: records, scores and the report tell interfaces apart by it", s.Name, what))
			continue
		}
		seen[s.Name] = "interfaces"
		k := key{s.Level, s.Transforms.Normal()}
		if other, ok := same[k]; ok {
			list = append(list, doc.Errorf([]any{"interfaces", i}, "found interface %q, which is %q again (%s); expected each interface once: its trials would repeat the other's", s.Name, other, describe(s.Level, s.Transforms)))
			continue
		}
		same[k] = s.Name
	}
	return list
}

// checkInterfaceNames parses each interface a config gives by name, so
// that a name surface.Parse refuses is an error at its place rather than
// a failure to decode the config.
func checkInterfaceNames(doc *speclang.Document) speclang.ErrorList {
	var raw struct {
		Interfaces []json.RawMessage `json:"interfaces"`
	}
	if doc.Decode(&raw) != nil {
		return nil // a family's name: the schema allows only those
	}
	var list speclang.ErrorList
	for i, item := range raw.Interfaces {
		var name string
		if json.Unmarshal(item, &name) != nil {
			continue
		}
		if _, err := surface.Parse(name); err != nil {
			list = append(list, doc.Errorf([]any{"interfaces", i}, "%v", err))
		}
	}
	return list
}

// describe says what an interface is: its level and its transforms away
// from the defaults.
func describe(lv level.Level, t surface.Transforms) string {
	if ch := t.Changes(); len(ch) > 0 {
		return string(lv) + " with " + strings.Join(ch, ", ")
	}
	return string(lv) + " as written"
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
