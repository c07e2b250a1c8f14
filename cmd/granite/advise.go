package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/advise"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
	"github.com/mcpgranite/granite/specs"
)

func runAdvise(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("advise", "(--domain D | --mcp-cmd CMD | --mcp-url URL | --tools FILE) [--models a,b | --config FILE] [--candidates standard|levels|A,B] [--plan] [--out DIR] [--resume]",
		"Answers which interface to publish for the models given: races the candidate interfaces\n"+
			"(default: the standard catalogue, every level and each transform preset over it) on the\n"+
			"domain's scenarios, or on artifacts synthesized offline from the server's tools, a round\n"+
			"at a time, dropping a candidate once the trials show it worse than another at the error\n"+
			"rate asked for, and writes advise.md, advise.json and per model the interface (and groups\n"+
			"file) to publish beside the trials, which granite report and view read. --plan only\n"+
			"estimates, with the simulated subject (builtin:sim), how many trials the race needs.", stderr)
	domain := fset.String("domain", "", "race interfaces of this generated domain, on its scenarios")
	src := addExternalSource(fset, true)
	models := fset.String("models", "", "the models (comma-separated): Ollama tags or built-in agents, e.g. qwen3:4b,builtin:sim@2.5")
	config := fset.String("config", "", "take the models and their settings from this experiment config (its domains and levels are not used)")
	candidates := fset.String("candidates", "standard", "standard (the catalogue), levels (L4..L1 as written), or interface names (L4,L3,L3-terse,...)")
	procedure := fset.String("procedure", advise.DefaultProcedure, "how the race drops candidates: kn (Kim and Nelson's indifference-zone race) or sign (paired sign tests, Holm)")
	alpha := fset.Float64("alpha", advise.DefaultAlpha, "the race's error rate")
	delta := fset.Float64("delta", advise.DefaultDelta, "the indifference zone: a pick within this much TC of the best is right")
	minRounds := fset.Int("min-rounds", 0, "rounds before the race first drops a candidate (kn's first stage; default 5 for kn, 2 for sign)")
	maxRounds := fset.Int("max-rounds", 0, "the most rounds (each: every surviving candidate on every task once); default: the round by which the plan's simulated races end")
	maxTrials := fset.Int("max-trials", 0, "stop a model's race once it spent this many trials (0: no bound)")
	maxSeconds := fset.Float64("max-model-seconds", 0, "stop a model's race once it spent this much model time (0: no bound)")
	plan := fset.Bool("plan", false, "estimate how many trials the race needs (simulated subject) and stop")
	skill := fset.Float64("skill", agent.SimDefaultSkill, "with --plan: the simulated skill of models that are not builtin:sim")
	tasks := fset.Int("tasks", 0, "for a server: how many artifacts to synthesize offline as the race's tasks (0: one per tool and kind, as granite synth does)")
	out := fset.String("out", "", "results folder (default: results/advise-<source>)")
	resume := fset.Bool("resume", false, "continue a race in --out from its journal")
	seed := fset.Uint64("seed", 42, "seed of the plan's simulations and the pick's intervals")
	if code, ok := parse(fset, args); !ok {
		return code
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return fail(stderr, "advise", 1, err)
	}
	cfg, err := adviseConfig(*config, *models, spec)
	if err != nil {
		return fail(stderr, "advise", 2, err)
	}
	race := advise.Race{Procedure: *procedure, Alpha: *alpha, Delta: *delta, MinRounds: *minRounds, MaxRounds: *maxRounds}
	if err := race.Check(); err != nil {
		return fail(stderr, "advise", 2, err)
	}
	f, err := adviseField(ctx, spec, *domain, src, *candidates, *out, *tasks, cfg, stderr)
	if err != nil {
		return fail(stderr, "advise", 2, err)
	}
	// The plan: how many rounds the race needs on a simulated subject of
	// each model's skill, which also sizes the race when --max-rounds is
	// not given.
	needed := 0
	for _, m := range cfg.ModelNames() {
		s := *skill
		if sk, ok := agent.SimSkill(m); ok {
			s = sk
		}
		p := f.success(s)
		rounds, res := advise.TrialsFor(race.Normal(), f.cands, p, 1-race.Normal().Alpha, *seed)
		needed = max(needed, rounds)
		if *plan {
			fmt.Fprintf(stdout, "%s (skill %.2g): %d rounds, %.0f trials on average (p90 %d), right pick in %.1f%% of simulated races\n",
				oneline.Escape(m), s, rounds, res.TrialsMean, res.TrialsP90, 100*res.Right)
		}
	}
	if *plan {
		fmt.Fprintf(stdout, "%d candidates, %d tasks; %s; the full grid at %d rounds is %d trials a model (builtin:sim's success model: harness/agent/simmodel.go)\n",
			len(f.cands), len(f.tasks), advise.ProcedureWords(race.Normal()), needed, needed*len(f.cands)*len(f.tasks))
		return 0
	}
	if race.MaxRounds == 0 {
		race.MaxRounds = max(race.Normal().MinRounds, needed)
	}
	cfg.Repetitions = race.MaxRounds
	harness.Defaults(cfg)
	setup := advise.Setup{Config: cfg, Race: race, MaxTrials: *maxTrials, MaxModelSeconds: *maxSeconds, Seed: *seed}
	opts := harness.Options{Out: f.out, Resume: *resume, Progress: stderr, Lookup: gen.Lookup, Terminal: isTerminal(stderr)}
	adv, err := advise.Run(ctx, spec, setup, opts)
	if err != nil {
		return fail(stderr, "advise", 1, err)
	}
	if err := advise.Write(adv, f.specs, f.groups, f.source); err != nil {
		return fail(stderr, "advise", 1, err)
	}
	for _, m := range adv.Models {
		fmt.Fprintf(stdout, "%s: publish %s (TC %.3f, 95%% CI %.3f–%.3f) after %d trials of a %d-trial grid; %s\n",
			oneline.Escape(m.Model), m.Pick.Pick, m.Pick.Mean, m.Pick.Low, m.Pick.High, m.Trials, adv.GridTrials, m.Stopped)
	}
	fmt.Fprintf(stdout, "advice: %s\n", filepath.Join(adv.Out, advise.PageFile))
	return 0
}

