package stats

import (
	"math"
	"testing"
)

// TestWilson checks the score interval against textbook values (R's
// prop.test(k, n, correct = FALSE)$conf.int, binom.confint's "wilson").
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k            float64
		n            int
		mean, lo, hi float64
	}{
		{0, 10, 0, 0, 0.2775328},
		{5, 10, 0.5, 0.2365931, 0.7634069},
		{8, 10, 0.8, 0.4901625, 0.9433178},
		{10, 10, 1, 0.7224672, 1},
		{1, 1, 1, 0.2065493, 1},
	} {
		ci := Wilson(tc.k, tc.n)
		if ci.N != tc.n || ci.Mean != tc.mean || !near(ci.Lo, tc.lo, 1e-7) || !near(ci.Hi, tc.hi, 1e-7) {
			t.Errorf("Wilson(%v, %d) = %+v, want %v [%.7f, %.7f]", tc.k, tc.n, ci, tc.mean, tc.lo, tc.hi)
		}
	}
	// At 0 or n successes the end is the share itself, exactly.
	if ci := Wilson(10, 10); ci.Hi != 1 {
		t.Errorf("10 of 10: high %v, want exactly 1", ci.Hi)
	}
	// No trials: no interval, not [0, 1].
	if ci := Wilson(0, 0); !ci.Empty() || !math.IsNaN(ci.Mean) || !math.IsNaN(ci.Lo) || !math.IsNaN(ci.Hi) {
		t.Errorf("Wilson(0, 0) = %+v, want an empty CI", ci)
	}
}
