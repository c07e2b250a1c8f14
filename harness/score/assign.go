package score

// assignment returns the largest total weight of a one-to-one assignment
// of rows to columns of w (rows × columns, any shape, weights >= 0; a row
// or column may stay unassigned), and which column each row got (-1:
// none). It is the Hungarian algorithm (Kuhn–Munkres) on costs max−w over
// the rectangle as it is, never padded to a square: with n rows and m ≥ n
// columns it takes O(n²m), so a scenario's few gold calls against a
// thousand calls cost thousands of steps, not a billion. A taller matrix
// is solved transposed.
func assignment(w [][]int) (int, []int) {
	rows := len(w)
	if rows == 0 {
		return 0, nil
	}
	cols := len(w[0])
	to := make([]int, rows)
	for i := range to {
		to[i] = -1
	}
	if cols == 0 {
		return 0, to
	}
	if rows > cols {
		t := make([][]int, cols)
		for j := range t {
			t[j] = make([]int, rows)
			for i := range w {
				t[j][i] = w[i][j]
			}
		}
		_, back := assignment(t)
		total := 0
		for j, i := range back {
			if i >= 0 {
				to[i] = j
				total += w[i][j]
			}
		}
		return total, to
	}
	top := 0
	for _, r := range w {
		for _, x := range r {
			top = max(top, x)
		}
	}
	// Every row gets a column (rows <= cols); a row whose best is weight 0
	// loses nothing by it, so this is also the best partial assignment.
	// u, v are the potentials, p[j] the row assigned to column j (1-based,
	// 0 none), way the augmenting path; index 0 is the virtual start.
	u, v := make([]int, rows+1), make([]int, cols+1)
	p, way := make([]int, cols+1), make([]int, cols+1)
	minv, used := make([]int, cols+1), make([]bool, cols+1)
	const inf = int(^uint(0) >> 1)
	for i := 1; i <= rows; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j], used[j] = inf, false
		}
		for p[j0] != 0 {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			row := w[i0-1]
			for j := 1; j <= cols; j++ {
				if used[j] {
					continue
				}
				if cur := top - row[j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= cols; j++ {
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
	for j := 1; j <= cols; j++ {
		if i := p[j]; i >= 1 {
			total += w[i-1][j-1]
			to[i-1] = j - 1
		}
	}
	return total, to
}
