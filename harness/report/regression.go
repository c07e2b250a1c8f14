package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/stats"
	"gonum.org/v1/gonum/floats"
)

// This file is what model size and quantisation predict: the Spearman
// table of size against per-model means and the logistic regression of
// TC.

// sized are the models with a known size, their sizes, and their means
// of each metric the Spearman table relates to size.
func (r *Report) sized() (models []string, params []float64, means [][]float64) {
	means = make([][]float64, len(sizeTrends))
	for _, m := range r.Models {
		rows := r.where(func(x row) bool { return x.model == m })
		if rows[0].params <= 0 {
			continue
		}
		models = append(models, m)
		params = append(params, rows[0].params)
		for i, c := range sizeTrends {
			means[i] = append(means[i], stats.Mean(col(rows, c.get)))
		}
	}
	return
}

// sizeTrends are the per-model means Spearman relates to model size.
var sizeTrends = []term{{"tc", getTC}, {"tc_strict", getTCS}, {"arg_acc", getArg}, {"action_arg_acc", getAArg}, {"wall_s", getWall}}

func (r *Report) spearman() *Table {
	t := &Table{Name: "spearman", Title: "Spearman correlation of model size with per-model means", Header: []string{"metric", "models", "rho", "p"}}
	models, params, means := r.sized()
	for i, c := range sizeTrends {
		rho, p, err := Spearman(params, means[i])
		if err != nil {
			t.Note = fmt.Sprintf("needs at least 3 models with a size in run.json, found %d", len(models))
			t.Rows = nil
			return t
		}
		t.Rows = append(t.Rows, []any{c.name, len(models), rho, p})
	}
	return t
}

// term is a predictor of a logistic model: its name in the table and
// its value for a trial.
type term struct {
	name string
	get  func(row) float64
}

// indicator is the term that is 1 for the trials keep keeps.
func indicator(name string, keep func(row) bool) term {
	return term{name, func(x row) float64 { return b2f(keep(x)) }}
}

// logistic regresses TC on level (against L4; on interface, against the
// baseline, when the trials played interfaces), log10 model size,
// quantisation bits, domain (against the first) and difficulty (against
// the first present, easy for the benchmark). A run under fault settings
// adds the trials played under them and, last, the fault terms
// (faultTerms); where a term then separates the outcome the maximum
// likelihood has no estimate, and the fit is RidgeCoefs'.
func (r *Report) logistic() *Table {
	t := &Table{Name: "logistic", Title: "Logistic regression of TC: odds ratios with 95% CIs", Header: []string{"term", "beta", "se", "odds_ratio", "or_lo", "or_hi", "p"}}
	all := r.rows
	if len(r.faulted) > 0 {
		all = append(slices.Clone(r.rows), r.faulted...)
	}
	rows := slices.DeleteFunc(slices.Clone(all), func(x row) bool { return x.params <= 0 })
	if len(rows) == 0 {
		t.Note = "no model sizes in run.json (built-in agents have none)"
		return t
	}
	// places are the level terms or, when interfaces were played, the
	// interface terms: each says more than its level does (a level's
	// interfaces differ).
	var places []term
	if len(r.Interfaces) > 0 {
		for _, name := range r.interfaceOrder(all) {
			if name != r.Baseline && slices.ContainsFunc(rows, func(x row) bool { return x.iface == name }) {
				places = append(places, indicator("interface="+name, func(x row) bool { return x.iface == name }))
			}
		}
	} else {
		for i, l := range levelsOf(all) {
			if i > 0 {
				places = append(places, indicator("level="+string(l), func(x row) bool { return x.level == l }))
			}
		}
	}
	terms := append([]term{{"intercept", func(row) float64 { return 1 }}}, places...)
	terms = append(terms, term{"log10_params", func(x row) float64 { return math.Log10(x.params) }}, term{"quant_bits", func(x row) float64 { return QuantBits(x.quant) }})
	if ds := domainsOf(all); len(ds) > 1 {
		for _, d := range ds[1:] {
			terms = append(terms, indicator("domain="+d, func(x row) bool { return x.domain == d }))
		}
	}
	if ds := difficultiesOf(all); len(ds) > 1 {
		for _, d := range ds[1:] {
			terms = append(terms, indicator("difficulty="+d, func(x row) bool { return x.difficulty == d }))
		}
	}
	var notes []string
	if len(r.faulted) > 0 {
		var kept []term
		kept, notes = r.faultTerms(rows, terms, places)
		terms = append(terms, kept...)
	}
	names := make([]string, len(terms))
	for j, tm := range terms {
		names[j] = tm.name
	}
	X, y := make([][]float64, len(rows)), make([]float64, len(rows))
	for i, x := range rows {
		X[i] = make([]float64, len(terms))
		for j, tm := range terms {
			X[i][j] = tm.get(x)
		}
		y[i] = x.tc
	}
	cs, err := Logistic(X, y, names)
	if len(r.faulted) > 0 {
		// A run without faults keeps the maximum-likelihood table it always
		// had; under faults a setting that fails every trial at an
		// interface is a finding, not a reason to print no table.
		if why := separation(X, y, names, cs, err); why != "" {
			cs, err = RidgeCoefs(X, y, names, RidgeLambda)
			notes = append(notes, fmt.Sprintf("%s, so the maximum likelihood has no finite estimate: fitted by ridge logistic (λ = %g, a normal prior of SD 1 on each term, the intercept unpenalised) with standard errors from the penalised information", why, RidgeLambda))
		}
		under := 0
		for _, x := range rows {
			if x.faults != "" {
				under++
			}
		}
		notes = append(notes, fmt.Sprintf("%d trials, %d of them under fault settings", len(rows), under))
		t.Note = strings.Join(notes, "; ")
	}
	if err != nil {
		t.Note = strings.Join(append(notes, err.Error()), "; ")
		return t
	}
	for _, c := range cs {
		t.Rows = append(t.Rows, []any{c.Name, c.Beta, c.SE, c.OR, c.ORLo, c.ORHi, c.P})
	}
	return t
}

