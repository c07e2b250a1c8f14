package stats

import (
	"math"
	"sort"
)

// BH is Benjamini and Hochberg's adjustment of p-values, in the order
// given: the i-th smallest of m is multiplied by m/i and made no larger
// than any after it, capped at 1 (R's p.adjust(method = "BH")). Rejecting
// those at most q controls the false discovery rate at q for independent
// or positively dependent tests. ps must hold no NaN; none give none.
func BH(ps []float64) []float64 {
	n := len(ps)
	idx := order(ps)
	out := make([]float64, n)
	prev := 1.0
	for r := n - 1; r >= 0; r-- {
		i := idx[r]
		q := math.Min(prev, ps[i]*float64(n)/float64(r+1))
		out[i] = q
		prev = q
	}
	return out
}

// Holm is Holm's step-down adjustment of p-values, in the order given:
// the i-th smallest of m is multiplied by m−i+1, made no smaller than the
// one before it, and capped at 1 (R's p.adjust(method = "holm")).
// Rejecting those at most α controls the family-wise error rate at α
// under any dependence. ps must hold no NaN; none give none.
func Holm(ps []float64) []float64 { return HolmWithin(ps, len(ps)) }

// HolmWithin is Holm's adjustment of ps within a family of m ≥ len(ps)
// hypotheses, the others untested (as if their p-values were 1, last in
// Holm's order).
func HolmWithin(ps []float64, m int) []float64 {
	adj := make([]float64, len(ps))
	prev := 0.0
	for rank, i := range order(ps) {
		prev = max(prev, min(1, float64(m-rank)*ps[i]))
		adj[i] = prev
	}
	return adj
}

// order is the indices of ps from the smallest p-value up, ties in their
// order.
func order(ps []float64) []int {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	return idx
}
