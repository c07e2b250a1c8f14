package stats

import (
	"math"
	"math/big"
	"testing"
)

// exactTail is P(Binomial(n, ½) ≥ k) in exact rational arithmetic.
func exactTail(n, k int) float64 {
	sum := new(big.Int)
	for i := max(k, 0); i <= n; i++ {
		sum.Add(sum, new(big.Int).Binomial(int64(n), int64(i)))
	}
	f, _ := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
	return f
}

func TestSignTest(t *testing.T) {
	for _, tc := range []struct {
		n, losses int
		want      float64
	}{
		{0, 0, 1},
		{10, 0, 1},
		{10, 11, 0},
		{1, 1, 0.5},
		{10, 10, 1.0 / 1024},
		{10, 8, 56.0 / 1024},
		{10, 5, 638.0 / 1024},
		{10, 6, 386.0 / 1024},
		{20, 15, 21700.0 / 1048576},
		// McNemar's exact one-sided test: 12 discordant pairs, 10 lost.
		{12, 10, 79.0 / 4096},
	} {
		if got := SignTest(tc.n, tc.losses); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("SignTest(%d, %d) = %.15g, want %.15g", tc.n, tc.losses, got, tc.want)
		}
	}
	// Against exact tails where the sum is long: the middle, and far out.
	for _, tc := range [][2]int{{101, 51}, {300, 150}, {300, 180}, {1000, 530}, {1000, 620}, {2000, 999}} {
		want := exactTail(tc[0], tc[1])
		if got := SignTest(tc[0], tc[1]); math.Abs(got-want) > 1e-12*max(1, want) && math.Abs(got-want)/want > 1e-10 {
			t.Errorf("SignTest(%d, %d) = %.15g, want %.15g", tc[0], tc[1], got, want)
		}
	}
}
