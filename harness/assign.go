package harness

// assignment returns the largest total weight of a one-to-one assignment
// of rows to columns of w (rows × columns, any shape, weights >= 0; a row
// or column may stay unassigned), and which column each row got (-1:
// none). It is the Hungarian algorithm (Kuhn–Munkres, O(n²m)) on costs
// max−w, padded to a square so that leaving a row unassigned costs as
// much as giving it weight 0.
func assignment(w [][]int) (int, []int) {
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
	// u, v are the potentials, p[j] the row assigned to column j, way the
	// augmenting path; index 0 is the virtual start.
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
