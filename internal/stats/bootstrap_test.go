package stats

import (
	"math"
	"testing"
)

// TestBootstrapEmptyAndDegenerate: an empty sample has no interval; one
// value, or equal values, give the zero-width interval at it.
func TestBootstrapEmptyAndDegenerate(t *testing.T) {
	ci := Bootstrap(nil, RNG(1, "none"))
	if !ci.Empty() || !math.IsNaN(ci.Mean) || !math.IsNaN(ci.Lo) || !math.IsNaN(ci.Hi) {
		t.Errorf("empty sample: %+v, want no interval", ci)
	}
	if p := PairedBootstrap([]float64{}, RNG(1, "none")); !p.Empty() || !math.IsNaN(p.P) {
		t.Errorf("no pairs: %+v, want no interval and a NaN p", p)
	}
	for _, xs := range [][]float64{{0.75}, {0.75, 0.75, 0.75}} {
		if ci := Bootstrap(xs, RNG(1, "one")); ci.Empty() || ci.N != len(xs) || ci.Mean != 0.75 || ci.Lo != 0.75 || ci.Hi != 0.75 {
			t.Errorf("Bootstrap(%v) = %+v, want [0.75, 0.75]", xs, ci)
		}
	}
}

// TestBootstrapIsReproducible: the same seed and label give the same
// interval; another seed or label another. The pinned ends guard every
// interval the report has published: a change to the resampling order
// would move them all.
func TestBootstrapIsReproducible(t *testing.T) {
	xs := []float64{1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1}
	a, b := Bootstrap(xs, RNG(7, "x")), Bootstrap(xs, RNG(7, "x"))
	if a != b {
		t.Fatalf("same seed, different intervals: %+v %+v", a, b)
	}
	if !near(a.Mean, 10.0/15, 1e-12) || a.Lo >= a.Mean || a.Hi <= a.Mean || a.Lo < 0.3 || a.Hi > 0.95 {
		t.Errorf("interval %+v", a)
	}
	// 6 and 13 successes of 15: the 50th and 1950th of the resample means.
	if lo, hi := 6.0/15, 13.0/15; a.Lo != lo || a.Hi != hi {
		t.Errorf("Bootstrap(xs, RNG(7, \"x\")) = [%v, %v], want the pinned [%v, %v]", a.Lo, a.Hi, lo, hi)
	}
	cont := []float64{3.1, 4.7, 2.2, 9.9, 5.5, 6.1, 0.3, 7.7, 8.2, 4.4}
	if x, y := Bootstrap(cont, RNG(7, "x")), Bootstrap(cont, RNG(8, "x")); x == y {
		t.Errorf("different seeds, same interval: %+v", x)
	}
	if x, y := Bootstrap(cont, RNG(7, "x")), Bootstrap(cont, RNG(7, "y")); x == y {
		t.Errorf("different labels, same interval: %+v", x)
	}
}

// TestPairedBootstrapP pins the p-value's floor: with B resamples the
// smallest p a bootstrap can resolve is 1/(B+1) a side, never 0.
func TestPairedBootstrapP(t *testing.T) {
	floor := 2.0 / (Resamples + 1)
	for _, c := range []struct {
		name   string
		diffs  []float64
		lo, hi float64
	}{
		{"clearly positive: no resample crosses zero", []float64{0.5, 0.4, 0.6, 0.5, 0.3, 0.7}, floor, floor},
		{"clearly negative", []float64{-1, -1, -1, -0.5}, floor, floor},
		{"one positive pair", []float64{1}, floor, floor},
		{"no difference at all", []float64{0, 0, 0}, 1, 1},
		{"balanced", []float64{1, -1, 1, -1, 0, 0}, 0.5, 1},
	} {
		p := PairedBootstrap(c.diffs, RNG(1, c.name))
		if p.P < c.lo || p.P > c.hi {
			t.Errorf("%s: p %v, want in [%v, %v]", c.name, p.P, c.lo, c.hi)
		}
	}
}
