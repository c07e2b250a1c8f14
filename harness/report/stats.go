// Package report turns a results folder (trials.jsonl and run.json) into
// the tables, statistics and plots a researcher would publish.
package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/mcpgranite/granite/internal/stats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is the 95% interval the report gives the mean of xs under a
// label: stats.Bootstrap seeded from seed (0: Seed) and the label, so
// that the same label and sample give the same interval wherever it is
// shown, in the report's tables and plots or in granite view. An empty
// xs has none (stats.CI.Empty), shown as not available.
func Interval(seed uint64, label string, xs []float64) stats.CI {
	if seed == 0 {
		seed = Seed
	}
	return stats.Bootstrap(xs, stats.RNG(seed, label))
}

// ExactSpearman is the largest sample whose Spearman p-value is counted
// over every pairing of the ranks (9! = 362,880 of them, a few
// milliseconds); the t approximation is poor on so few points, and gives
// p = 0 for |ρ| = 1 on three models, where the exact p is 1/3.
const ExactSpearman = 9

// Spearman returns Spearman's rank correlation of x and y (ties get their
// average rank) and its two-sided p-value: for n <= ExactSpearman the
// share of the n! pairings of y's ranks with x's whose |ρ| reaches the
// observed one (a permutation test, ties kept as they are); above, from
// the t distribution with n-2 degrees of freedom, except that |ρ| = 1 gets
// its exact p, since t is infinite there.
func Spearman(x, y []float64) (rho, p float64, err error) {
	if len(x) != len(y) || len(x) < 3 {
		return math.NaN(), math.NaN(), errors.New("needs at least 3 pairs")
	}
	rx, ry := ranks(x), ranks(y)
	rho = stat.Correlation(rx, ry, nil)
	n := float64(len(x))
	switch {
	case math.IsNaN(rho): // a constant sample has no ranks to correlate
		return rho, math.NaN(), nil
	case len(x) <= ExactSpearman:
		return rho, permutationP(rx, ry), nil
	case math.Abs(rho) >= 1:
		// Only the pairings that keep y's ranks (those within its ties
		// reorder freely) or reverse them reach |ρ| = 1.
		logP := math.Log(2) - lfact(len(x))
		for _, t := range tieSizes(ry) {
			logP += lfact(t)
		}
		return rho, math.Exp(logP), nil
	}
	t := rho * math.Sqrt((n-2)/(1-rho*rho))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 2}
	return rho, 2 * dist.Survival(math.Abs(t)), nil
}

// permutationP is the share of the orderings of ry whose rank correlation
// with rx is at least as far from zero as the observed one. ρ is an
// increasing function of Σ rx·ry, the only term that depends on the
// ordering, so the sums are compared; Heap's algorithm visits each
// ordering once.
func permutationP(rx, ry []float64) float64 {
	n := len(rx)
	var sx, sy float64
	for i := range n {
		sx += rx[i]
		sy += ry[i]
	}
	center := sx * sy / float64(n)
	dot := func(a []float64) float64 {
		s := 0.0
		for i, v := range a {
			s += rx[i] * v
		}
		return s
	}
	// Ranks are multiples of 1/2, so the sums are exact; the slack only
	// guards the comparison of equal ones.
	obs := math.Abs(dot(ry)-center) - 1e-9
	a := slices.Clone(ry)
	c := make([]int, n)
	hits, total := 0, 0
	count := func() {
		total++
		if math.Abs(dot(a)-center) >= obs {
			hits++
		}
	}
	count()
	for i := 0; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				a[0], a[i] = a[i], a[0]
			} else {
				a[c[i]], a[i] = a[i], a[c[i]]
			}
			count()
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
	return float64(hits) / float64(total)
}

// tieSizes are the sizes of the groups of equal ranks.
func tieSizes(rs []float64) []int {
	n := map[float64]int{}
	for _, r := range rs {
		n[r]++
	}
	var out []int
	for _, k := range n {
		out = append(out, k)
	}
	return out
}

// lfact is log(n!).
func lfact(n int) float64 {
	v, _ := math.Lgamma(float64(n) + 1)
	return v
}

// ranks gives 1-based ranks, ties sharing their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}

// Coef is one coefficient of a logistic regression, with its odds ratio.
type Coef struct {
	Name              string
	Beta, SE          float64
	OR, ORLo, ORHi, P float64
}

