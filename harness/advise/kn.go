package advise

import "math"

// This file is Kim and Nelson's indifference-zone procedure
// (ProcedureKN): each pair's first-stage variance, its boundary, and the
// drops and last round it implies.

// knH2 is KN's h² for a race of k candidates whose pair's first stage
// had n0 ≥ 2 paired trials, at error rate alpha, with c = 1:
// 2η(n0 − 1), η = ½[(2α/(k − 1))^(−2/(n0 − 1)) − 1].
func knH2(k, n0 int, alpha float64) float64 {
	eta := 0.5 * (math.Pow(2*alpha/float64(max(1, k-1)), -2/float64(n0-1)) - 1)
	return 2 * eta * float64(n0-1)
}

// knFloor is the least S² of a pair whose first stage had n0 paired
// trials: the variance p(1 − p) of a difference nonzero with probability
// p = 0.5/n0, as if half of one of the n0 pairs had differed. Without it
// two candidates with the same outcomes throughout the first stage (both
// always completing, say) would have S² = 0, a boundary closed at once,
// and a pick made on the first stage's ties.
func knFloor(n0 int) float64 {
	p := 0.5 / float64(n0)
	return p * (1 - p)
}

// freeze ends the first stage of every pair of survivors that has not
// ended it and has two paired trials or more: its S² (floored) and h².
func (e *engine) freeze(alive []int) {
	for _, c := range alive {
		for _, d := range alive {
			n := e.pairs[c][d]
			if c >= d || e.h2[c][d] != 0 || n < 2 {
				continue
			}
			m := e.sum[c][d] / float64(n)
			s2 := max(knFloor(n), (e.sq[c][d]-float64(n)*m*m)/float64(n-1))
			h2 := knH2(len(e.cands), n, e.r.Alpha)
			e.s2[c][d], e.s2[d][c], e.h2[c][d], e.h2[d][c] = s2, s2, h2, h2
		}
	}
}

// knCompare is KN's comparison of c against d after their pairs so far.
func (e *engine) knCompare(c, d int) Comparison {
	n := e.pairs[c][d]
	x := Comparison{Candidate: e.cands[c].Name, Against: e.cands[d].Name, Pairs: n,
		Wins: e.wins[c][d], Losses: e.wins[d][c], Sum: e.sum[c][d], Variance: e.s2[c][d]}
	x.Horizon = e.h2[c][d] * x.Variance / (e.r.Delta * e.r.Delta)
	x.Boundary = max(0, e.r.Delta/2*(x.Horizon-float64(n)))
	return x
}

// testKN is KN's elimination at a look: a survivor is dropped when its
// sum of paired differences against another survivor is below that
// pair's −W(n) (never the best). It returns each survivor's closest
// comparison (the smallest Sum + Boundary) and those that drop. Pairs
// still in their first stage (fewer than two paired trials) are not
// compared.
func (e *engine) testKN(alive []int, best int) (all, dropped []Comparison) {
	e.freeze(alive)
	bestName := e.cands[best].Name
	for _, c := range alive {
		var top *Comparison
		for _, d := range alive {
			if c == d || e.h2[c][d] == 0 {
				continue
			}
			x := e.knCompare(c, d)
			if m, tm := x.Sum+x.Boundary, 0.0; top != nil {
				tm = top.Sum + top.Boundary
				if !(m < tm || m == tm && x.Against == bestName && top.Against != bestName) {
					continue
				}
			}
			top = &x
		}
		if top == nil {
			continue
		}
		all = append(all, *top)
		if c != best && top.Sum < -top.Boundary {
			dropped = append(dropped, *top)
		}
	}
	return all, dropped
}

// knLastRound is the last round KN can play after round, with every
// trial played: the round by which every surviving pair has more paired
// trials than its horizon, at most MaxRounds; MaxRounds while a pair of
// survivors is still in its first stage.
func (e *engine) knLastRound(round int) int {
	alive := e.survivors()
	last := round
	for _, c := range alive {
		for _, d := range alive {
			if c >= d {
				continue
			}
			if e.h2[c][d] == 0 {
				return e.r.MaxRounds
			}
			x := e.knCompare(c, d)
			need := int(math.Floor(x.Horizon)) + 1 - x.Pairs
			if need > 0 {
				last = max(last, round+(need+e.tasks-1)/max(1, e.tasks))
			}
		}
	}
	return min(last, e.r.MaxRounds)
}
