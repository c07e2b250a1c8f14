package stats

import "math"

// SignTest is the one-sided exact sign test's p-value for losses among n
// untied pairs: P(Binomial(n, ½) ≥ losses). It is the exact McNemar test
// when the pairs are binary outcomes' discordant ones. No losses (no
// pairs among them) give 1.
func SignTest(n, losses int) float64 {
	switch {
	case losses <= 0:
		return 1
	case losses > n:
		return 0
	case 2*losses <= n:
		// The tail reaches the middle: its complement, by symmetry the
		// upper tail from n−losses+1, is the one that falls off fast.
		return 1 - SignTest(n, n-losses+1)
	}
	// Past the middle the terms fall geometrically: sum them from the
	// first until they no longer change the sum.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	term := math.Exp(lg(n) - lg(losses) - lg(n-losses) - float64(n)*math.Ln2)
	sum := 0.0
	for i := losses; i <= n && term > sum*1e-17; i++ {
		sum += term
		term *= float64(n-i) / float64(i+1)
	}
	return min(1, sum)
}