// adviseConfig is the grid's config before its tasks and candidates: the
// models from --config or --models.
func adviseConfig(config, models string, spec *speclang.Spec) (*results.Config, error) {
	cfg := &results.Config{Name: "advise"}
	if config != "" {
		c, err := harness.LoadConfig(config, spec)
		if err != nil {
			return nil, err
		}
		cfg = c
		cfg.Domains, cfg.Scenarios, cfg.Granularities, cfg.Interfaces = nil, nil, nil, nil
		cfg.Artifacts, cfg.ArtifactTools, cfg.ArtifactCmd, cfg.ArtifactURL, cfg.Groups = "", "", "", "", ""
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

// field is what an advise races on: its candidates, their interfaces and
// tasks, and the config's task source filled in.
type field struct {
	source string
	out    string
	cands  []advise.Candidate
	specs  map[string]surface.Spec
	ifaces map[string]*surface.Interface
	// tasks are the task names, calls the gold calls of each task (the
	// same at every level).
	tasks []string
	calls []int
	// groups gives the groups file of a regrouped server's level.
	groups func(surface.Spec) ([]byte, error)
}

// success is what the simulated subject of a skill completes: per
// candidate, per task, the probability of every gold call right.
func (f *field) success(skill float64) map[string][]float64 {
	p := map[string][]float64{}
	for _, c := range f.cands {
		m := harness.MeasureInterface(f.ifaces[c.Name])
		for _, n := range f.calls {
			p[c.Name] = append(p[c.Name], agent.SimTaskSuccess(m, skill, n))
		}
	}
	return p
}

// adviseField fills cfg's task source and candidates from the flags; a
// server's tools it skips are warned of on stderr.
func adviseField(ctx context.Context, spec *speclang.Spec, domain string, src *externalSource, candidates, out string, tasks int, cfg *results.Config, stderr io.Writer) (*field, error) {
	f := &field{specs: map[string]surface.Spec{}, ifaces: map[string]*surface.Interface{}}
	var catalogue []*surface.Interface
	var build func(surface.Spec) (*surface.Interface, error)
	switch {
	case domain != "" && (src.live() || *src.tools != ""):
		return nil, errors.New("give --domain or a server (--mcp-cmd, --mcp-url, --tools), not both")
	case domain != "":
		d := spec.Domain(domain)
		dom, ok := gen.Lookup(domain)
		if d == nil || !ok {
			return nil, fmt.Errorf("unknown domain %q: want one of %s", domain, domainNames())
		}
		var err error
		if catalogue, err = serve.DomainInterfaces(dom); err != nil {
			return nil, err
		}
		build = func(s surface.Spec) (*surface.Interface, error) { return serve.DomainInterface(dom, s) }
		for _, s := range d.Scenarios {
			f.tasks, f.calls = append(f.tasks, s.ID), append(f.calls, len(s.Gold[level.L4]))
		}
		cfg.Domains = []string{domain}
		f.source = "domain " + domain
		f.out = cmp.Or(out, filepath.Join("results", "advise-"+domain))
	default:
		tools, name, g, skipped, err := src.forInterfaces(ctx, "advise", stderr)
		if err != nil {
			return nil, err
		}
		rg, err := regroup.Build(tools, g)
		if err != nil {
			return nil, err
		}
		if catalogue, err = rg.Catalogue(name); err != nil {
			return nil, err
		}
		build = func(s surface.Spec) (*surface.Interface, error) {
			return surface.Build(s, name, rg.SurfaceTools(s.Level))
		}
		f.groups = func(s surface.Spec) ([]byte, error) {
			return g.YAML([]string{fmt.Sprintf("groups of %s's tools for %s (granite advise)", name, s.Name)})
		}
		origin := "tools:" + *src.tools
		if src.live() {
			origin = "mcp:" + *src.mcpCmd + *src.mcpURL
		}
		listed := scenarios.Listed(tools)
		arts, err := scenarios.Offline(origin, listed, tasks)
		if err != nil {
			return nil, err
		}
		f.out = cmp.Or(out, filepath.Join("results", "advise-"+name))
		path := filepath.Join(f.out, "artifacts.jsonl")
		if err := writeSynth(path, nil, listed, arts); err != nil {
			return nil, err
		}
		for _, a := range arts {
			f.tasks, f.calls = append(f.tasks, a.ID), append(f.calls, len(a.ExpectedCalls))
		}
		cfg.Artifacts, cfg.ArtifactTools = path, scenarios.ToolsFile(path)
		cfg.ArtifactCmd, cfg.ArtifactURL, cfg.Groups = *src.mcpCmd, *src.mcpURL, *src.groups
		if len(skipped) > 0 && *src.groups != "" {
			// The run reads the groups against the tools file, which
			// holds no skipped tool: it gets the groups without them.
			cfg.Groups = filepath.Join(f.out, "groups.yaml")
			y, err := g.YAML([]string{fmt.Sprintf("%s without the tools granite advise skipped", *src.groups)})
			if err == nil {
				err = os.WriteFile(cfg.Groups, y, 0o644)
			}
			if err != nil {
				return nil, err
			}
		}
		f.source = "server " + name
	}
	var chosen []surface.Spec
	switch candidates {
	case "standard", "":
		for _, i := range catalogue {
			chosen = append(chosen, i.Spec)
		}
	case "levels":
		for _, lv := range level.Levels {
			chosen = append(chosen, surface.Spec{Name: string(lv), Level: lv})
		}
	default:
		for _, n := range strings.Split(candidates, ",") {
			s, err := surface.Parse(n)
			if err != nil {
				return nil, fmt.Errorf("--candidates: %w", err)
			}
			chosen = append(chosen, s)
		}
	}
	for _, s := range chosen {
		iface, err := build(s)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", s.Name, err)
		}
		if _, dup := f.specs[s.Name]; dup {
			return nil, fmt.Errorf("--candidates: %s given twice", s.Name)
		}
		f.specs[s.Name], f.ifaces[s.Name] = s, iface
		if s.Plain() {
			cfg.Granularities = append(cfg.Granularities, s.Level)
		} else {
			cfg.Interfaces = append(cfg.Interfaces, s)
		}
	}
	// The race's candidates in plan order (advise.Candidates), so that
	// the plan and the race name them alike.
	f.cands = advise.Candidates(cfg)
	return f, nil
}
