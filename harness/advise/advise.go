package advise

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Setup is one advise: the grid it may spend (Config: the models and
// their settings, the tasks — one domain's scenarios, or artifacts of an
// MCP server — and the candidates as its granularities and interfaces,
// Repetitions being the most rounds) and how it races.
type Setup struct {
	Config *results.Config
	Race   Race
	// MaxTrials and MaxModelSeconds bound what each model spends (0: no
	// bound); a race over budget ends after the round that crossed it.
	MaxTrials       int
	MaxModelSeconds float64
	// Seed makes the recommendation's intervals reproducible; trials are
	// the harness's, reproducible from the config's seed.
	Seed uint64
}

// Advice is what an advise found, per model.
type Advice struct {
	Out        string
	Candidates []Candidate
	// GridTrials is what the full grid would spend per model: every
	// candidate on every task at every round.
	GridTrials int
	Models     []ModelAdvice
	// Race is the race's settings, defaults filled.
	Race Race
	// Faults is the fault setting every trial was played under (nil for
	// none): the candidates are compared under the same faults.
	Faults *faults.Setting
}

// ModelAdvice is one model's race and its pick.
type ModelAdvice struct {
	Model  string
	Rounds []Decision
	Pick   Recommendation
	// Trials and ModelSeconds are what the race spent; Completed counts
	// the pick's completed tasks, which its joules and seconds per task
	// divide by (JoulesPerTask is NaN without an energy meter).
	Trials         int
	ModelSeconds   float64
	SecondsPerTask float64
	JoulesPerTask  float64
	// Stopped says why the race ended.
	Stopped string
}

// Run races the setup's candidates for every model, a round at a time:
// each round plays every surviving candidate on every task once more
// (the round is the trials' repetition) through harness.Run, which
// journals every trial, and then drops the candidates significantly
// worse than the model's current best (Decide). The trials of the whole
// grid are the plan, so report and view read the folder as any run's;
// opts.Resume continues a race from its journal, whose records decide
// the rounds already played the same way again.
func Run(ctx context.Context, spec *speclang.Spec, s Setup, opts harness.Options) (*Advice, error) {
	cfg := s.Config
	if s.Race.MaxRounds == 0 {
		s.Race.MaxRounds = cfg.Repetitions
	}
	s.Race = s.Race.Normal()
	if err := s.Race.Check(); err != nil {
		return nil, err
	}
	if s.Race.MaxRounds > cfg.Repetitions {
		return nil, fmt.Errorf("advise: %d rounds, but the grid has %d repetitions", s.Race.MaxRounds, cfg.Repetitions)
	}
	if s.Race.MinRounds > s.Race.MaxRounds {
		return nil, fmt.Errorf("advise: a first stage of %d rounds, but at most %d rounds: give more rounds or a shorter first stage", s.Race.MinRounds, s.Race.MaxRounds)
	}
	cands := Candidates(cfg)
	if err := CheckCandidates(cands); err != nil {
		return nil, err
	}
	if err := CheckFileNames(cfg.ModelNames()); err != nil {
		return nil, err
	}
	out := opts.Out
	if out == "" {
		out = cfg.Output
	}
	adv := &Advice{Out: out, Candidates: cands, Race: s.Race}
	switch {
	case len(cfg.Faults) > 1:
		// A race pairs each candidate's trial of a task and round with
		// the others': two settings would be two trials to pair.
		return nil, fmt.Errorf("advise: %d fault settings; a race plays under one at most", len(cfg.Faults))
	case len(cfg.Faults) == 1 && !cfg.Faults[0].None():
		adv.Faults = &cfg.Faults[0]
	}
	alive := map[string][]string{}
	var racing []string
	for _, m := range cfg.ModelNames() {
		for _, c := range cands {
			alive[m] = append(alive[m], c.Name)
		}
		racing = append(racing, m)
		adv.Models = append(adv.Models, ModelAdvice{Model: m})
	}
	// The journal is followed, not reread: each round reads only what
	// the round added.
	var recs []results.Record
	var read int64
	seen := map[string]bool{}
	for round := 1; round <= s.Race.MaxRounds && len(racing) > 0; round++ {
		o := opts
		o.Out, o.Resume = out, opts.Resume || round > 1
		o.Only = func(t harness.Trial) bool {
			return t.Repetition == round && slices.Contains(racing, t.Model) && slices.Contains(alive[t.Model], t.What().InterfaceName())
		}
		sum, err := harness.Run(ctx, cfg, spec, o)
		if err != nil {
			return nil, fmt.Errorf("advise: round %d: %w", round, err)
		}
		if adv.GridTrials == 0 {
			adv.GridTrials = sum.Planned / max(1, len(cfg.Models)) * s.Race.MaxRounds / cfg.Repetitions
		}
		added, n, err := results.ReadJournalFrom(filepath.Join(out, results.TrialsFile), read, seen)
		if err != nil {
			return nil, err
		}
		for _, r := range added {
			if err := r.CheckMeasures(); err != nil {
				return nil, fmt.Errorf("advise: %s: %w", filepath.Join(out, results.TrialsFile), err)
			}
		}
		recs, read = append(recs, added...), n
		var still []string
		for i := range adv.Models {
			ma := &adv.Models[i]
			if !slices.Contains(racing, ma.Model) {
				continue
			}
			outs := outcomes(recs, cands, ma.Model, round)
			d := Decide(s.Race, cands, outs, round)
			ma.Rounds = append(ma.Rounds, d)
			alive[ma.Model] = d.Survivors
			ma.Trials, ma.ModelSeconds = spent(recs, ma.Model)
			switch {
			case len(d.Survivors) == 1:
				ma.Stopped = fmt.Sprintf("one candidate left after round %d", round)
			case d.Done && round < s.Race.MaxRounds:
				ma.Stopped = fmt.Sprintf("the %d candidates left are within the indifference zone after round %d: the best of them is the pick", len(d.Survivors), round)
			case round == s.Race.MaxRounds:
				ma.Stopped = fmt.Sprintf("the most rounds (%d) played with %d candidates left", round, len(d.Survivors))
			case s.MaxTrials > 0 && ma.Trials >= s.MaxTrials:
				ma.Stopped = fmt.Sprintf("the trial budget (%d) spent after round %d", s.MaxTrials, round)
			case s.MaxModelSeconds > 0 && ma.ModelSeconds >= s.MaxModelSeconds:
				ma.Stopped = fmt.Sprintf("the model-time budget (%.0f s) spent after round %d", s.MaxModelSeconds, round)
			default:
				still = append(still, ma.Model)
			}
		}
		racing = still
	}
	for i := range adv.Models {
		ma := &adv.Models[i]
		last := len(ma.Rounds)
		ma.Pick = Recommend(s.Race, cands, outcomes(recs, cands, ma.Model, last), last, s.Seed)
		ma.SecondsPerTask, ma.JoulesPerTask = perTask(recs, ma.Model, ma.Pick.Pick)
	}
	return adv, nil
}

// Candidates are a config's interfaces in plan order
// (results.Config.Played). The published one is L4 as written when the
// config races it.
func Candidates(cfg *results.Config) []Candidate {
	var out []Candidate
	for _, spec := range cfg.Played() {
		out = append(out, Candidate{Name: spec.Name, Published: spec.IsIdentity() && spec.Level == level.L4})
	}
	return out
}

// outcomes are a model's scored trials of the candidates up to a round,
// as the race reads them: each candidate's TC per task and repetition.
func outcomes(recs []results.Record, cands []Candidate, model string, round int) []Outcome {
	var out []Outcome
	for _, r := range recs {
		if r.Model != model || r.Repetition > round || r.Metrics == nil || !slices.ContainsFunc(cands, func(c Candidate) bool { return c.Name == r.InterfaceName() }) {
			continue
		}
		out = append(out, Outcome{Candidate: r.InterfaceName(), Task: r.Domain + "/" + r.Scenario, Rep: r.Repetition, TC: r.Metrics.TC})
	}
	return out
}

// spent is what a model's trials cost: how many, and their model time
// (the model server's load, prompt and generation time where it reports
// them, else the trial's wall time).
func spent(recs []results.Record, model string) (int, float64) {
	n, secs := 0, 0.0
	for _, r := range recs {
		if r.Model != model || r.Metrics == nil {
			continue
		}
		n++
		secs += modelSeconds(r)
	}
	return n, secs
}

func modelSeconds(r results.Record) float64 {
	if ns := r.Durations.LoadNS + r.Durations.PromptEvalNS + r.Durations.EvalNS; ns > 0 {
		return float64(ns) / 1e9
	}
	return r.Metrics.WallS
}

// perTask is the pick's wall seconds and joules per completed task over
// every trial it played (NaN joules without a meter, NaN both when it
// completed none).
func perTask(recs []results.Record, model, pick string) (float64, float64) {
	var wall, joules, done float64
	metered := true
	for _, r := range recs {
		if r.Model != model || r.Metrics == nil || r.InterfaceName() != pick {
			continue
		}
		wall += r.Metrics.WallS
		done += r.Metrics.TC
		if r.Metrics.EnergyJ == nil {
			metered = false
		} else {
			joules += *r.Metrics.EnergyJ
		}
	}
	if done == 0 {
		return math.NaN(), math.NaN()
	}
	if !metered {
		return wall / done, math.NaN()
	}
	return wall / done, joules / done
}
