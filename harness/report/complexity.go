package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/mcpgranite/granite/internal/stats"
	"github.com/mcpgranite/granite/internal/surface"
)

// RidgeLambda is the L2 penalty of the complexity model: it minimises the
// summed negative log-likelihood plus RidgeLambda/2 times the sum of the
// squared coefficients of the standardized predictors, the intercept
// unpenalised. That is the posterior mode under a normal prior of SD 1 on
// each effect per SD, which is weak beside hundreds of trials yet keeps
// the fit estimable: the metrics are collinear (schema tokens, bytes and
// description characters grow together; an interface's tools and its
// actions per tool trade off), and unpenalised their separate effects are
// not identified; the penalty shares an effect among collinear terms.
const RidgeLambda = 1.0

// ComplexityResamples is the number of bootstrap refits behind each
// complexity coefficient's interval.
const ComplexityResamples = 300

// complexityTerms are the interface metrics the complexity model regresses
// on, as the tables name them.
var complexityTerms = []struct {
	name string
	get  func(*surface.Metrics) float64
}{
	{"tools", func(m *surface.Metrics) float64 { return float64(m.Tools) }},
	{"schema_tokens", func(m *surface.Metrics) float64 { return float64(m.SchemaTokens) }},
	{"args_max", func(m *surface.Metrics) float64 { return float64(m.ArgsMax) }},
	{"args_mean", func(m *surface.Metrics) float64 { return m.ArgsMean }},
	{"actions_max", func(m *surface.Metrics) float64 { return float64(m.ActionsMax) }},
	{"enum_max", func(m *surface.Metrics) float64 { return float64(m.EnumMax) }},
	{"depth", func(m *surface.Metrics) float64 { return float64(m.Depth) }},
	{"description_chars", func(m *surface.Metrics) float64 { return float64(m.DescriptionChars) }},
	{"schema_only_share", func(m *surface.Metrics) float64 { return m.SchemaOnly }},
	{"dropped_keywords", func(m *surface.Metrics) float64 { return float64(m.Dropped) }},
}

// sizeTerm is the model-size predictor's name, goldTerm the gold calls
// per task's.
const (
	sizeTerm = "log10_params"
	goldTerm = "gold_calls"
)

// complexityData is the material of a complexity model: the trials whose
// interface run.json measured, grouped into cells of equal predictors (a
// domain's interface and a model), since the likelihood only needs each
// cell's trials and outcome sum.
type complexityData struct {
	// terms are the predictors kept, sd their standard deviation over the
	// trials before standardizing.
	terms []string
	sd    []float64
	// X holds each cell's predictors: 1, then z-scores.
	X [][]float64
	// cell, y and iface are each trial's cell, outcome and interface.
	cell  []int
	y     []float64
	iface []string
	// notes say what was left out, and why.
	notes []string
}

