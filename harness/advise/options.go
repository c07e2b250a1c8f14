package advise

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// This file turns what granite advise is asked (the models, a domain or
// a server, the candidates) into the config and the field a race runs
// on; its errors name the command's flags, which are what a user fixes.

// Config is the grid's config before its tasks and candidates: the
// models of the experiment config named by config (its domains, levels,
// interfaces and artifacts dropped), the comma-separated models, or the
// config's entries of those models in the order named. The config's
// fault settings are dropped too: a race plays under the one its caller
// sets (granite advise --faults).
func Config(spec *speclang.Spec, config, models string) (*results.Config, error) {
	cfg := &results.Config{Name: "advise"}
	if config != "" {
		c, err := harness.LoadConfig(config, spec)
		if err != nil {
			return nil, err
		}
		cfg = c
		cfg.Domains, cfg.Scenarios, cfg.Granularities, cfg.Interfaces = nil, nil, nil, nil
		cfg.Artifacts, cfg.ArtifactTools, cfg.ArtifactCmd, cfg.ArtifactURL, cfg.Groups = "", "", "", "", ""
		// A race plays under one fault setting, the one --faults gives.
		cfg.Faults = nil
	}
	if models != "" {
		var names []string
		for _, m := range strings.Split(models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				names = append(names, m)
			}
		}
		if config != "" {
			var keep []results.ModelEntry
			for _, n := range names {
				e, ok := cfg.Entry(n)
				if !ok {
					return nil, fmt.Errorf("--models: %q is not in %s", n, config)
				}
				keep = append(keep, e)
			}
			cfg.Models = keep
		} else {
			cfg.Models = results.Entries(names...)
		}
	}
	if len(cfg.Models) == 0 {
		return nil, errors.New("no models: give --models (e.g. qwen3:4b,builtin:sim) or --config")
	}
	return cfg, nil
}

// Field is what a race runs on: its candidates, their interfaces and
// tasks.
type Field struct {
	// Source says whose interfaces race: "domain D" or "server N".
	Source string
	// Out is the results folder.
	Out string
	// Cands are the candidates in plan order (Candidates), so that the
	// plan and the race name them alike.
	Cands []Candidate
	// Specs and Ifaces are each candidate's spec and interface, by name.
	Specs  map[string]surface.Spec
	Ifaces map[string]*surface.Interface
	// Tasks are the task names; Calls the gold calls of each task, by
	// candidate (a composition changes them).
	Tasks []string
	Calls map[string][]int
	// goldCalls are the gold calls of each task at an interface, and
	// composes says whether the source offers a composite operation (a
	// preset, a workflow) that a composition can take away.
	goldCalls func(surface.Spec) ([]int, error)
	composes  bool
	// Groups gives the groups file of a regrouped server's level; nil for
	// a domain, whose levels are written.
	Groups func(surface.Spec) ([]byte, error)
}

// Success is what the simulated subject of a skill completes: per
// candidate, per task, the probability of every gold call right.
func (f *Field) Success(skill float64) map[string][]float64 {
	p := map[string][]float64{}
	for _, c := range f.Cands {
		m := harness.MeasureInterface(f.Ifaces[c.Name])
		for _, n := range f.Calls[c.Name] {
			p[c.Name] = append(p[c.Name], agent.SimTaskSuccess(m, skill, n))
		}
	}
	return p
}

// DomainField is the field over a generated domain (d its spec, dom its
// generated code), its scenarios the tasks; it fills cfg's domain and
// candidates. candidates is as Choose reads it; out defaults to
// results/advise-<domain>.
func DomainField(d *speclang.Domain, dom *mcpdomain.Domain, candidates, out string, cfg *results.Config) (*Field, error) {
	catalogue, err := serve.DomainInterfaces(dom)
	if err != nil {
		return nil, err
	}
	f := newField("domain "+d.Name, cmp.Or(out, filepath.Join("results", "advise-"+d.Name)))
	for _, s := range d.Scenarios {
		f.Tasks = append(f.Tasks, s.ID)
	}
	f.goldCalls = func(sp surface.Spec) ([]int, error) {
		var out []int
		for _, s := range d.Scenarios {
			calls, err := gold.Composed(d, dom, sp, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.ID, err)
			}
			out = append(out, len(calls))
		}
		return out, nil
	}
	for _, lv := range level.Levels {
		f.composes = f.composes || serve.Composes(dom, lv, "")
	}
	cfg.Domains = []string{d.Name}
	build := func(s surface.Spec) (*surface.Interface, error) { return serve.DomainInterface(dom, s) }
	return f, f.choose(candidates, catalogue, build, cfg)
}

// Server is an MCP server whose regrouped interfaces race: its tools
// that an interface can carry (regroup.Exposable) and their groups.
type Server struct {
	// Name is the server's short name (regroup.ServerName).
	Name   string
	Tools  []toolsrc.Tool
	Groups *regroup.Groups
	// GroupsFile is the groups file the groups were read from, "" when
	// derived; Skipped says that tools the file names were left out of
	// Tools.
	GroupsFile string
	Skipped    bool
	// Cmd or URL is the live server the trials play on; ToolsFile the
	// tools/list file the tools were read from when neither is set.
	Cmd, URL, ToolsFile string
}

