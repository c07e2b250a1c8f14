package advise

import (
	"math"
	"slices"

	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the race's pick with its interval and its difference
// from the published candidate, from internal/stats.

// Recommendation is the race's pick with what the trials say about it.
type Recommendation struct {
	// Decision is the decision after the last round.
	Decision Decision
	// Pick is the recommended candidate: the best survivor.
	Pick string
	// Trials counts the pick's trials, which Mean is over.
	Trials int
	// Mean is the pick's mean TC over its trials, Low and High its 95%
	// confidence interval; all NaN without trials, which have no estimate
	// and no interval (the page shows them as not available).
	Mean, Low, High float64
	// Interval is how Low and High were computed: "wilson" for binary
	// outcomes (stats.Wilson), "bootstrap" for fractional ones
	// (stats.Bootstrap, seeded).
	Interval string
	// VsPublished is the pick's difference from the published candidate,
	// nil when none is published or they share no trials.
	VsPublished *Difference
}

// NoEstimate is how a pick without trials is shown: no estimate and no
// interval, as the report shows an empty sample's.
const NoEstimate = "TC – (95% CI –, no trials)"

// Difference is a paired mean difference of TC: the pick's minus the
// published candidate's over the trials both played.
type Difference struct {
	// Published is the published candidate.
	Published string
	// Pairs counts the trials both played.
	Pairs int
	// Mean is the mean paired difference, Low and High its 95% seeded
	// percentile bootstrap interval; all 0 when the pick is the published
	// candidate.
	Mean, Low, High float64
}

// Recommend is the race's pick after round: the survivor with the highest
// mean TC (Decision.Best), its mean TC with a 95% confidence interval,
// and its paired difference from the published candidate. Wilson's
// interval treats the pick's trials as draws of one success probability;
// over a fixed set of tasks of different difficulty the variance of the
// mean is smaller than that, so the interval is conservative. Bootstrap
// intervals resample trials with streams from seed and a label
// (stats.RNG), so the same outcomes and seed give the same intervals. It panics on the input
// Decide panics on.
func Recommend(r Race, cands []Candidate, outcomes []Outcome, round int, seed uint64) Recommendation {
	e, tab := replay(r, cands, outcomes, round)
	rec := Recommendation{Decision: e.last, Pick: e.last.Best}
	pick := slices.IndexFunc(cands, func(c Candidate) bool { return c.Name == rec.Pick })
	var own []float64
	binary := true
	for _, v := range tab.vals {
		for _, x := range v[pick] {
			if !math.IsNaN(x) {
				own = append(own, x)
				binary = binary && (x == 0 || x == 1)
			}
		}
	}
	rec.Trials, rec.Mean = len(own), stats.Mean(own)
	var ci stats.CI
	if binary {
		rec.Interval = "wilson"
		ci = stats.Wilson(rec.Mean*float64(len(own)), len(own))
	} else {
		rec.Interval = "bootstrap"
		ci = stats.Bootstrap(own, stats.RNG(seed, "pick"))
	}
	rec.Low, rec.High = ci.Lo, ci.Hi
	pub := slices.IndexFunc(cands, func(c Candidate) bool { return c.Published })
	if pub < 0 {
		return rec
	}
	var diffs []float64
	for _, v := range tab.vals {
		for t, x := range v[pick] {
			if y := v[pub][t]; !math.IsNaN(x) && !math.IsNaN(y) {
				diffs = append(diffs, x-y)
			}
		}
	}
	if len(diffs) == 0 {
		return rec
	}
	d := &Difference{Published: cands[pub].Name, Pairs: len(diffs)}
	if pub != pick {
		ci := stats.Bootstrap(diffs, stats.RNG(seed, "vs-published"))
		d.Mean, d.Low, d.High = ci.Mean, ci.Lo, ci.Hi
	}
	rec.VsPublished = d
	return rec
}
