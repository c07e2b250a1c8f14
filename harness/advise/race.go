// Package advise races candidate interfaces against each other to answer
// "which interface should I publish for the models my users run?" with
// fewer trials than a full grid. Its core here is pure: it decides from
// outcomes it is given and simulates races; running trials is the
// caller's.
//
// # Procedure
//
// A race plays rounds. In each round every surviving candidate plays
// every task once; an outcome is a trial's task completion (TC) in [0, 1],
// keyed by candidate, task and round (Outcome.Rep). Two candidates'
// outcomes pair when their task and round are the same: an observation of
// the pair is the difference of their TCs on one (task, round), so the
// tasks' difficulty, which both face, cancels.
//
// The default procedure, ProcedureKN, is Kim and Nelson's fully
// sequential indifference-zone procedure KN ("A fully sequential
// procedure for indifference-zone selection in simulation", ACM TOMACS
// 11(3), 2001), with c = 1, for the race's k candidates, α = Alpha and
// δ = Delta:
//
//  1. First stage: rounds 1..MinRounds. For every pair (i, l), S²_il is
//     the sample variance of its n0 paired differences (n0 = MinRounds ×
//     tasks when every trial is played), floored at p(1 − p) with
//     p = 0.5/n0, and h²_il = 2η(n0 − 1) with
//     η = ½[(2α/(k − 1))^(−2/(n0 − 1)) − 1].
//  2. After each round from MinRounds on (Decide), with n paired
//     observations of a pair so far, a survivor i is dropped when
//     Σ(X_i − X_l) < −W_il(n) for some survivor l, where
//     W_il(n) = max(0, (δ/2)(h²_il·S²_il/δ² − n)). The boundary starts
//     wide and closes linearly to 0 at the pair's horizon
//     N_il = h²_il·S²_il/δ² observations (Comparison.Horizon): the sum's
//     drift beats it long before that when the pair is δ or more apart,
//     and a near tie, whose sum drifts little, is settled by the closing
//     boundary, at the latest on the sum's sign at the horizon. A
//     dropped candidate never returns; the current best (below) is never
//     dropped.
//  3. The current best is the survivor with the highest mean TC over the
//     trials every survivor shares (the same task and round); a tie goes
//     to the published candidate, then to the earlier candidate.
//  4. The race is done when one candidate survives, when every surviving
//     pair has passed its horizon (Decision.LastRound says by when, once
//     the first stage is over), or at MaxRounds, a cap. The pick
//     (Recommend) is the best at the end.
//
// The floor is there because binary outcomes can agree throughout a
// first stage (two candidates that complete every task): S² = 0 would
// close the boundary at once and pick on the first stage's ties. The
// floor is the variance of a difference nonzero in half of one of the n0
// pairs, so such a pair races on for h²·p(1 − p)/δ² observations.
//
// Observations are (task, round) pairs rather than rounds' means because
// h² falls fast with n0: for twelve candidates at α = 0.05 it is 12099
// after 2 observations, 12.6 after 18 and 10.5 after 45, tending to
// 2·ln((k − 1)/(2α)) = 9.4. KN assumes independent, identically
// distributed normal differences; a round's tasks differ in difficulty,
// so differences on different tasks have different means. The race looks
// only at round ends, where a pair's sum is a sum of independent round
// sums, each with mean tasks × the pair's mean difference and variance
// the sum of the tasks' own variances; S² over (task, round) counts the
// spread of the tasks' mean differences too, so it overestimates that
// variance and widens the boundary: conservative. Looking at round ends
// only, not after every observation, gives fewer chances to drop wrongly.
// Each pair's n0 and h² are its own: where trials are missing, the pair's
// paired observations are what it has.
//
// # Guarantee
//
// KN's guarantee (Kim and Nelson 2001, Theorem 1): if the best
// candidate's mean TC is at least δ above every other's, the race picks it
// with probability at least 1 − α. The argument: a pair's sum, scaled, is
// close to a Brownian motion with drift, and the probability that it
// leaves the triangle −W ≤ sum ≤ W on the wrong side is at most
// α/(k − 1) for the best against each other candidate, whatever its
// variance (the first stage's S² pays for not knowing it, through h²);
// Bonferroni over the k − 1 pairs with the best gives α. Where candidates
// are within δ of the best, any of them is a right pick (the
// indifference zone); KN's theorem does not bound how often a pick falls
// outside it in every such field, and simulation measures it (Plan,
// TestKNCorrectSelection).
//
// The theorem is for normal differences. TC is binary or fractional, so
// KN here is a normal approximation: good when the first stage has tens
// of paired observations and S² is away from 0, which the floor ensures.
// TestKNCorrectSelection checks it by simulation: with the best δ ahead
// of k − 1 equal others near ½ (the least favourable field, where trials
// vary most) or on tasks of different difficulty, the best is picked in
// at least 1 − α of races, within the simulation's error; among equals,
// and among candidates within δ, every pick is right and the race ends
// by its own bound. A cap (MaxRounds) below LastRound ends a race early
// with the best mean and without the guarantee.
//
// # The sign procedure
//
// ProcedureSign drops only candidates significantly worse than another,
// with no indifference zone, so near-tied candidates race to MaxRounds;
// its guarantee is about never dropping a truly best candidate rather
// than about the pick. After each round r from MinRounds to MaxRounds the
// race looks:
//
//  1. Every ordered pair (c, d) of survivors is paired over the trials
//     both played: the same task in the same round. A pair is a win for c
//     when c's TC is higher, a loss when d's is, a tie otherwise; ties are
//     dropped. The one-sided p-value that c is worse than d is the exact
//     sign test on the untied pairs, P(Binomial(n, ½) ≥ losses). For
//     binary outcomes the untied pairs are the discordant ones and this is
//     the exact McNemar test; for fractional TC it is the sign test of the
//     paired differences.
//  2. The look's p-values are adjusted by Holm's step-down within the
//     family of all K·(K−1) ordered pairs of the race's K candidates,
//     fixed from the start: a pair with a dropped candidate is untested,
//     as if its p-value were 1. The adjusted p-values are multiplied by
//     the number of looks, L = MaxRounds − MinRounds + 1 (Bonferroni over
//     looks), and capped at 1.
//  3. A survivor whose adjusted p-value against some other survivor is at
//     most Alpha is dropped, except the current best (as KN's); it never
//     returns, and later looks test only the candidates still racing.
//  4. The race is done when one candidate survives or the round is
//     MaxRounds. The pick (Recommend) is the best at the end.
//
// Its guarantee. Call a candidate truly best when no other candidate
// beats it on any task: in every pair it is at least as likely to win as
// to lose (for binary outcomes: its success probability on every task is
// at least the other's; equal candidates are all truly best). The
// probability that a race ever drops a truly best candidate is at most
// Alpha, however many candidates are truly best.
//
// The argument. Imagine every candidate playing every round, dropped or
// not; the race sees only some of these trials, and the pairs it tests
// are pairs of survivors, which have played every round so far (a trial
// that is missing must be missing for a reason other than its outcome),
// so each tested p-value is one of a fixed family: p_l(c, d) for every
// ordered pair and look l. For a truly best c and any d, the hypothesis
// "c is not worse than d" is true, and under it the sign test's losses
// are stochastically at most Binomial(n, ½) given the n untied pairs, so
// p_l(c, d) is valid. Let N be these true hypotheses (fixed, though
// unknown). Dropping a truly best candidate at look l means Holm rejects
// a hypothesis in N; before its first such rejection Holm rejects at most
// K·(K−1) − |N| others, so that rejection needs p_l(c, d) ≤ Alpha/(L·|N|)
// for some (c, d) in N, and untested pairs only make rejections harder.
// By the union bound over N that has probability at most Alpha/L, and
// over the L looks at most Alpha. This is an alpha-spending that spends
// Alpha/L at each look. It is conservative: the looks are nested (each
// sees the earlier rounds' trials again), so their errors overlap where
// the union bound adds them; the sign test is discrete; and the family
// does not shrink as candidates drop, which keeps it fixed, the price of
// the argument holding whichever candidates the data let survive.
//
// Why every ordered pair and not only each candidate against the best:
// the best is chosen by the same trials it is then compared on, so it is
// biased upward, and a test against it is not a valid test against a
// fixed opponent. Among K equal candidates the gap between the best and
// the worst is the range of K means, which exceeds a K−1 comparison's
// critical value far more often than Alpha: among 12 equal candidates
// after 40 trials, Holm over the K−1 comparisons with the best at 0.05
// drops one in about 15% of races (TestAgainstBestOnlyIsBiased), and
// raced so to 6 rounds at 0.05 it drops one in 10.5%, where this race
// drops one in 0.9% (TestEqualsKeepEveryone). The cost of the valid
// family is a stricter first Holm step, Alpha/(L·K·(K−1)) instead of
// Alpha/(L·(K−1)), which the sign test's exponentially falling p-values
// pay with a round or two more.
//
// # What racing saves
//
// The grid a race is measured against is the fixed grid that gives the
// same guarantee without knowing the field: every candidate on every task
// for as many rounds as picking the best δ ahead of k − 1 others near ½
// needs at 1 − α (the least favourable field, Bechhofer's design; 135
// rounds for twelve candidates on nine tasks at 0.05), or Rinott's
// two-stage grid, which sizes each candidate's trials by its first
// stage's variance. KN saves the trials of candidates δ or more worse
// than another, which it drops soon after the first stage, and of pairs
// whose trials vary less than at ½, whose horizons are shorter;
// candidates within δ of each other race until their boundary closes.
//
// BenchmarkAdviseSimulated measures it on the generated domains' fields
// of twelve candidates (the four levels and eight presets) under
// builtin:sim, 200 seeded races per domain, at the defaults (α = 0.05,
// δ = 0.05, first stage 5 rounds): KN picks right in 100% of races at
// skills 1.5, 3 and 5, and plays 0.21, 0.29 and 0.21 of the least
// favourable grid's trials (135 rounds on nine tasks), 0.40, 0.29 and
// 0.28 of Rinott's grid's. In the least favourable field itself it picks
// the best in 97% of races for 0.58 of that grid, 0.49 of Rinott's:
// sequential sampling saves least where every other candidate is just
// δ behind. The sign procedure, capped at the same 135 rounds, picks
// right as often on the domains but plays 0.50 to 0.65 of the grid, its
// near-tied candidates all reaching the cap, and in the least favourable
// field picks the best in 94% of races for 0.99 of the grid.
//
// A grid sized to a field's own success probabilities is smaller still
// where the field's best few are within δ of each other, since then any
// of them is right (4 to 32 rounds on the domains, against which KN plays
// 3.5 to 4.4 times as many trials); only a user who already knew the
// field could size it so, and a race that guarantees its pick in every
// field cannot know it is such a field. Plan measures a race on a field
// of known success probabilities; TrialsFor answers how many rounds to
// configure.
package advise

