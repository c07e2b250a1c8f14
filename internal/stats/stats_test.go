package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func nearAll(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			return false
		}
	}
	return true
}

func TestMean(t *testing.T) {
	if m := Mean([]float64{1, 2, 3, 6}); m != 3 {
		t.Errorf("Mean = %v, want 3", m)
	}
	if m := Mean(nil); !math.IsNaN(m) {
		t.Errorf("Mean of nothing = %v, want NaN", m)
	}
}

// TestQuantile: the nearest rank, the smallest value with at least a share
// q of the sample at or below it.
func TestQuantile(t *testing.T) {
	xs := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	for _, tc := range []struct{ q, want float64 }{
		{0, 1}, {0.1, 1}, {0.11, 2}, {0.5, 5}, {0.9, 9}, {0.95, 10}, {1, 10},
	} {
		if got := Quantile(xs, tc.q); got != tc.want {
			t.Errorf("Quantile(1..10, %v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if xs[0] != 10 || xs[1] != 1 {
		t.Errorf("Quantile reordered its input: %v", xs)
	}
	// The bootstrap's ends: the 50th and the 1950th of 2000.
	ranks := make([]float64, 2000)
	for i := range ranks {
		ranks[i] = float64(i + 1)
	}
	if lo, hi := Quantile(ranks, 0.025), Quantile(ranks, 0.975); lo != 50 || hi != 1950 {
		t.Errorf("2.5%% and 97.5%% of 1..2000 = %v, %v; want 50, 1950", lo, hi)
	}
	if q := Quantile(nil, 0.5); !math.IsNaN(q) {
		t.Errorf("Quantile of nothing = %v, want NaN", q)
	}
	if q := Quantile([]float64{4}, 0.975); q != 4 {
		t.Errorf("Quantile of one value = %v, want 4", q)
	}
}
