package score

// F1 is the F1 score of two multisets, with F1(∅, ∅) = 1.
func F1(got, want []string) float64 {
	switch {
	case len(got) == 0 && len(want) == 0:
		return 1
	case len(got) == 0 || len(want) == 0:
		return 0
	}
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	hit := 0
	for _, g := range got {
		if left[g] > 0 {
			left[g]--
			hit++
		}
	}
	if hit == 0 {
		return 0
	}
	p, r := float64(hit)/float64(len(got)), float64(hit)/float64(len(want))
	return 2 * p * r / (p + r)
}