import (
	"errors"
	"fmt"
)

// Candidate is one interface in a race.
type Candidate struct {
	// Name identifies the candidate in outcomes and decisions.
	Name string
	// Published marks the interface as published today (as written, L4),
	// which the recommendation compares the pick against. At most one
	// candidate is published.
	Published bool
}

// Outcome is one trial's result.
type Outcome struct {
	// Candidate is the name of the candidate that played.
	Candidate string
	// Task identifies the task (a scenario); outcomes of different
	// candidates pair when their tasks and rounds are equal.
	Task string
	// Rep is the round the trial was played in, from 1.
	Rep int
	// TC is the trial's task completion in [0, 1]; 0 and 1 only make
	// the outcomes binary.
	TC float64
}

// Race is a race's settings; zero fields take their defaults (Normal).
type Race struct {
	// Procedure is how the race drops candidates: ProcedureKN (the
	// default), Kim and Nelson's indifference-zone race, or
	// ProcedureSign, paired sign tests with Holm's adjustment.
	Procedure string
	// Alpha is the error rate. For KN: the largest probability that the
	// pick is not the best when the best is at least Delta ahead of every
	// other candidate. For sign: the largest probability that the race
	// ever drops a truly best candidate. Default 0.05.
	Alpha float64
	// MinRounds is the first round after which the race looks (default
	// DefaultKNMinRounds for KN, DefaultMinRounds for sign). For KN the
	// rounds up to it are the first stage, whose paired differences
	// estimate each pair's variance: more rounds there estimate it better
	// and lower h², fewer let clear losers go sooner. For sign one round
	// is rarely enough to drop anything at Alpha/L, and a look that
	// cannot drop spends its share of Alpha for nothing.
	MinRounds int
	// MaxRounds is the last round: a cap on what the race may spend, the
	// grid's repetitions. KN ends by itself, at the latest when every
	// pair's boundary has closed (Decision.LastRound); a cap below that
	// ends it early with the best mean and without KN's guarantee
	// (default DefaultKNMaxRounds). Sign spends Alpha over the looks
	// MinRounds..MaxRounds, so a larger MaxRounds makes each look
	// stricter (default DefaultMaxRounds).
	MaxRounds int
	// Delta is the indifference zone (default 0.05): a pick whose true
	// mean TC is within Delta of the best's counts as right.
	Delta float64
}

