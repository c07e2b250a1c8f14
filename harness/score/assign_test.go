package score

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// oldAssignment is the assignment as it was before it kept the matrix's
// shape: the same Hungarian algorithm on a square padded with weight-0
// cells to max(rows, columns), O(max³). The rectangular one must find the
// same totals.
func oldAssignment(w [][]int) (int, []int) {
	rows := len(w)
	if rows == 0 {
		return 0, nil
	}
	cols := len(w[0])
	n := max(rows, cols)
	top := 0
	for _, r := range w {
		for _, x := range r {
			top = max(top, x)
		}
	}
	cost := func(i, j int) int { // 1-based, padded with weight 0
		if i <= rows && j <= cols {
			return top - w[i-1][j-1]
		}
		return top
	}
	u, v := make([]int, n+1), make([]int, n+1)
	p, way := make([]int, n+1), make([]int, n+1)
	const inf = int(^uint(0) >> 1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]int, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = inf
		}
		for p[j0] != 0 {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := cost(i0, j) - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	total := 0
	to := make([]int, rows)
	for i := range to {
		to[i] = -1
	}
	for j := 1; j <= n; j++ {
		if i := p[j]; i >= 1 && i <= rows && j <= cols {
			total += w[i-1][j-1]
			to[i-1] = j - 1
		}
	}
	return total, to
}

// randomWeights is a rows × cols matrix of weights in [0, top], most of
// them 0 when sparse, as calls that match no gold call are.
func randomWeights(r *rand.Rand, rows, cols, top int, sparse bool) [][]int {
	w := make([][]int, rows)
	for i := range w {
		w[i] = make([]int, cols)
		for j := range w[i] {
			if !sparse || r.IntN(10) == 0 {
				w[i][j] = r.IntN(top + 1)
			}
		}
	}
	return w
}

// checkAssignment fails unless to assigns each row at most one column,
// no column twice, and its weights sum to total.
func checkAssignment(t *testing.T, w [][]int, total int, to []int) {
	t.Helper()
	if len(to) != len(w) {
		t.Fatalf("%v: %d rows assigned, want %d", w, len(to), len(w))
	}
	sum, seen := 0, map[int]bool{}
	for i, j := range to {
		if j < 0 {
			continue
		}
		if j >= len(w[i]) || seen[j] {
			t.Fatalf("%v: row %d got column %d (out of range or taken): %v", w, i, j, to)
		}
		seen[j] = true
		sum += w[i][j]
	}
	if sum != total {
		t.Fatalf("%v: the assignment %v weighs %d, reported %d", w, to, sum, total)
	}
}

// bestByHand is the best total by trying every assignment of rows to
// distinct columns or none, for small matrices.
func bestByHand(w [][]int, row int, taken []bool) int {
	if row == len(w) {
		return 0
	}
	best := bestByHand(w, row+1, taken) // the row unassigned
	for j, x := range w[row] {
		if !taken[j] {
			taken[j] = true
			best = max(best, x+bestByHand(w, row+1, taken))
			taken[j] = false
		}
	}
	return best
}

// TestAssignmentOptimal: on small matrices of every shape up to 5 × 5,
// the assignment's total is the best of all assignments, found by hand.
func TestAssignmentOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for rows := 1; rows <= 5; rows++ {
		for cols := 0; cols <= 5; cols++ {
			for range 40 {
				w := randomWeights(r, rows, cols, 1+r.IntN(4), r.IntN(2) == 0)
				total, to := assignment(w)
				checkAssignment(t, w, total, to)
				if want := bestByHand(w, 0, make([]bool, cols)); total != want {
					t.Fatalf("assignment(%v) = %d, want %d", w, total, want)
				}
			}
		}
	}
}

// TestAssignmentAsBefore: the rectangular assignment finds the padded
// square's totals on random matrices of many shapes, wide and tall,
// dense and sparse, with many ties (small weights).
func TestAssignmentAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][2]int{{1, 1}, {1, 30}, {30, 1}, {2, 7}, {7, 2}, {3, 3}, {5, 40}, {40, 5}, {8, 8}, {12, 20}, {20, 12}, {5, 200}}
	same := 0
	n := 0
	for _, s := range shapes {
		for range 30 {
			w := randomWeights(r, s[0], s[1], 1+r.IntN(6), r.IntN(2) == 0)
			got, to := assignment(w)
			want, oldTo := oldAssignment(w)
			checkAssignment(t, w, got, to)
			if got != want {
				t.Fatalf("%d × %d %v: assignment %d, the padded square %d", s[0], s[1], w, got, want)
			}
			n++
			if slices.Equal(to, oldTo) {
				same++
			}
		}
	}
	t.Logf("%d of %d mappings the same", same, n)
}

// BenchmarkAssignment is the raw assignment of a scenario's few gold
// calls against many calls of the same (tool, action), few of which
// match: the shape a model repeating one call makes. Padded to a square
// it took 3.3 s for 1,000 calls and over 120 s for 4,000.
func BenchmarkAssignment(b *testing.B) {
	for _, s := range [][2]int{{5, 1000}, {5, 4000}} {
		w := randomWeights(rand.New(rand.NewPCG(5, 6)), s[0], s[1], 4, true)
		b.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(b *testing.B) {
			for b.Loop() {
				assignment(w)
			}
		})
	}
}
