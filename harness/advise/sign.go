package advise

import "github.com/mcpgranite/granite/internal/stats"

// This file is the sign procedure (ProcedureSign): paired exact sign
// tests, Holm-adjusted within the race's family and over its looks.

// test runs the look's sign tests over every ordered pair of survivors,
// adjusts them by Holm and the number of looks, and returns each
// survivor's most significant comparison and those that drop (never the
// best).
func (e *engine) test(alive []int, best int) (all, dropped []Comparison) {
	var cs []Comparison
	var from []int
	for _, c := range alive {
		for _, d := range alive {
			if c == d {
				continue
			}
			w, l := e.wins[c][d], e.wins[d][c]
			cs = append(cs, Comparison{Candidate: e.cands[c].Name, Against: e.cands[d].Name,
				Pairs: e.pairs[c][d], Wins: w, Losses: l, P: stats.SignTest(w+l, l)})
			from = append(from, c)
		}
	}
	ps := make([]float64, len(cs))
	for i, c := range cs {
		ps[i] = c.P
	}
	looks := float64(e.r.Looks())
	// The family is every ordered pair of the race's candidates, fixed
	// from the start; a pair with a dropped candidate is untested, as if
	// its p-value were 1, and so comes last in Holm's order.
	k := len(e.cands)
	for i, a := range stats.HolmWithin(ps, k*(k-1)) {
		cs[i].Adjusted = min(1, a*looks)
	}
	bestName := e.cands[best].Name
	for _, c := range alive {
		var top *Comparison
		for i := range cs {
			x := &cs[i]
			if from[i] != c {
				continue
			}
			if top == nil || x.Adjusted < top.Adjusted || x.Adjusted == top.Adjusted &&
				(x.P < top.P || x.P == top.P && x.Against == bestName && top.Against != bestName) {
				top = x
			}
		}
		all = append(all, *top)
		if c != best && top.Adjusted <= e.r.Alpha {
			dropped = append(dropped, *top)
		}
	}
	return all, dropped
}