// The procedures a race runs (Race.Procedure).
const (
	// ProcedureKN is Kim and Nelson's fully sequential indifference-zone
	// procedure (the package doc's Procedure).
	ProcedureKN = "kn"
	// ProcedureSign is paired sign tests over every ordered pair with
	// Holm's adjustment and Bonferroni over the looks (the package doc's
	// The sign procedure).
	ProcedureSign = "sign"
)

// The defaults of Race's fields.
const (
	DefaultProcedure = ProcedureKN
	DefaultAlpha     = 0.05
	// DefaultMinRounds is the sign procedure's first look.
	DefaultMinRounds = 2
	// DefaultKNMinRounds is KN's first stage: on a domain's nine tasks,
	// 45 paired trials, which put h² within 12% of the known-variance
	// constant it tends to (2·ln((k−1)/(2α)), 9.4 for twelve candidates
	// at 0.05), where two rounds' 18 leave it 34% above; the near-tied
	// candidates that race longest pay h² on every trial, the clear
	// losers only the three rounds more (BenchmarkAdviseSimulated: a
	// trial share of 0.29 at the default skill, 0.35 with two rounds).
	DefaultKNMinRounds = 5
	// DefaultMaxRounds is the sign procedure's last round.
	DefaultMaxRounds = 10
	// DefaultKNMaxRounds is KN's cap: high enough that KN's own bound,
	// h²·S²/Delta² paired observations, ends it first on a field of nine
	// tasks or more even where trials vary most (S² near ½: about 233
	// rounds for twelve candidates at the defaults, more where the first
	// stage overestimates S²; a cap of 256 stopped 0.5% of such races).
	DefaultKNMaxRounds = 512
	DefaultDelta       = 0.05
)

