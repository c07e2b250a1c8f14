// Package stats holds the statistics the report and the advisor share:
// means and nearest-rank quantiles, seeded percentile bootstrap intervals
// and paired bootstrap tests, Wilson score intervals, the exact sign test,
// and Holm's and Benjamini and Hochberg's adjustments of p-values.
//
// One rule holds throughout: an empty sample has no estimate and no
// interval. Its mean, quantiles and interval ends are NaN and a CI of it
// has N 0 (CI.Empty), and callers render it as "not available" (an en
// dash in Markdown, an empty CSV cell, an omitted JSON field), never as
// the uninformative [0, 1].
package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// CI is an estimate over a sample of N values with its 95% interval
// [Lo, Hi]. The zero-width interval of a sample of one value (or of equal
// values) is what the bootstrap sees, not a claim of certainty.
type CI struct {
	Mean, Lo, Hi float64
	N            int
}

// Empty says the sample was empty: Mean, Lo and Hi are NaN.
func (c CI) Empty() bool { return c.N == 0 }

// none is the CI of an empty sample.
func none() CI { return CI{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()} }

// Mean is the mean of xs, NaN when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stat.Mean(xs, nil)
}

// Quantile is the q-quantile of xs by the nearest rank: the smallest
// value with at least a share q of xs at or below it (gonum's
// stat.Empirical), NaN when xs is empty. xs need not be sorted; it is
// left as it is.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if !slices.IsSorted(xs) {
		xs = slices.Sorted(slices.Values(xs))
	}
	return stat.Quantile(q, stat.Empirical, xs, nil)
}
