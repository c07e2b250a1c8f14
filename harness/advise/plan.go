package advise

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/mcpgranite/granite/internal/stats"
)

// PlanResult is what simulated races of a field say about a race's
// settings.
type PlanResult struct {
	// Runs counts the simulated races.
	Runs int
	// MaxRounds is the races' last round.
	MaxRounds int
	// Right is the share of races whose pick was right: its true mean TC
	// within Delta of the best true mean. RightLow and RightHigh are the
	// Wilson 95% interval of that share, the simulation's own error (NaN
	// without runs: no interval).
	Right, RightLow, RightHigh float64
	// TrialsMean is the mean number of trials a race played, TrialsP90
	// its 90th percentile.
	TrialsMean float64
	TrialsP90  int
	// GridTrials is the full grid's trials: every candidate playing every
	// task MaxRounds times (for KN, whose MaxRounds is a cap it rarely
	// reaches, a grid larger than any a user would run).
	GridTrials int
	// Share is TrialsMean / GridTrials.
	Share float64
	// Rounds[k] counts the races that ended after round k (index 0 is
	// unused).
	Rounds []int
	// Picks counts the races that picked each candidate.
	Picks map[string]int
	// BestDropped is the share of races that dropped a candidate whose
	// true mean TC is the field's highest: what Alpha bounds for sign
	// when the truly best candidates are best on every task. KN drops
	// such a candidate whenever another within Delta of it is left, so
	// for KN it says nothing about the error rate; Right does.
	BestDropped float64
}

// CheckField reports a field Plan cannot simulate: bad candidates, a
// candidate without success probabilities, candidates with different
// numbers of tasks, no tasks, or a probability outside [0, 1].
func CheckField(cands []Candidate, p map[string][]float64) error {
	errs := []error{CheckCandidates(cands)}
	tasks := -1
	for _, c := range cands {
		ps, ok := p[c.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("plan: candidate %q: no success probabilities: give one per task", c.Name))
			continue
		case len(ps) == 0:
			errs = append(errs, fmt.Errorf("plan: candidate %q: no tasks: give one success probability per task", c.Name))
		case tasks >= 0 && len(ps) != tasks:
			errs = append(errs, fmt.Errorf("plan: candidate %q: %d tasks, the first candidate %d: give every candidate the same tasks", c.Name, len(ps), tasks))
		}
		if tasks < 0 {
			tasks = len(ps)
		}
		for t, x := range ps {
			if !(x >= 0 && x <= 1) {
				errs = append(errs, fmt.Errorf("plan: candidate %q: task %d: probability %v: want one in [0, 1]", c.Name, t+1, x))
			}
		}
	}
	return errors.Join(errs...)
}

// Plan simulates runs whole races of a field whose true success
// probabilities are known, p[candidate][task], with Bernoulli outcomes:
// in each round every survivor plays every task once, and after it the
// race looks as Decide does. It is deterministic from seed (a PCG
// stream). It panics on a race or field Race.Check or CheckField
// rejects: check them first.
func Plan(r Race, cands []Candidate, p map[string][]float64, runs int, seed uint64) PlanResult {
	return simulate(r, cands, p, runs, seed, false)
}

// PlanGrid simulates runs full grids of the same field: every candidate
// plays every task in each of MaxRounds rounds, nothing is dropped, and
// the pick is the highest mean (ties as Decide breaks them). It is the
// fixed design a race is measured against: what a user would run without
// racing.
func PlanGrid(r Race, cands []Candidate, p map[string][]float64, runs int, seed uint64) PlanResult {
	return simulate(r, cands, p, runs, seed, true)
}