// faultTerms are the logistic model's terms under faults: an indicator
// per fault setting (against the trials without faults), then the
// interaction of each setting with each place term (level or interface),
// which says how much more the setting lowers the log-odds of TC there
// than at the reference level or baseline interface: whether a coarse
// interface recovers as well as a fine one. A term that is constant over
// the trials, or that the terms before it already span (a setting played
// at one level only), is left out, and the notes say which and why.
func (r *Report) faultTerms(rows []row, base, places []term) (kept []term, notes []string) {
	var cands []term
	for _, s := range r.faultSettings() {
		cands = append(cands, indicator("faults="+s, func(x row) bool { return x.faults == s }))
	}
	for _, s := range r.faultSettings() {
		for _, p := range places {
			cands = append(cands, term{"faults=" + s + ":" + p.name, func(x row) float64 { return b2f(x.faults == s) * p.get(x) }})
		}
	}
	var sp span
	var cols [][]float64
	var named []string
	column := func(tm term) []float64 {
		v := make([]float64, len(rows))
		for i, x := range rows {
			v[i] = tm.get(x)
		}
		return v
	}
	for _, tm := range base {
		v := column(tm)
		sp.add(v)
		cols, named = append(cols, v), append(named, tm.name)
	}
	var dropped []string
	for _, tm := range cands {
		v := column(tm)
		switch same := slices.IndexFunc(cols, func(c []float64) bool { return slices.Equal(c, v) }); {
		case !slices.ContainsFunc(v, func(f float64) bool { return f != v[0] }):
			dropped = append(dropped, fmt.Sprintf("%s (%s trial with a model size played under it)", tm.name, map[bool]string{true: "no", false: "every"}[v[0] == 0]))
		case same >= 0:
			dropped = append(dropped, fmt.Sprintf("%s (the same trials as %s)", tm.name, named[same]))
		case !sp.add(v):
			dropped = append(dropped, tm.name+" (a combination of the terms before it)")
		default:
			kept = append(kept, tm)
			cols, named = append(cols, v), append(named, tm.name)
		}
	}
	if len(dropped) > 0 {
		notes = append(notes, "left out: "+strings.Join(dropped, ", "))
	}
	return kept, notes
}

// span is an orthonormal basis of the columns added to it, to tell a
// column that the ones before it already give.
type span struct{ basis [][]float64 }

// add puts v into the span and reports whether it was new: whether what
// is left of v after projecting out the basis is more than rounding.
func (s *span) add(v []float64) bool {
	w := slices.Clone(v)
	// Projecting twice keeps Gram-Schmidt's result orthogonal in floating
	// point.
	for range 2 {
		for _, b := range s.basis {
			d := floats.Dot(w, b)
			floats.AddScaled(w, -d, b)
		}
	}
	norm, orig := floats.Norm(w, 2), floats.Norm(v, 2)
	if !(norm > 1e-8*orig) {
		return false
	}
	floats.Scale(1/norm, w)
	s.basis = append(s.basis, w)
	return true
}

// separation says why a logistic fit has no finite maximum-likelihood
// estimate, or "": it failed, or some trial's fitted probability is within
// 1e-6 of 0 or 1, where the likelihood still rises as a coefficient runs
// off. It names the indicator terms whose trials all had one outcome.
func separation(X [][]float64, y []float64, names []string, cs []Coef, err error) string {
	if err == nil && !slices.ContainsFunc(X, func(v []float64) bool {
		z := 0.0
		for j, c := range cs {
			z += v[j] * c.Beta
		}
		p := sigmoid(z)
		return p < 1e-6 || p > 1-1e-6
	}) {
		return ""
	}
	var by []string
	for j := 1; j < len(names); j++ {
		outcome, binary := map[float64]bool{}, true
		for i, v := range X {
			binary = binary && (v[j] == 0 || v[j] == 1)
			if v[j] == 1 {
				outcome[y[i]] = true
			}
		}
		if binary && len(outcome) == 1 {
			word := "failed"
			if outcome[1] {
				word = "completed"
			}
			by = append(by, fmt.Sprintf("every trial of %s %s", names[j], word))
		}
	}
	if len(by) == 0 {
		if err != nil {
			return "the maximum-likelihood fit failed (" + err.Error() + ")"
		}
		return "the terms together separate the outcome"
	}
	return strings.Join(by, ", ")
}

// QuantBits reads the bits per weight of an Ollama quantisation level
// (Q4_K_M: 4, Q8_0: 8, F16: 16, MXFP4: 4); 16 when unknown.
func QuantBits(q string) float64 {
	q = strings.ToUpper(q)
	for _, p := range []string{"MXFP", "IQ", "Q", "BF", "F"} {
		if i := strings.Index(q, p); i >= 0 {
			n := 0
			for _, c := range q[i+len(p):] {
				if c < '0' || c > '9' {
					break
				}
				n = n*10 + int(c-'0')
			}
			if n > 0 {
				return float64(n)
			}
		}
	}
	return 16
}
