package stats

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of resamples a bootstrap draws. Its p-values
// cannot fall below 2/(Resamples+1).
const Resamples = 2000

// RNG is the resampling stream of seed and label: a PCG seeded with seed
// and the FNV-1a hash of label, so that each interval is reproducible on
// its own, whatever else is computed and in whatever order.
func RNG(seed uint64, label string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Bootstrap is the mean of xs with its 95% percentile interval: the
// 2.5% and 97.5% nearest-rank quantiles of the means of Resamples
// resamples of xs with replacement, drawn from rng. An empty xs has no
// interval (CI.Empty). xs must hold no NaN.
func Bootstrap(xs []float64, rng *rand.Rand) CI {
	ci, _ := bootstrap(xs, rng)
	return ci
}

// bootstrap also returns the resample means, sorted.
func bootstrap(xs []float64, rng *rand.Rand) (CI, []float64) {
	if len(xs) == 0 {
		return none(), nil
	}
	means := make([]float64, Resamples)
	n := len(xs)
	for b := range means {
		s := 0.0
		for range n {
			s += xs[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	ci := CI{Mean: Mean(xs), N: n}
	ci.Lo = Quantile(means, 0.025)
	ci.Hi = Quantile(means, 0.975)
	return ci, means
}

// Paired is a paired comparison: the mean difference with its interval,
// and a two-sided bootstrap p-value (NaN without pairs).
type Paired struct {
	CI
	P float64
}

// PairedBootstrap resamples paired differences as Bootstrap does. P is
// two-sided: twice the smaller tail, a tail being (resample means on that
// side of zero, zero included, + 1) / (Resamples + 1), at most 1. The +1
// counts the observed sample as one of the resamples (Davison and Hinkley
// 1997, eq. 4.11): B resamples cannot resolve a p below 1/(B+1) a side,
// and a difference no resample crosses gets 2/(B+1) ≈ 0.001, not 0. No
// pairs give no interval and a NaN P.
func PairedBootstrap(diffs []float64, rng *rand.Rand) Paired {
	ci, means := bootstrap(diffs, rng)
	if ci.Empty() {
		return Paired{CI: ci, P: math.NaN()}
	}
	le, ge := 0, 0
	for _, m := range means {
		if m <= 0 {
			le++
		}
		if m >= 0 {
			ge++
		}
	}
	return Paired{CI: ci, P: math.Min(1, 2*float64(min(le, ge)+1)/(Resamples+1))}
}