// Logistic fits P(y=1) = σ(Xβ) by maximum likelihood (gonum's BFGS on the
// negative log-likelihood) and returns each coefficient with its odds
// ratio, 95% Wald interval and p-value; standard errors come from the
// inverse Fisher information XᵀWX. X holds an intercept column if one is
// wanted.
func Logistic(X [][]float64, y []float64, names []string) ([]Coef, error) {
	n, k := len(X), len(names)
	if n == 0 || k == 0 || n <= k {
		return nil, errors.New("not enough trials for the model")
	}
	nll := func(beta []float64, grad []float64) float64 {
		for j := range grad {
			grad[j] = 0
		}
		f := 0.0
		for i, row := range X {
			z := 0.0
			for j, x := range row {
				z += x * beta[j]
			}
			// log(1+e^z) - y z, computed stably.
			f += softplus(z) - y[i]*z
			if grad != nil {
				d := sigmoid(z) - y[i]
				for j, x := range row {
					grad[j] += d * x
				}
			}
		}
		return f
	}
	p := optimize.Problem{
		Func: func(b []float64) float64 { return nll(b, make([]float64, k)) },
		Grad: func(grad, b []float64) { nll(b, grad) },
	}
	res, err := optimize.Minimize(p, make([]float64, k), &optimize.Settings{GradientThreshold: 1e-8}, &optimize.BFGS{})
	if err != nil && res == nil {
		return nil, err
	}
	return waldCoefs(X, res.X, names, 0)
}

// RidgeCoefs fits P(y=1) = σ(Xβ) by RidgeLogistic (the intercept, X's
// first column, unpenalised), its trials grouped into cells of equal
// predictors, and returns each coefficient with its odds ratio, 95% Wald
// interval and p-value from the penalised information XᵀWX + λI: the
// posterior mode and the normal approximation of the posterior under the
// ridge's normal prior of variance 1/λ. Unlike the maximum-likelihood fit
// it has an estimate when a term separates the outcome (every trial it
// covers failed): the prior holds that term's effect finite.
func RidgeCoefs(X [][]float64, y []float64, names []string, lambda float64) ([]Coef, error) {
	cell := map[string]int{}
	var cx [][]float64
	var n, s []float64
	for i, v := range X {
		key := fmt.Sprint(v)
		c, ok := cell[key]
		if !ok {
			c = len(cx)
			cell[key] = c
			cx = append(cx, v)
			n, s = append(n, 0), append(s, 0)
		}
		n[c]++
		s[c] += y[i]
	}
	beta, err := RidgeLogistic(cx, n, s, lambda, nil)
	if err != nil {
		return nil, err
	}
	return waldCoefs(X, beta, names, lambda)
}

// waldCoefs are the coefficients beta of a logistic model of X with their
// standard errors from the inverse of the information XᵀWX, plus lambda
// on the diagonal but for the intercept's when the fit was penalised.
func waldCoefs(X [][]float64, beta []float64, names []string, lambda float64) ([]Coef, error) {
	k := len(names)
	info := mat.NewSymDense(k, nil)
	for _, row := range X {
		z := 0.0
		for j, x := range row {
			z += x * beta[j]
		}
		w := sigmoid(z) * (1 - sigmoid(z))
		for a := range k {
			for b := a; b < k; b++ {
				info.SetSym(a, b, info.At(a, b)+w*row[a]*row[b])
			}
		}
	}
	if lambda > 0 {
		for j := 1; j < k; j++ {
			info.SetSym(j, j, info.At(j, j)+lambda)
		}
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(info); !ok {
		return nil, errors.New("the predictors are collinear or a group always (or never) completes: odds ratios are not estimable")
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil {
		return nil, err
	}
	norm := distuv.UnitNormal
	out := make([]Coef, k)
	for j := range k {
		se := math.Sqrt(cov.At(j, j))
		z := beta[j] / se
		out[j] = Coef{Name: names[j], Beta: beta[j], SE: se, OR: math.Exp(beta[j]),
			ORLo: math.Exp(beta[j] - 1.959964*se), ORHi: math.Exp(beta[j] + 1.959964*se), P: 2 * norm.Survival(math.Abs(z))}
	}
	return out, nil
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// PassK is τ-bench's pass^k: for each scenario with c successes in n
// repetitions, C(c,k)/C(n,k), averaged over scenarios, for k = 1..n. n is
// the smallest repetition count among the scenarios.
func PassK(successes, reps []int) []float64 {
	if len(successes) == 0 {
		return nil
	}
	n := slices.Min(reps)
	out := make([]float64, n)
	for k := 1; k <= n; k++ {
		s := 0.0
		for i, c := range successes {
			s += choose(c, k) / choose(reps[i], k)
		}
		out[k-1] = s / float64(len(successes))
	}
	return out
}

func choose(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r *= float64(n-k+i) / float64(i)
	}
	return r
}
