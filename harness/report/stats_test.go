package report

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestBH checks adjusted p-values against the worked example of
// Benjamini and Hochberg (1995), as R's p.adjust(method = "BH") gives them.
func TestBH(t *testing.T) {
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000}
	want := []float64{0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.063857142857, 0.063857142857, 0.0645, 0.0765, 0.486, 0.581181818182, 0.714875, 0.753230769231, 0.813214285714, 1}
	got := BH(ps)
	for i := range ps {
		if !near(got[i], want[i], 1e-11) {
			t.Errorf("p[%d] = %v: adjusted %v, want %v", i, ps[i], got[i], want[i])
		}
	}
	// Order of the input does not matter.
	if r := BH([]float64{0.04, 0.01, 0.03}); !near(r[0], 0.04, 1e-12) || !near(r[1], 0.03, 1e-12) || !near(r[2], 0.04, 1e-12) {
		t.Errorf("unordered: %v", r)
	}
}

// TestSpearman checks rho on known data: Wikipedia's IQ / TV hours example
// (rho = -29/165) and ties.
func TestSpearman(t *testing.T) {
	iq := []float64{106, 100, 86, 101, 99, 103, 97, 113, 112, 110}
	tv := []float64{7, 27, 2, 50, 28, 29, 20, 12, 6, 17}
	rho, p, err := Spearman(iq, tv)
	if err != nil || !near(rho, -29.0/165, 1e-12) || !near(p, 0.6272, 1e-3) {
		t.Errorf("rho %v p %v err %v; want -0.17576, p 0.627", rho, p, err)
	}
	if _, _, err := Spearman([]float64{1, 2}, []float64{1, 2}); err == nil {
		t.Error("two points: no error")
	}
}

// TestSpearmanExact checks the permutation p-values of small samples
// against counts by hand (R's cor.test(method = "spearman") agrees where
// there are no ties), and the bound used for |ρ| = 1 above nine pairs.
func TestSpearmanExact(t *testing.T) {
	for _, c := range []struct {
		name   string
		x, y   []float64
		rho, p float64
	}{
		// Of the 3! pairings only the identity and the reversal reach |ρ| = 1.
		{"n=3, rho=1", []float64{1, 2, 3}, []float64{10, 20, 30}, 1, 2.0 / 6},
		{"n=3, rho=-1", []float64{0.3, 1.2, 4}, []float64{9, 5, 1}, -1, 2.0 / 6},
		// |ρ| = 0.5: all but the two pairings with ρ = ±1 reach it.
		{"n=3, rho=0.5", []float64{1, 2, 3}, []float64{1, 3, 2}, 0.5, 1},
		{"n=4, rho=1", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 1, 2.0 / 24},
		// Σd² = 2: the identity and 3 adjacent swaps, and their 4 mirrors.
		{"n=4, rho=0.8", []float64{1, 2, 3, 4}, []float64{1, 2, 4, 3}, 0.8, 8.0 / 24},
		{"n=5, rho=1", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}, 1, 2.0 / 120},
		{"n=5, rho=0.9", []float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 5, 4}, 0.9, 10.0 / 120},
		// Ties: swapping the tied pair keeps ρ = 1, as in the reversal.
		{"n=4 with ties, rho=1", []float64{1, 2, 2, 3}, []float64{10, 20, 20, 40}, 1, 4.0 / 24},
		{"n=9, rho=1", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 2.0 / 362880},
		{"n=10, rho=1", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1, 2.0 / 3628800},
		{"n=10 with ties, rho=-1", []float64{1, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{9, 9, 8, 7, 6, 5, 4, 3, 2, 1}, -1, 4.0 / 3628800},
	} {
		rho, p, err := Spearman(c.x, c.y)
		if err != nil || !near(rho, c.rho, 1e-12) || !near(p, c.p, 1e-12*c.p) {
			t.Errorf("%s: rho %v p %v err %v; want rho %v p %v", c.name, rho, p, err, c.rho, c.p)
		}
	}
}

func TestBootstrapIsReproducible(t *testing.T) {
	xs := []float64{1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1}
	a := Bootstrap(xs, rngFor(7, "x"))
	cont := []float64{3.1, 4.7, 2.2, 9.9, 5.5, 6.1, 0.3, 7.7, 8.2, 4.4}
	if x, y := Bootstrap(cont, rngFor(7, "x")), Bootstrap(cont, rngFor(8, "x")); x == y {
		t.Errorf("different seeds, same interval: %+v", x)
	}
	b := Bootstrap(xs, rngFor(7, "x"))
	if a != b {
		t.Fatalf("same seed, different intervals: %+v %+v", a, b)
	}
	if !near(a.Mean, 10.0/15, 1e-12) || a.Lo >= a.Mean || a.Hi <= a.Mean || a.Lo < 0.3 || a.Hi > 0.95 {
		t.Errorf("interval %+v", a)
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
		p := PairedBootstrap(c.diffs, rngFor(1, c.name))
		if p.P < c.lo || p.P > c.hi {
			t.Errorf("%s: p %v, want in [%v, %v]", c.name, p.P, c.lo, c.hi)
		}
	}
	if p := PairedBootstrap(nil, rngFor(1, "none")); !math.IsNaN(p.P) {
		t.Errorf("no pairs: p %v, want NaN", p.P)
	}
}

func TestPassK(t *testing.T) {
	// Two scenarios, 3 repetitions: 3/3 and 1/3 successes.
	got := PassK([]int{3, 1}, []int{3, 3})
	want := []float64{(1 + 1.0/3) / 2, 0.5, 0.5}
	for k := range want {
		if !near(got[k], want[k], 1e-12) {
			t.Errorf("pass^%d = %v, want %v", k+1, got[k], want[k])
		}
	}
	// 2 of 3: pass^1 = 2/3, pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0.
	if g := PassK([]int{2}, []int{3}); !near(g[0], 2.0/3, 1e-12) || !near(g[1], 1.0/3, 1e-12) || g[2] != 0 {
		t.Errorf("2 of 3: %v", g)
	}
}

// TestLogistic recovers known coefficients from data generated by them.
func TestLogistic(t *testing.T) {
	rng := rngFor(3, "logit")
	var X [][]float64
	var y []float64
	for range 4000 {
		x1 := rng.NormFloat64()
		x2 := float64(rng.IntN(2))
		z := -0.5 + 1.2*x1 - 0.8*x2
		yy := 0.0
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			yy = 1
		}
		X = append(X, []float64{1, x1, x2})
		y = append(y, yy)
	}
	cs, err := Logistic(X, y, []string{"intercept", "x1", "x2"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{-0.5, 1.2, -0.8} {
		if !near(cs[i].Beta, want, 0.15) || i > 0 && (cs[i].ORLo > math.Exp(want) || cs[i].ORHi < math.Exp(want)) {
			t.Errorf("%s: %+v, want beta %v", cs[i].Name, cs[i], want)
		}
	}
	if cs[1].P > 1e-6 {
		t.Errorf("x1 p %v", cs[1].P)
	}
	// A predictor that never varies cannot be estimated.
	for i := range X {
		X[i][2] = 1
	}
	if _, err := Logistic(X, y, []string{"intercept", "x1", "x2"}); err == nil {
		t.Error("collinear: no error")
	}
}
