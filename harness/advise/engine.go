package advise

import (
	"math"
	"slices"
	"sort"
)

// This file is the race's engine: the outcomes indexed by round, the
// pairwise counts of the trials played, and a look at them after each
// round; the procedures' tests are in kn.go and sign.go.

// table is outcomes indexed: vals[round−1][candidate][task], NaN where a
// candidate did not play a task in a round.
type table struct {
	tasks []string
	vals  [][][]float64
}

// tabulate indexes the outcomes of rounds 1..round; tasks are sorted by
// name so that the decision does not depend on the outcomes' order.
func tabulate(cands []Candidate, outcomes []Outcome, round int) *table {
	ci := map[string]int{}
	for i, c := range cands {
		ci[c.Name] = i
	}
	tasks := map[string]int{}
	for _, o := range outcomes {
		tasks[o.Task] = 0
	}
	tab := &table{tasks: make([]string, 0, len(tasks))}
	for t := range tasks {
		tab.tasks = append(tab.tasks, t)
	}
	sort.Strings(tab.tasks)
	for i, t := range tab.tasks {
		tasks[t] = i
	}
	tab.vals = make([][][]float64, max(0, round))
	for rd := range tab.vals {
		tab.vals[rd] = make([][]float64, len(cands))
		for c := range cands {
			tab.vals[rd][c] = make([]float64, len(tab.tasks))
			for t := range tab.vals[rd][c] {
				tab.vals[rd][c][t] = math.NaN()
			}
		}
	}
	for _, o := range outcomes {
		if o.Rep <= round {
			tab.vals[o.Rep-1][ci[o.Candidate]][tasks[o.Task]] = o.TC
		}
	}
	return tab
}

// engine is a race in progress: which candidates survive and the pairwise
// counts of the trials played so far. Decide replays outcomes through it
// and Plan plays simulated rounds through it, so both run one procedure.
type engine struct {
	r      Race
	cands  []Candidate
	tasks  int
	noDrop bool // a full grid: look for the best, never drop
	round  int
	alive  []bool
	vals   [][][]float64 // vals[round−1][candidate][task]
	// wins[c][d] counts the pairs c won against d, pairs[c][d] those both
	// played, over the rounds both were racing.
	wins, pairs [][]int
	// KN's pair statistics: sum[c][d] is Σ(x_c − x_d) over the pairs both
	// played, sq[c][d] Σ(x_c − x_d)² over them until the pair's first
	// stage ends, when s2 and h2 are set (h2 is 0 before).
	sum, sq, s2, h2 [][]float64
	// sums are the survivors' TC sums over the trials all of them share
	// in rounds 1..summed, over shared trials; changed marks a drop since,
	// after which they are summed again.
	sums    []float64
	shared  int
	summed  int
	changed bool
	last    Decision
}

func newEngine(r Race, cands []Candidate, tasks int) *engine {
	k := len(cands)
	e := &engine{r: r, cands: cands, tasks: tasks, alive: make([]bool, k), sums: make([]float64, k),
		wins: make([][]int, k), pairs: make([][]int, k),
		sum: make([][]float64, k), sq: make([][]float64, k), s2: make([][]float64, k), h2: make([][]float64, k)}
	for c := range k {
		e.alive[c] = true
		e.wins[c], e.pairs[c] = make([]int, k), make([]int, k)
		e.sum[c], e.sq[c], e.s2[c], e.h2[c] = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	}
	return e
}

// play adds a round's TCs, v[candidate][task] (NaN where not played).
func (e *engine) play(v [][]float64) {
	e.round++
	e.vals = append(e.vals, v)
	if e.noDrop {
		return
	}
	for c := range e.cands {
		if !e.alive[c] {
			continue
		}
		for d := c + 1; d < len(e.cands); d++ {
			if !e.alive[d] {
				continue
			}
			for t := range e.tasks {
				x, y := v[c][t], v[d][t]
				if math.IsNaN(x) || math.IsNaN(y) {
					continue
				}
				e.pairs[c][d]++
				e.pairs[d][c]++
				e.sum[c][d] += x - y
				e.sum[d][c] -= x - y
				if e.h2[c][d] == 0 {
					e.sq[c][d] += (x - y) * (x - y)
				}
				if x > y {
					e.wins[c][d]++
				} else if y > x {
					e.wins[d][c]++
				}
			}
		}
	}
}

// survivors are the indices of the candidates still racing.
func (e *engine) survivors() []int {
	var out []int
	for c, ok := range e.alive {
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// means are the survivors' mean TCs over the trials all of them share,
// or over their own trials when they share none, and the trials counted.
func (e *engine) means(alive []int) ([]float64, []int) {
	if e.changed {
		e.summed, e.shared, e.changed = 0, 0, false
		clear(e.sums)
	}
	for ; e.summed < e.round; e.summed++ {
		v := e.vals[e.summed]
		for t := range e.tasks {
			all := true
			for _, c := range alive {
				if math.IsNaN(v[c][t]) {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			e.shared++
			for _, c := range alive {
				e.sums[c] += v[c][t]
			}
		}
	}
	means, trials := make([]float64, len(alive)), make([]int, len(alive))
	for i, c := range alive {
		if e.shared > 0 {
			means[i], trials[i] = e.sums[c]/float64(e.shared), e.shared
			continue
		}
		sum, n := 0.0, 0
		for _, v := range e.vals {
			for _, x := range v[c] {
				if !math.IsNaN(x) {
					sum += x
					n++
				}
			}
		}
		if n > 0 {
			means[i] = sum / float64(n)
		}
		trials[i] = n
	}
	return means, trials
}

// best is the index into alive of the highest mean; a tie goes to the
// published candidate, then to the earlier one.
func (e *engine) best(alive []int, means []float64) int {
	b := 0
	for i := 1; i < len(alive); i++ {
		if means[i] > means[b] || means[i] == means[b] && e.cands[alive[i]].Published && !e.cands[alive[b]].Published {
			b = i
		}
	}
	return b
}

// look decides after the rounds played so far.
func (e *engine) look(round int) Decision {
	alive := e.survivors()
	means, trials := e.means(alive)
	b := e.best(alive, means)
	d := Decision{Round: round, Best: e.cands[alive[b]].Name, LastRound: e.r.MaxRounds}
	if !e.noDrop && round >= e.r.MinRounds && round <= e.r.MaxRounds && len(alive) > 1 {
		if e.r.Procedure == ProcedureKN {
			d.Comparisons, d.Dropped = e.testKN(alive, alive[b])
		} else {
			d.Comparisons, d.Dropped = e.test(alive, alive[b])
		}
	}
	for _, x := range d.Dropped {
		e.changed = true
		e.alive[slices.IndexFunc(e.cands, func(c Candidate) bool { return c.Name == x.Candidate })] = false
	}
	for i, c := range alive {
		if e.alive[c] {
			d.Survivors = append(d.Survivors, e.cands[c].Name)
			d.Means = append(d.Means, Mean{Candidate: e.cands[c].Name, Mean: means[i], Trials: trials[i]})
		}
	}
	if e.r.Procedure == ProcedureKN && !e.noDrop && round >= e.r.MinRounds {
		d.LastRound = e.knLastRound(round)
	}
	d.Done = len(d.Survivors) == 1 || round >= d.LastRound
	return d
}