// Normal is the race with its zero fields set to their defaults.
func (r Race) Normal() Race {
	if r.Procedure == "" {
		r.Procedure = DefaultProcedure
	}
	if r.Alpha == 0 {
		r.Alpha = DefaultAlpha
	}
	if r.MinRounds == 0 {
		r.MinRounds = DefaultMinRounds
		if r.Procedure == ProcedureKN {
			r.MinRounds = DefaultKNMinRounds
		}
	}
	if r.MaxRounds == 0 {
		r.MaxRounds = DefaultMaxRounds
		if r.Procedure == ProcedureKN {
			r.MaxRounds = DefaultKNMaxRounds
		}
		r.MaxRounds = max(r.MaxRounds, r.MinRounds)
	}
	if r.Delta == 0 {
		r.Delta = DefaultDelta
	}
	return r
}

// Check reports the settings a race cannot run with, after Normal.
func (r Race) Check() error {
	r = r.Normal()
	var errs []error
	if r.Procedure != ProcedureKN && r.Procedure != ProcedureSign {
		errs = append(errs, fmt.Errorf("race: procedure %q: want %q (Kim and Nelson's indifference-zone race, the default) or %q (sign tests with Holm)", r.Procedure, ProcedureKN, ProcedureSign))
	}
	if !(r.Alpha > 0 && r.Alpha < 1) {
		errs = append(errs, fmt.Errorf("race: alpha %v: want a family-wise error rate in (0, 1), e.g. 0.05", r.Alpha))
	}
	if r.MinRounds < 1 {
		errs = append(errs, fmt.Errorf("race: min_rounds %d: want at least 1 round before the first look", r.MinRounds))
	}
	if r.MaxRounds < r.MinRounds {
		errs = append(errs, fmt.Errorf("race: max_rounds %d: want at least min_rounds (%d)", r.MaxRounds, r.MinRounds))
	}
	if !(r.Delta > 0 && r.Delta < 1) {
		errs = append(errs, fmt.Errorf("race: delta %v: want an indifference zone of task completion in (0, 1), e.g. 0.05", r.Delta))
	}
	return errors.Join(errs...)
}