// complexityData gathers the trials with measured interfaces and a known
// outcome, drops predictors that do not vary over them (they would only
// alias the intercept) and standardizes the rest. why is set when no
// model can be fit.
func (r *Report) complexityData(outcome func(row) float64) (d *complexityData, why string) {
	rows := r.where(func(x row) bool { return x.imet != nil && x.iface != "" && !math.IsNaN(outcome(x)) })
	if len(rows) == 0 {
		return nil, "run.json measures no interface the trials played (runs before interfaces were measured have none)"
	}
	var measured []string
	for _, x := range rows {
		if !slices.Contains(measured, x.iface) {
			measured = append(measured, x.iface)
		}
	}
	if len(measured) < 2 {
		return nil, fmt.Sprintf("needs at least 2 interfaces with measured metrics to compare, found %d (%s)", len(measured), orNone(measured))
	}
	if unknown := len(r.where(func(x row) bool { return x.imet == nil && x.iface != "" })); unknown > 0 {
		d = &complexityData{notes: []string{fmt.Sprintf("%d %s of interfaces run.json does not measure left out", unknown, plural(unknown, "trial", "trials"))}}
	} else {
		d = &complexityData{}
	}
	names := make([]string, 0, len(complexityTerms)+1)
	gets := make([]func(row) float64, 0, len(complexityTerms)+1)
	for _, c := range complexityTerms {
		names = append(names, c.name)
		gets = append(gets, func(x row) float64 { return c.get(x.imet) })
	}
	// Gold calls per task are a property of an interface on a domain too
	// (its composition's): each cell takes the mean over its domain's
	// trials at its interface.
	if !slices.ContainsFunc(rows, func(x row) bool { return math.IsNaN(x.gold) }) {
		type at struct{ domain, iface string }
		sum, n := map[at]float64{}, map[at]float64{}
		for _, x := range rows {
			sum[at{x.domain, x.iface}] += x.gold
			n[at{x.domain, x.iface}]++
		}
		names = append(names, goldTerm)
		gets = append(gets, func(x row) float64 { k := at{x.domain, x.iface}; return sum[k] / n[k] })
	} else {
		d.notes = append(d.notes, "gold calls left out: some records predate gold_calls")
	}
	if !slices.ContainsFunc(rows, func(x row) bool { return x.params <= 0 }) {
		names = append(names, sizeTerm)
		gets = append(gets, func(x row) float64 { return math.Log10(x.params) })
	} else {
		d.notes = append(d.notes, "model size left out: some trials' models have no size in run.json")
	}
	var dropped []string
	var keep []int
	var means []float64
	for j, g := range gets {
		v := col(rows, g)
		m, sd := stat.MeanStdDev(v, nil)
		if !(sd > 1e-9*math.Max(1, math.Abs(m))) {
			dropped = append(dropped, names[j])
			continue
		}
		keep = append(keep, j)
		means = append(means, m)
		d.terms = append(d.terms, names[j])
		d.sd = append(d.sd, sd)
	}
	if len(dropped) > 0 {
		d.notes = append(d.notes, "left out as they do not vary over the trials: "+strings.Join(dropped, ", "))
	}
	if !slices.ContainsFunc(d.terms, func(n string) bool { return n != sizeTerm }) {
		return nil, "no interface metric varies over the trials with measured interfaces, so there is nothing to regress on (play interfaces that differ)"
	}
	cells := map[string]int{}
	for _, x := range rows {
		k := x.domain + "\x00" + x.iface + "\x00" + x.model
		c, ok := cells[k]
		if !ok {
			c = len(d.X)
			cells[k] = c
			v := []float64{1}
			for i, j := range keep {
				v = append(v, (gets[j](x)-means[i])/d.sd[i])
			}
			d.X = append(d.X, v)
		}
		d.cell = append(d.cell, c)
		d.y = append(d.y, outcome(x))
		d.iface = append(d.iface, x.iface)
	}
	if m := stats.Mean(d.y); m <= 0 || m >= 1 {
		return nil, fmt.Sprintf("the outcome is %g in every trial with a measured interface: nothing to explain", m)
	}
	return d, ""
}

// counts are the trials and outcome sums of each cell over the trials
// keep keeps (nil: all).
func (d *complexityData) counts(keep func(i int) bool) (n, s []float64) {
	n, s = make([]float64, len(d.X)), make([]float64, len(d.X))
	for i, c := range d.cell {
		if keep == nil || keep(i) {
			n[c]++
			s[c] += d.y[i]
		}
	}
	return n, s
}

