package stats

import (
	"testing"
)

// TestBH checks adjusted p-values against R's p.adjust(method = "BH"):
// the worked example of Benjamini and Hochberg (1995), and small ones by
// hand.
func TestBH(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ps, want []float64
	}{
		{"Benjamini and Hochberg 1995",
			[]float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000},
			[]float64{0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.063857142857, 0.063857142857, 0.0645, 0.0765, 0.486, 0.581181818182, 0.714875, 0.753230769231, 0.813214285714, 1}},
		// .01·5/1, .02·5/2, .03·5/3, .04·5/4, .05·5/5: all .05.
		{"steps", []float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.05, 0.05, 0.05, 0.05}},
		// Sorted .001·4/1 = .004, .03·4/2 = .06, .04·4/3 = .0533, .5·4/4;
		// .06 is lowered to the .0533 after it.
		{"unordered", []float64{0.04, 0.001, 0.03, 0.5}, []float64{0.16 / 3, 0.004, 0.16 / 3, 0.5}},
		{"capped at 1", []float64{0.9, 0.8}, []float64{0.9, 0.9}},
		{"one", []float64{0.2}, []float64{0.2}},
		{"none", nil, []float64{}},
	} {
		if got := BH(tc.ps); !nearAll(got, tc.want, 1e-11) {
			t.Errorf("%s: BH(%v) = %v, want %v", tc.name, tc.ps, got, tc.want)
		}
	}
}

// TestHolm checks adjusted p-values against R's p.adjust(method =
// "holm") on examples worked by hand.
func TestHolm(t *testing.T) {
	for _, tc := range []struct {
		ps, want []float64
	}{
		{nil, []float64{}},
		{[]float64{0.2}, []float64{0.2}},
		// Sorted .005 (×4), .01 (×3), .03 (×2), .04 (×1, raised to .06).
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		// .01·5, .02·4, .03·3, .04·2 raised to .09, .05·1 raised to .09.
		{[]float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.08, 0.09, 0.09, 0.09}},
		{[]float64{0.5, 0.6}, []float64{1, 1}},
		{[]float64{0.01, 0.01, 0.01}, []float64{0.03, 0.03, 0.03}},
	} {
		if got := Holm(tc.ps); !nearAll(got, tc.want, 1e-12) {
			t.Errorf("Holm(%v) = %v, want %v", tc.ps, got, tc.want)
		}
	}
	// Within a family of 6, two tested: .01·6, .02·5.
	if got := HolmWithin([]float64{0.02, 0.01}, 6); !nearAll(got, []float64{0.1, 0.06}, 1e-12) {
		t.Errorf("HolmWithin(.02 .01, 6) = %v, want [.1 .06]", got)
	}
}