// Looks is the number of looks the sign procedure spends Alpha over:
// MaxRounds − MinRounds + 1.
func (r Race) Looks() int {
	r = r.Normal()
	return r.MaxRounds - r.MinRounds + 1
}

// CheckCandidates reports candidates a race cannot tell apart: empty or
// repeated names, or more than one published.
func CheckCandidates(cands []Candidate) error {
	var errs []error
	if len(cands) == 0 {
		errs = append(errs, errors.New("race: no candidates: want at least one interface to race"))
	}
	seen := map[string]bool{}
	var published []string
	for i, c := range cands {
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("race: candidate %d: empty name: name every candidate", i+1))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("race: candidate %d: name %q repeated: give each candidate its own name", i+1, c.Name))
		}
		seen[c.Name] = true
		if c.Published {
			published = append(published, c.Name)
		}
	}
	if len(published) > 1 {
		errs = append(errs, fmt.Errorf("race: candidates %q are all published: mark at most one", published))
	}
	return errors.Join(errs...)
}

// CheckOutcomes reports outcomes a race cannot use: of an unknown
// candidate, without a task, of a round before 1, with a TC outside
// [0, 1], or a second outcome of the same candidate, task and round.
func CheckOutcomes(cands []Candidate, outcomes []Outcome) error {
	known := map[string]bool{}
	for _, c := range cands {
		known[c.Name] = true
	}
	type key struct {
		cand, task string
		rep        int
	}
	seen := map[key]int{}
	var errs []error
	for i, o := range outcomes {
		at := fmt.Sprintf("race: outcome %d (%s, task %q, rep %d)", i+1, o.Candidate, o.Task, o.Rep)
		if !known[o.Candidate] {
			errs = append(errs, fmt.Errorf("%s: unknown candidate: want one of the race's candidates", at))
		}
		if o.Task == "" {
			errs = append(errs, fmt.Errorf("%s: empty task: name the task the trial played", at))
		}
		if o.Rep < 1 {
			errs = append(errs, fmt.Errorf("%s: rep %d: want the round the trial was played in, from 1", at, o.Rep))
		}
		if !(o.TC >= 0 && o.TC <= 1) {
			errs = append(errs, fmt.Errorf("%s: tc %v: want a task completion in [0, 1]", at, o.TC))
		}
		k := key{o.Candidate, o.Task, o.Rep}
		if j, ok := seen[k]; ok {
			errs = append(errs, fmt.Errorf("%s: repeats outcome %d: want one trial per candidate, task and round", at, j+1))
		} else {
			seen[k] = i
		}
	}
	return errors.Join(errs...)
}

