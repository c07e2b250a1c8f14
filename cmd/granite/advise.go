package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/advise"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// runAdvise is granite advise: a race of candidate interfaces (the
// advise package's) for the models given, or with --plan its estimate.
func runAdvise(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("advise", "(--domain D | --mcp-cmd CMD | --mcp-url URL | --tools FILE) [--models a,b | --config FILE] [--candidates standard|levels|compositions|A,B] [--faults name:rate[:kinds]] [--plan] [--out DIR] [--resume]",
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
	candidates := fset.String("candidates", "standard", "standard (the catalogue), levels (L4..L1 as written), compositions (each level as written and atomic: a domain's presets and workflows taken away), or interface names (L4,L3,L3-terse,...)")
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
	faultsFlag := fset.String("faults", "", "play every trial under this fault setting, name:rate or name:rate:kind,kind as granite serve --faults takes it (flaky:0.2:transient,timeout), so that the candidates meet the same faults; drawn under the config's seed")
	if err := parse(fset, args); err != nil {
		return err
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return err
	}
	cfg, err := advise.Config(spec, *config, *models)
	if err != nil {
		return badUsage(err)
	}
	if *faultsFlag != "" {
		setting, err := faults.ParseSetting(*faultsFlag)
		if err != nil {
			return usagef("--faults: %v", err)
		}
		cfg.Faults = []faults.Setting{setting}
	}
	race := advise.Race{Procedure: *procedure, Alpha: *alpha, Delta: *delta, MinRounds: *minRounds, MaxRounds: *maxRounds}
	if err := race.Check(); err != nil {
		return badUsage(err)
	}
	f, err := adviseField(ctx, spec, *domain, src, *candidates, *out, *tasks, cfg, stderr)
	if err != nil {
		return badUsage(err)
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
		p := f.Success(s)
		rounds, res := advise.TrialsFor(race.Normal(), f.Cands, p, 1-race.Normal().Alpha, *seed)
		needed = max(needed, rounds)
		if *plan {
			fmt.Fprintf(stdout, "%s (skill %.2g): %d rounds, %.0f trials on average (p90 %d), right pick in %.1f%% of simulated races\n",
				oneline.Escape(m), s, rounds, res.TrialsMean, res.TrialsP90, 100*res.Right)
		}
	}
	if *plan {
		fmt.Fprintf(stdout, "%d candidates, %d tasks; %s; the full grid at %d rounds is %d trials a model (builtin:sim's success model: harness/agent/simmodel.go)\n",
			len(f.Cands), len(f.Tasks), advise.ProcedureWords(race.Normal()), needed, needed*len(f.Cands)*len(f.Tasks))
		return nil
	}
	if race.MaxRounds == 0 {
		race.MaxRounds = max(race.Normal().MinRounds, needed)
	}
	cfg.Repetitions = race.MaxRounds
	harness.Defaults(cfg)
	setup := advise.Setup{Config: cfg, Race: race, MaxTrials: *maxTrials, MaxModelSeconds: *maxSeconds, Seed: *seed}
	opts := harness.Options{Out: f.Out, Resume: *resume, Progress: stderr, Lookup: gen.Lookup, Terminal: isTerminal(stderr)}
	adv, err := advise.Run(ctx, spec, setup, opts)
	if err != nil {
		return err
	}
	if err := advise.Write(adv, f.Specs, f.Groups, f.Source); err != nil {
		return err
	}
	for _, m := range adv.Models {
		tc := advise.NoEstimate
		if m.Pick.Trials > 0 {
			tc = fmt.Sprintf("TC %.3f, 95%% CI %.3f–%.3f", m.Pick.Mean, m.Pick.Low, m.Pick.High)
		}
		fmt.Fprintf(stdout, "%s: publish %s (%s) after %d trials of a %d-trial grid; %s\n",
			oneline.Escape(m.Model), m.Pick.Pick, tc, m.Trials, adv.GridTrials, m.Stopped)
	}
	fmt.Fprintf(stdout, "advice: %s\n", filepath.Join(adv.Out, advise.PageFile))
	return nil
}

// adviseField is the race's field from the flags: a generated domain's,
// or a server's, whose tools an interface cannot carry are warned of on
// stderr; it fills cfg's task source and candidates.
func adviseField(ctx context.Context, spec *speclang.Spec, domain string, src *externalSource, candidates, out string, tasks int, cfg *results.Config, stderr io.Writer) (*advise.Field, error) {
	if domain != "" {
		if src.live() || *src.tools != "" {
			return nil, errors.New("give --domain or a server (--mcp-cmd, --mcp-url, --tools), not both")
		}
		d := spec.Domain(domain)
		dom, ok := gen.Lookup(domain)
		if d == nil || !ok {
			return nil, fmt.Errorf("unknown domain %q: want one of %s", domain, domainNames())
		}
		return advise.DomainField(d, dom, candidates, out, cfg)
	}
	tools, name, g, skipped, err := src.forInterfaces(ctx, "advise", stderr)
	if err != nil {
		return nil, err
	}
	return advise.ServerField(advise.Server{Name: name, Tools: tools, Groups: g, GroupsFile: *src.groups, Skipped: len(skipped) > 0,
		Cmd: *src.mcpCmd, URL: *src.mcpURL, ToolsFile: *src.tools}, candidates, out, tasks, cfg)
}
