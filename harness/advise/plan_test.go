package advise

import (
	"reflect"
	"testing"
)

func TestPlanDeterministic(t *testing.T) {
	cands, p := field(9, 0.4, 0.5, 0.7, 0.3)
	for _, r := range []Race{{}, {Procedure: ProcedureSign}} {
		t.Run(r.Normal().Procedure, func(t *testing.T) {
			a, b := Plan(r, cands, p, 300, 42), Plan(r, cands, p, 300, 42)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("the same seed gave\n%+v\n%+v", a, b)
			}
			if c := Plan(r, cands, p, 300, 43); reflect.DeepEqual(a, c) {
				t.Error("another seed gave the same 300 races")
			}
			if g, h := PlanGrid(r, cands, p, 300, 42), PlanGrid(r, cands, p, 300, 42); !reflect.DeepEqual(g, h) {
				t.Error("the same seed gave two grids")
			}
			n := 0
			for _, x := range a.Rounds {
				n += x
			}
			picks := 0
			for _, x := range a.Picks {
				picks += x
			}
			grid := 4 * 9 * r.Normal().MaxRounds
			if n != 300 || picks != 300 || a.GridTrials != grid || a.TrialsMean > float64(a.GridTrials) || a.TrialsP90 > a.GridTrials {
				t.Errorf("plan %+v: want 300 races ended and picked, trials within the grid's %d", a, grid)
			}
			if !(a.RightLow <= a.Right && a.Right <= a.RightHigh) {
				t.Errorf("right %v outside its interval [%v, %v]", a.Right, a.RightLow, a.RightHigh)
			}
		})
	}
}

func TestPlanGrid(t *testing.T) {
	cands, p := field(9, 0.4, 0.5, 0.7, 0.3)
	g := PlanGrid(Race{MaxRounds: 5}, cands, p, 200, 1)
	if g.TrialsMean != float64(g.GridTrials) || g.Share != 1 || g.Rounds[5] != 200 || g.BestDropped != 0 {
		t.Errorf("grid %+v: want every race to play the whole grid, drop nothing", g)
	}
	if g.Right < 0.95 {
		t.Errorf("a grid of 45 trials a candidate picked right %v of the time between 0.7 and 0.5", g.Right)
	}
}

func TestTrialsFor(t *testing.T) {
	sign := Race{Procedure: ProcedureSign}
	for _, tc := range []struct {
		name string
		ps   []float64
		min  int // the fewest rounds the answer may be
	}{
		{"clear", []float64{0.6, 0.9, 0.6, 0.6}, 2},
		{"close", []float64{0.5, 0.6, 0.45, 0.3}, 3},
	} {
		t.Run("sign "+tc.name, func(t *testing.T) {
			cands, p := field(10, tc.ps...)
			n, res := TrialsFor(sign, cands, p, 0.95, 3)
			if res.Right < 0.95 || res.MaxRounds != n || n < tc.min || n >= RoundsCap {
				t.Fatalf("%d rounds: right %v at %d; want at least 0.95, from %d rounds", n, res.Right, res.MaxRounds, tc.min)
			}
			if n > 2 {
				less := sign
				less.MaxRounds = n - 1
				if less := Plan(less, cands, p, PlanRuns, 3); less.Right >= 0.95 {
					t.Errorf("%d rounds are enough (right %v), TrialsFor said %d", n-1, less.Right, n)
				}
			}
		})
		// KN: the round by which 95% of its own races ended, which the
		// answer's result, at the cap, is.
		t.Run("kn "+tc.name, func(t *testing.T) {
			cands, p := field(10, tc.ps...)
			n, res := TrialsFor(Race{}, cands, p, 0.95, 3)
			if res.Right < 0.95 || res.MaxRounds != DefaultKNMaxRounds || n < DefaultKNMinRounds || n >= DefaultKNMaxRounds {
				t.Fatalf("%d rounds: right %v at the cap %d; want at least 0.95, from %d rounds", n, res.Right, res.MaxRounds, DefaultKNMinRounds)
			}
			by := func(round int) (ended int) {
				for _, x := range res.Rounds[:round+1] {
					ended += x
				}
				return ended
			}
			if by(n) < 380 || by(n-1) >= 380 {
				t.Errorf("%d rounds: %d of 400 races ended by then, %d a round before; want the first round by which 380 had", n, by(n), by(n-1))
			}
		})
	}
	// A field no number of rounds can tell apart beyond Delta is right
	// from the start: every pick is within it.
	cands, p := field(5, 0.5, 0.52, 0.49)
	if n, res := TrialsFor(sign, cands, p, 0.95, 1); n != 2 || res.Right != 1 {
		t.Errorf("a field within Delta: %d rounds, right %v; want 2, 1", n, res.Right)
	}
}