// RidgeLogistic fits P(y=1) = σ(Xβ) to cells of trials: cell c has X[c]
// as its predictors (X[c][0] the intercept's 1), n[c] trials and s[c] as
// the sum of their outcomes, which may be fractions (a fractional logit:
// the same likelihood, y in [0, 1]). It minimises the negative
// log-likelihood plus lambda/2 ‖β‖², the intercept unpenalised, by Newton
// steps halved until the objective falls; start (nil: zeros) seeds it.
func RidgeLogistic(X [][]float64, n, s []float64, lambda float64, start []float64) ([]float64, error) {
	if len(X) == 0 {
		return nil, errors.New("no cells to fit")
	}
	k := len(X[0])
	beta := make([]float64, k)
	copy(beta, start)
	z := func(x, b []float64) float64 {
		v := 0.0
		for j, xj := range x {
			v += xj * b[j]
		}
		return v
	}
	obj := func(b []float64) float64 {
		f := 0.0
		for c, x := range X {
			if n[c] > 0 {
				zc := z(x, b)
				f += n[c]*softplus(zc) - s[c]*zc
			}
		}
		for j := 1; j < k; j++ {
			f += lambda / 2 * b[j] * b[j]
		}
		return f
	}
	f := obj(beta)
	step := mat.NewVecDense(k, nil)
	grad := make([]float64, k)
	hess := make([]float64, k*k) // row-major; the upper triangle is filled
	for range 100 {
		clear(grad)
		clear(hess)
		for c, x := range X {
			if n[c] == 0 {
				continue
			}
			p := sigmoid(z(x, beta))
			d, w := n[c]*p-s[c], n[c]*p*(1-p)
			for a, xa := range x {
				grad[a] += d * xa
				row := hess[a*k:]
				for b := a; b < k; b++ {
					row[b] += w * xa * x[b]
				}
			}
		}
		for j := 1; j < k; j++ {
			grad[j] += lambda * beta[j]
			hess[j*k+j] += lambda
		}
		// A resample whose trials all succeed (or all fail) drives the
		// intercept off to infinity; a little curvature keeps the step
		// finite and the halving stops it.
		hess[0] += 1e-9
		H := mat.NewSymDense(k, hess)
		g := mat.NewVecDense(k, grad)
		var chol mat.Cholesky
		if !chol.Factorize(H) {
			return nil, errors.New("the ridge model's curvature is not positive definite")
		}
		if err := chol.SolveVecTo(step, g); err != nil {
			return nil, err
		}
		t := 1.0
		cand := make([]float64, k)
		moved := false
		for range 40 {
			for j := range k {
				cand[j] = beta[j] - t*step.AtVec(j)
			}
			if fc := obj(cand); fc <= f+1e-12*math.Abs(f) {
				f, moved = fc, true
				break
			}
			t /= 2
		}
		if !moved {
			break
		}
		size := 0.0
		for j := range k {
			size = math.Max(size, math.Abs(cand[j]-beta[j]))
		}
		copy(beta, cand)
		if size < 1e-9 {
			break
		}
	}
	return beta, nil
}

