package report

import (
	"fmt"
	"slices"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// interfaceOrder lists the interfaces some rows played: by level, finest
// first, and within a level in the config's order (its granularities as
// written, then its interfaces), then in the order trials first show
// them.
func (r *Report) interfaceOrder(rows []row) []string {
	var cands []string
	if cfg := r.Results.Manifest.Config; cfg != nil {
		for _, s := range cfg.Played() {
			cands = append(cands, s.Name)
		}
	}
	lv := map[string]level.Level{}
	for _, x := range rows {
		if x.iface == "" {
			continue
		}
		if _, ok := lv[x.iface]; !ok {
			lv[x.iface] = x.level
		}
		cands = append(cands, x.iface)
	}
	var out []string
	for _, c := range cands {
		if _, played := lv[c]; played && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return slices.Index(level.Levels, lv[a]) - slices.Index(level.Levels, lv[b])
	})
	return out
}

// chooseBaseline is the interface asked for, or L4 when it was played,
// or the first interface.
func (r *Report) chooseBaseline(asked string) string {
	switch {
	case asked != "":
		return asked
	case slices.Contains(r.Interfaces, string(level.L4)):
		return string(level.L4)
	case len(r.Interfaces) > 0:
		return r.Interfaces[0]
	}
	return ""
}

// interfaceTests are the metrics each interface is tested on against the
// baseline, in the order of their columns; the stars of sig are TC's.
var interfaceTests = []metricTest{{"tc", getTC}, {"arg_acc", getArg}}

// byInterface is each interface's TC (with its interval), ArgAcc and what
// its tools show, and its paired bootstrap tests against the baseline over
// trials that share model, domain, scenario and repetition,
// Benjamini-Hochberg adjusted over the family of (interface, metric)
// tests, as by_level tests levels against L4.
func (r *Report) byInterface() *Table {
	header := []string{"interface", "level", "trials", "tc", "tc_lo", "tc_hi", "arg_acc", "tools", "schema_tokens", "gold_calls"}
	for _, m := range interfaceTests {
		header = append(header, "d_"+m.name, "p_"+m.name)
	}
	t := &Table{Name: "by_interface", Title: fmt.Sprintf("By interface, with paired bootstrap tests against %s (BH-adjusted p)", r.Baseline),
		Header: append(header, "sig")}
	base := map[string]row{}
	for _, x := range r.where(func(x row) bool { return x.iface == r.Baseline }) {
		base[pairKey(x)] = x
	}
	others := slices.DeleteFunc(slices.Clone(r.Interfaces), func(name string) bool { return name == r.Baseline })
	fam := r.pairedFamily("paired-interface/", others, base, pairKey, func(g string) []row { return r.where(func(x row) bool { return x.iface == g }) }, interfaceTests)
	for _, name := range r.Interfaces {
		rows := r.where(func(x row) bool { return x.iface == name })
		ci := r.tcCI("interface/"+name, rows)
		measured := slices.DeleteFunc(slices.Clone(rows), func(x row) bool { return x.imet == nil })
		line := []any{name, string(rows[0].level), len(rows), ci.Mean, ci.Lo, ci.Hi, stats.Mean(col(rows, getArg)),
			stats.Mean(col(measured, func(x row) float64 { return float64(x.imet.Tools) })),
			stats.Mean(col(measured, func(x row) float64 { return float64(x.imet.SchemaTokens) })), stats.Mean(col(rows, getGold))}
		cells, sig := fam.cells(name)
		if name == r.Baseline {
			sig = "ref"
		}
		t.Rows = append(t.Rows, append(append(line, cells...), sig))
	}
	switch {
	case len(base) == 0 && len(r.Interfaces) > 1:
		t.Note = fmt.Sprintf("the baseline %s has no trials: the interfaces cannot be tested against it (played: %s; choose one with --baseline)", r.Baseline, orNone(r.Interfaces))
		t.loud = true
	case len(base) == 0:
		t.Note = fmt.Sprintf("the baseline %s has no trials and no other interface was played to test", r.Baseline)
		t.loud = !slices.Contains(r.Interfaces, r.Baseline)
	}
	return t
}

// stars marks an adjusted p: * below 0.05, ** below 0.01, *** below
// 0.001.
func stars(p float64) string {
	switch {
	case p < 0.001:
		return "***"
	case p < 0.01:
		return "**"
	case p < 0.05:
		return "*"
	}
	return ""
}