// simulate runs the races (or grids, when grid) of Plan and PlanGrid.
func simulate(r Race, cands []Candidate, p map[string][]float64, runs int, seed uint64, grid bool) PlanResult {
	mustValid(r, cands)
	if err := CheckField(cands, p); err != nil {
		panic(err)
	}
	r = r.Normal()
	tasks := len(p[cands[0].Name])
	truth := make([]float64, len(cands))
	for i, c := range cands {
		truth[i] = stats.Mean(p[c.Name])
	}
	top := slices.Max(truth)
	res := PlanResult{Runs: runs, MaxRounds: r.MaxRounds, GridTrials: len(cands) * tasks * r.MaxRounds,
		Rounds: make([]int, r.MaxRounds+1), Picks: map[string]int{}}
	rng := rand.New(rand.NewPCG(seed, 0x91a2_ad715e))
	trials := make([]int, runs)
	right, bestDropped := 0, 0
	for run := range runs {
		e := newEngine(r, cands, tasks)
		e.noDrop = grid
		var d Decision
		lost := false
		for round := 1; round <= r.MaxRounds; round++ {
			v := make([][]float64, len(cands))
			for c, name := range cands {
				v[c] = make([]float64, tasks)
				for t := range v[c] {
					switch {
					case !e.alive[c]:
						v[c][t] = math.NaN()
					case rng.Float64() < p[name.Name][t]:
						v[c][t] = 1
					}
				}
				if e.alive[c] {
					trials[run] += tasks
				}
			}
			e.play(v)
			d = e.look(round)
			for _, x := range d.Dropped {
				if truth[slices.IndexFunc(cands, func(c Candidate) bool { return c.Name == x.Candidate })] == top {
					lost = true
				}
			}
			if d.Done {
				res.Rounds[round]++
				break
			}
		}
		if lost {
			bestDropped++
		}
		res.Picks[d.Best]++
		if truth[slices.IndexFunc(cands, func(c Candidate) bool { return c.Name == d.Best })] >= top-r.Delta {
			right++
		}
	}
	if runs > 0 {
		res.Right = float64(right) / float64(runs)
		ts := intsToFloats(trials)
		res.TrialsMean = stats.Mean(ts)
		res.TrialsP90 = int(stats.Quantile(ts, 0.9))
		res.Share = res.TrialsMean / float64(res.GridTrials)
		res.BestDropped = float64(bestDropped) / float64(runs)
	}
	right95 := stats.Wilson(float64(right), runs)
	res.RightLow, res.RightHigh = right95.Lo, right95.Hi
	return res
}

// PlanRuns is how many races TrialsFor simulates (for sign, for each
// MaxRounds it tries): enough that the right-pick share's 95% interval is
// about ±2 points at 0.95.
const PlanRuns = 400

// RoundsCap is the largest MaxRounds TrialsFor tries.
const RoundsCap = 256

// TrialsFor is how many rounds a race of these candidates needs, and
// Plan's result for it (PlanRuns races, seed): the answer to "how many
// trials do I need" before any is run.
//
// KN ends by itself, and its guarantee does not depend on the field, so
// TrialsFor does not tune it to the field: it simulates races at the
// race's MaxRounds (by default a cap KN does not reach) and returns the
// round by which a target share of them (e.g. 0.95) had ended, the
// repetitions to configure so that a capped race is rare, with the
// result of the uncapped races, whose TrialsMean and TrialsP90 are the
// trials to expect and whose Right is the share picked right.
//
// For sign it is the smallest MaxRounds, from max(2, MinRounds) to
// RoundsCap, at which Plan's right-pick share reaches target, and Plan's
// result there: it doubles MaxRounds until the target is met, then
// bisects; the right-pick share grows with MaxRounds, up to simulation
// noise, which the fixed seed keeps from reordering neighbours much.
// When even RoundsCap misses the target it returns RoundsCap and its
// result, whose Right says by how much. Sign's answer depends on the
// field being as given: on another, the same rounds may pick wrong more
// often.
//
// It panics on the input Plan panics on.
func TrialsFor(r Race, cands []Candidate, p map[string][]float64, target float64, seed uint64) (maxRounds int, res PlanResult) {
	if r.Normal().Procedure == ProcedureKN {
		res = Plan(r, cands, p, PlanRuns, seed)
		return endedBy(res, target), res
	}
	return search(r, target, func(rr Race) PlanResult { return Plan(rr, cands, p, PlanRuns, seed) })
}

// endedBy is the first round by which a share of at least target of the
// result's races had ended (its last round when none is).
func endedBy(res PlanResult, target float64) int {
	ended := 0
	for round, n := range res.Rounds {
		ended += n
		if float64(ended) >= target*float64(res.Runs) {
			return round
		}
	}
	return res.MaxRounds
}

// search is TrialsFor's doubling and bisection over MaxRounds.
func search(r Race, target float64, plan func(Race) PlanResult) (int, PlanResult) {
	r = r.Normal()
	at := func(n int) PlanResult { r.MaxRounds = n; return plan(r) }
	hi := max(2, r.MinRounds)
	lo, res := hi, at(hi)
	if res.Right >= target {
		return hi, res
	}
	for res.Right < target && hi < RoundsCap {
		lo, hi = hi, min(2*hi, RoundsCap)
		res = at(hi)
	}
	if res.Right < target {
		return hi, res
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if m := at(mid); m.Right >= target {
			hi, res = mid, m
		} else {
			lo = mid
		}
	}
	return hi, res
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