// ServerField is the field over a server's regrouped interfaces, its
// tasks tasks artifacts synthesized offline (0: one per tool and kind,
// as granite synth makes them), written under out (default
// results/advise-<server>) with their tools; it fills cfg's artifact
// source and candidates.
func ServerField(s Server, candidates, out string, tasks int, cfg *results.Config) (*Field, error) {
	rg, err := regroup.Build(s.Tools, s.Groups)
	if err != nil {
		return nil, err
	}
	catalogue, err := rg.Catalogue(s.Name)
	if err != nil {
		return nil, err
	}
	f := newField("server "+s.Name, cmp.Or(out, filepath.Join("results", "advise-"+s.Name)))
	f.Groups = func(sp surface.Spec) ([]byte, error) {
		return s.Groups.YAML([]string{fmt.Sprintf("groups of %s's tools for %s (granite advise)", s.Name, sp.Name)})
	}
	origin := "tools:" + s.ToolsFile
	if s.Cmd != "" || s.URL != "" {
		origin = "mcp:" + s.Cmd + s.URL
	}
	listed := scenarios.Listed(s.Tools)
	arts, err := scenarios.Offline(origin, listed, tasks)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(f.Out, "artifacts.jsonl")
	if err := scenarios.WriteArtifactsFile(path, listed, arts); err != nil {
		return nil, err
	}
	var calls []int
	for _, a := range arts {
		f.Tasks, calls = append(f.Tasks, a.ID), append(calls, len(a.ExpectedCalls))
	}
	f.goldCalls = func(surface.Spec) ([]int, error) { return calls, nil }
	cfg.Artifacts, cfg.ArtifactTools = path, scenarios.ToolsFile(path)
	cfg.ArtifactCmd, cfg.ArtifactURL, cfg.Groups = s.Cmd, s.URL, s.GroupsFile
	if s.Skipped && s.GroupsFile != "" {
		// The run reads the groups against the tools file, which holds no
		// skipped tool: it gets the groups without them.
		cfg.Groups = filepath.Join(f.Out, "groups.yaml")
		y, err := s.Groups.YAML([]string{fmt.Sprintf("%s without the tools granite advise skipped", s.GroupsFile)})
		if err == nil {
			err = os.WriteFile(cfg.Groups, y, 0o644)
		}
		if err != nil {
			return nil, err
		}
	}
	build := func(sp surface.Spec) (*surface.Interface, error) {
		return surface.Build(sp, s.Name, rg.SurfaceTools(sp.Level))
	}
	return f, f.choose(candidates, catalogue, build, cfg)
}

func newField(source, out string) *Field {
	return &Field{Source: source, Out: out, Specs: map[string]surface.Spec{}, Ifaces: map[string]*surface.Interface{}, Calls: map[string][]int{}}
}

// choose builds the candidates named: "standard" (or "") the catalogue,
// "levels" L4..L1 as written, "compositions" each level as written and
// atomic, else interface names (L4,L3,L3-terse,...); each becomes a level
// or an interface of cfg, with its tasks' gold calls.
func (f *Field) choose(candidates string, catalogue []*surface.Interface, build func(surface.Spec) (*surface.Interface, error), cfg *results.Config) error {
	var chosen []surface.Spec
	switch candidates {
	case "standard", "":
		for _, i := range catalogue {
			chosen = append(chosen, i.Spec)
		}
	case "levels":
		for _, lv := range level.Levels {
			chosen = append(chosen, surface.Identity(lv))
		}
	case "compositions":
		if !f.composes {
			return fmt.Errorf("--candidates compositions: %s offers no composite operation (no preset, no workflow), so its atomic interfaces are its levels as written: race --candidates levels (a regrouped server's tools are the server's own, none of them composed by granite)", f.Source)
		}
		for _, lv := range level.Levels {
			atomic, err := surface.Parse(string(lv) + "-atomic")
			if err != nil {
				return err
			}
			chosen = append(chosen, surface.Identity(lv), atomic)
		}
	default:
		for _, n := range strings.Split(candidates, ",") {
			s, err := surface.Parse(n)
			if err != nil {
				return fmt.Errorf("--candidates: %w", err)
			}
			chosen = append(chosen, s)
		}
	}
	for _, s := range chosen {
		iface, err := build(s)
		if err != nil {
			return fmt.Errorf("candidate %s: %w", s.Name, err)
		}
		if _, dup := f.Specs[s.Name]; dup {
			return fmt.Errorf("--candidates: %s given twice", s.Name)
		}
		calls, err := f.goldCalls(s)
		if err != nil {
			return fmt.Errorf("candidate %s: %w", s.Name, err)
		}
		f.Specs[s.Name], f.Ifaces[s.Name], f.Calls[s.Name] = s, iface, calls
		if s.IsIdentity() {
			cfg.Granularities = append(cfg.Granularities, s.Level)
		} else {
			cfg.Interfaces = append(cfg.Interfaces, s)
		}
	}
	f.Cands = Candidates(cfg)
	return nil
}
