package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/stats"
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
var sizeTrends = []struct {
	name string
	get  func(row) float64
}{{"tc", getTC}, {"tc_strict", getTCS}, {"arg_acc", getArg}, {"action_arg_acc", getAArg}, {"wall_s", getWall}}

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

// logistic regresses TC on level (against L4; on interface, against the
// baseline, when the trials played interfaces), log10 model size,
// quantisation bits, domain (against the first) and difficulty (against
// the first present, easy for the benchmark).
func (r *Report) logistic() *Table {
	t := &Table{Name: "logistic", Title: "Logistic regression of TC: odds ratios with 95% CIs", Header: []string{"term", "beta", "se", "odds_ratio", "or_lo", "or_hi", "p"}}
	rows := r.where(func(x row) bool { return x.params > 0 })
	if len(rows) == 0 {
		t.Note = "no model sizes in run.json (built-in agents have none)"
		return t
	}
	names := []string{"intercept"}
	var levels, ifaces, domains []string
	if len(r.Interfaces) > 0 {
		// Interfaces played: each is a term against the baseline, which
		// says more than its level does (a level's interfaces differ).
		for _, name := range r.Interfaces {
			if name != r.Baseline && slices.ContainsFunc(rows, func(x row) bool { return x.iface == name }) {
				ifaces = append(ifaces, name)
			}
		}
	} else {
		for i, l := range r.Levels {
			if i > 0 {
				levels = append(levels, string(l))
			}
		}
	}
	ds := r.domains()
	if len(ds) > 1 {
		domains = ds[1:]
	}
	for _, l := range levels {
		names = append(names, "level="+l)
	}
	for _, name := range ifaces {
		names = append(names, "interface="+name)
	}
	names = append(names, "log10_params", "quant_bits")
	for _, d := range domains {
		names = append(names, "domain="+d)
	}
	var diffs []string
	if all := r.difficulties(); len(all) > 1 {
		diffs = all[1:]
	}
	for _, d := range diffs {
		names = append(names, "difficulty="+d)
	}
	var X [][]float64
	var y []float64
	for _, x := range rows {
		v := []float64{1}
		for _, l := range levels {
			v = append(v, b2f(string(x.level) == l))
		}
		for _, name := range ifaces {
			v = append(v, b2f(x.iface == name))
		}
		v = append(v, math.Log10(x.params), QuantBits(x.quant))
		for _, d := range domains {
			v = append(v, b2f(x.domain == d))
		}
		for _, d := range diffs {
			v = append(v, b2f(x.difficulty == d))
		}
		X = append(X, v)
		y = append(y, x.tc)
	}
	cs, err := Logistic(X, y, names)
	if err != nil {
		t.Note = err.Error()
		return t
	}
	for _, c := range cs {
		t.Rows = append(t.Rows, []any{c.Name, c.Beta, c.SE, c.OR, c.ORLo, c.ORHi, c.P})
	}
	return t
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