// Decision is what a look decides.
type Decision struct {
	// Round is the round the decision is after.
	Round int
	// Survivors are the candidates still racing after this look, in
	// candidate order.
	Survivors []string
	// Dropped are the candidates this look dropped, in candidate order,
	// each with the comparison it lost.
	Dropped []Comparison
	// Comparisons are, for every candidate racing at this look, its
	// closest comparison, in candidate order: for sign the one with the
	// smallest adjusted p-value, for KN the one whose Sum is nearest its
	// −Boundary. Empty before MinRounds and after MaxRounds, when the
	// race does not look.
	Comparisons []Comparison
	// Best is the current best survivor.
	Best string
	// Means are the survivors' mean TC over the trials every candidate
	// racing at this look shares (Best is the highest), in candidate
	// order.
	Means []Mean
	// Done is whether the race is over: one survivor, the round is
	// MaxRounds or later, or (KN) every surviving pair's boundary has
	// closed.
	Done bool
	// LastRound is the last round the race can play from here: MaxRounds,
	// or for KN, once every surviving pair's variance is estimated, the
	// round by which every surviving pair's boundary has closed, if that
	// comes sooner (with every trial played).
	LastRound int
}

// Comparison is one candidate paired with another over the trials both
// played.
type Comparison struct {
	// Candidate is the candidate tested for being worse.
	Candidate string
	// Against is the candidate it is compared with.
	Against string
	// Pairs counts the trials both played (same task, same round); Wins
	// are those where Candidate's TC is higher, Losses where Against's
	// is, and the rest are ties.
	Pairs, Wins, Losses int
	// P is the sign procedure's one-sided exact sign test p-value that
	// Candidate is worse: P(Binomial(Wins+Losses, ½) ≥ Losses). KN tests
	// no p-value and leaves it 0, as it does Adjusted.
	P float64
	// Adjusted is the sign procedure's P adjusted by Holm over the look's
	// comparisons and by the number of looks; the candidate is dropped
	// when it is at most Alpha.
	Adjusted float64
	// Sum is KN's sum of the paired differences, Candidate's TC minus
	// Against's, over the Pairs trials; Boundary is W(n) for n = Pairs,
	// and the candidate is dropped when Sum < −Boundary. Both 0 for sign.
	Sum, Boundary float64
	// Variance is KN's S², the sample variance of the paired differences
	// over the first stage (floored, see the package doc), and Horizon is
	// h²·S²/Delta², the paired trials after which Boundary is 0.
	Variance, Horizon float64
}

// Mean is a survivor's mean TC over the trials the look's candidates
// share.
type Mean struct {
	// Candidate is the survivor.
	Candidate string
	// Mean is its mean TC over Trials trials.
	Mean float64
	// Trials counts the trials it is over: those every candidate of the
	// look shares, or the survivor's own when they share none.
	Trials int
}

// Decide is the decision after round, from every outcome of rounds up to
// round: it replays the looks of the earlier rounds to know which
// candidates they dropped, so a dropped candidate never returns, and
// outcomes of a dropped candidate after its drop are ignored, as are
// outcomes of rounds after round. It panics when r, cands or outcomes are
// invalid (Race.Check, CheckCandidates, CheckOutcomes): check them first.
func Decide(r Race, cands []Candidate, outcomes []Outcome, round int) Decision {
	e, _ := replay(r, cands, outcomes, round)
	return e.last
}

// replay runs the race's looks over the outcomes up to round and returns
// the engine after it and the outcomes indexed by candidate, round and
// task.
func replay(r Race, cands []Candidate, outcomes []Outcome, round int) (*engine, *table) {
	mustValid(r, cands)
	if err := CheckOutcomes(cands, outcomes); err != nil {
		panic(err)
	}
	tab := tabulate(cands, outcomes, round)
	e := newEngine(r.Normal(), cands, len(tab.tasks))
	e.last = e.look(0)
	for rd := 1; rd <= round; rd++ {
		e.play(tab.vals[rd-1])
		e.last = e.look(rd)
	}
	return e, tab
}

// mustValid panics with the race's or the candidates' problems.
func mustValid(r Race, cands []Candidate) {
	if err := errors.Join(r.Check(), CheckCandidates(cands)); err != nil {
		panic(err)
	}
}