// predict is the mean fitted probability over the trials keep keeps.
func (d *complexityData) predict(beta []float64, keep func(i int) bool) float64 {
	p := make([]float64, len(d.X))
	for c, x := range d.X {
		v := 0.0
		for j, xj := range x {
			v += xj * beta[j]
		}
		p[c] = sigmoid(v)
	}
	sum, n := 0.0, 0
	for i, c := range d.cell {
		if keep(i) {
			sum += p[c]
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func (r *Report) complexityTC() *Table {
	return r.complexity("complexity", "TC", getTC)
}

func (r *Report) complexityArgAcc() *Table {
	return r.complexity("complexity_argacc", "ArgAcc", getArg)
}

// complexity regresses an outcome on the interface metrics (and model
// size) by RidgeLogistic on z-scores, so that each effect is per SD of
// its metric and the effects compare: rank orders them by |β|. Intervals
// are percentile intervals of ComplexityResamples refits on trials
// resampled with replacement, seeded from the report's seed; they hold
// the interfaces played fixed, so they say how well these trials pin the
// effects, not how they would be on other interfaces.
func (r *Report) complexity(name, outcome string, get func(row) float64) *Table {
	t := &Table{Name: name, Title: fmt.Sprintf("Complexity model of %s: ridge logistic (λ = %g) on standardized interface metrics, effects per SD with 95%% bootstrap CIs", outcome, RidgeLambda),
		Header: []string{"term", "rank", "sd", "beta", "beta_lo", "beta_hi", "odds_ratio", "or_lo", "or_hi"}}
	d, why := r.complexityData(get)
	if d == nil {
		t.Note = why
		return t
	}
	n, s := d.counts(nil)
	beta, err := RidgeLogistic(d.X, n, s, RidgeLambda, nil)
	if err != nil {
		t.Note = err.Error()
		return t
	}
	k := len(beta)
	boot := make([][]float64, k)
	rng := stats.RNG(r.seed, "complexity/"+name)
	N := len(d.cell)
	for range ComplexityResamples {
		bn, bs := make([]float64, len(d.X)), make([]float64, len(d.X))
		for range N {
			i := rng.IntN(N)
			bn[d.cell[i]]++
			bs[d.cell[i]] += d.y[i]
		}
		b, err := RidgeLogistic(d.X, bn, bs, RidgeLambda, beta)
		if err != nil {
			continue
		}
		for j := range k {
			boot[j] = append(boot[j], b[j])
		}
	}
	// No refit converged: no interval (stats.Quantile of nothing is NaN).
	interval := func(j int) (lo, hi float64) {
		v := slices.Sorted(slices.Values(boot[j]))
		return stats.Quantile(v, 0.025), stats.Quantile(v, 0.975)
	}
	order := make([]int, 0, k-1)
	for j := 1; j < k; j++ {
		order = append(order, j)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(beta[b]), math.Abs(beta[a])) })
	for rank, j := range order {
		lo, hi := interval(j)
		t.Rows = append(t.Rows, []any{d.terms[j-1], rank + 1, d.sd[j-1], beta[j], lo, hi, math.Exp(beta[j]), math.Exp(lo), math.Exp(hi)})
	}
	lo, hi := interval(0)
	t.Rows = append(t.Rows, []any{"intercept", "", math.NaN(), beta[0], lo, hi, math.Exp(beta[0]), math.Exp(lo), math.Exp(hi)})
	t.Note = strings.Join(append(d.notes, fmt.Sprintf("%d trials in %d cells of interface, domain and model; intervals resample trials with the interfaces held fixed", N, len(d.X))), "; ")
	return t
}

// interfaceFit sets each interface's observed TC beside the complexity
// model's: fit on every trial, and refit without the interface's trials
// to predict them (held out), so that the model's error on an interface
// it has not seen shows.
func (r *Report) interfaceFit() *Table {
	t := &Table{Name: "interface_fit", Title: "Complexity model of TC by interface: observed, fitted, and predicted with the interface held out",
		Header: []string{"interface", "level", "trials", "tc", "predicted_tc", "heldout_tc", "heldout_error"}}
	d, why := r.complexityData(getTC)
	if d == nil {
		t.Note = why
		return t
	}
	var ifaces []string
	for _, name := range r.Interfaces {
		if slices.Contains(d.iface, name) {
			ifaces = append(ifaces, name)
		}
	}
	if len(ifaces) < 3 {
		t.Note = fmt.Sprintf("needs at least 3 interfaces with measured metrics to hold one out, found %d", len(ifaces))
		return t
	}
	n, s := d.counts(nil)
	full, err := RidgeLogistic(d.X, n, s, RidgeLambda, nil)
	if err != nil {
		t.Note = err.Error()
		return t
	}
	var errs []float64
	for _, name := range ifaces {
		in := func(i int) bool { return d.iface[i] == name }
		hn, hs := d.counts(func(i int) bool { return !in(i) })
		held, err := RidgeLogistic(d.X, hn, hs, RidgeLambda, full)
		ho := math.NaN()
		if err == nil {
			ho = d.predict(held, in)
		}
		var obs []float64
		for i := range d.y {
			if in(i) {
				obs = append(obs, d.y[i])
			}
		}
		lv := r.where(func(x row) bool { return x.iface == name })[0].level
		tc := stats.Mean(obs)
		t.Rows = append(t.Rows, []any{name, string(lv), len(obs), tc, d.predict(full, in), ho, ho - tc})
		errs = append(errs, math.Abs(ho-tc))
	}
	t.Note = fmt.Sprintf("mean absolute held-out error %.3f over %d interfaces", stats.Mean(errs), len(errs))
	return t
}
