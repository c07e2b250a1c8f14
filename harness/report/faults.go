package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the tables under faults (docs/faults.md): each fault
// setting's trials by interface and by model, with TC, the faults met and
// recovered, and the paired test of TC against the same interface's
// trials without faults. Every other table but the logistic regression
// (regression.go, which adds fault terms) is over the trials without
// faults, so that a run without faults reports as before.

// Names of the tables under faults, and the heading report.md puts them
// under.
const (
	FaultsTable      = "by_faults"
	FaultsModelTable = "by_faults_model"
	faultsHeading    = "Under faults"
)

// isFaultTable tells the tables under faults, which report.md puts under
// their own heading.
func isFaultTable(t *Table) bool { return t.Name == FaultsTable || t.Name == FaultsModelTable }

// faultTests is what the fault tables test against no faults.
var faultTests = []metricTest{{"tc", getTC}}

// faultHeader are the columns of a fault table after its leading ones.
var faultHeader = []string{"trials", "tc", "tc_lo", "tc_hi", "faults_per_trial", "recovery_rate", "false_claims_per_trial", "d_tc", "p_tc", "sig"}

// noFaults names the trials without faults in the fault tables: the
// config's setting of rate 0, or "none" when it has none.
func (r *Report) noFaults() string {
	if cfg := r.Results.Manifest.Config; cfg != nil {
		for _, f := range cfg.Faults {
			if f.None() {
				return f.Name
			}
		}
	}
	return "none"
}

// faultSettings are the settings that inject faults and have trials, in
// the config's order, then (a run.json without its config) in the order
// their trials came.
func (r *Report) faultSettings() []string {
	var out []string
	if cfg := r.Results.Manifest.Config; cfg != nil {
		for _, f := range cfg.Faults {
			if !f.None() && slices.ContainsFunc(r.faulted, func(x row) bool { return x.faults == f.Name }) {
				out = append(out, f.Name)
			}
		}
	}
	for _, x := range r.faulted {
		if !slices.Contains(out, x.faults) {
			out = append(out, x.faults)
		}
	}
	return out
}

// faultGrouping is one fault table's grouping of trials: the group of a
// row, the groups in their order, the leading header after the setting,
// the leading cells of a group and the label of the interval of its
// trials without faults (the one the other tables give the same trials).
type faultGrouping struct {
	key    func(row) string
	groups []string
	header []string
	cells  func(group string, rows []row) []any
	plain  func(group string) string
}

// byFaults is each fault setting's TC by interface (or level, when the
// report has no interface tables), against the same interface's trials
// without faults.
func (r *Report) byFaults() *Table {
	all := append(slices.Clone(r.rows), r.faulted...)
	g := faultGrouping{key: func(x row) string { return x.iface }, groups: r.interfaceOrder(all)}
	if r.Interfaces != nil {
		g.header = []string{"interface", "level"}
		g.cells = func(name string, rows []row) []any { return []any{name, string(rows[0].level)} }
		g.plain = func(name string) string { return "interface/" + name }
	} else {
		// Every interface is a level as written: the level names it, as
		// in by_level.
		g.header = []string{"level"}
		g.cells = func(name string, _ []row) []any { return []any{name} }
		g.plain = func(name string) string { return "level/" + name }
	}
	return r.faultTable(FaultsTable, "By fault setting and "+g.header[0], g)
}

// byFaultsModel is each fault setting's TC by model, against the same
// model's trials without faults on the same interfaces.
func (r *Report) byFaultsModel() *Table {
	var models []string
	if cfg := r.Results.Manifest.Config; cfg != nil {
		models = cfg.ModelNames()
	}
	for _, x := range append(slices.Clone(r.rows), r.faulted...) {
		models = append(models, x.model)
	}
	var present []string
	for _, m := range models {
		if !slices.Contains(present, m) && slices.ContainsFunc(r.faulted, func(x row) bool { return x.model == m }) {
			present = append(present, m)
		}
	}
	return r.faultTable(FaultsModelTable, "By fault setting and model", faultGrouping{
		key: func(x row) string { return x.model }, groups: present, header: []string{"model"},
		cells: func(m string, _ []row) []any { return []any{m} }, plain: ModelLabel})
}

// faultTable lists, for the trials without faults and then each setting
// that injects faults, every group's trials, TC with its interval, the
// faults injected per trial, the share of them recovered (summed over the
// group's trials), and the mean paired difference of TC against the same
// group's trials without faults over trials that share model, domain,
// scenario, interface and repetition, by paired bootstrap,
// Benjamini-Hochberg adjusted over the table's tests.
func (r *Report) faultTable(name, title string, g faultGrouping) *Table {
	none := r.noFaults()
	t := &Table{Name: name, Title: fmt.Sprintf("%s, with paired bootstrap tests of TC against %s (BH-adjusted p)", title, none),
		Header: append(append([]string{"faults"}, g.header...), faultHeader...)}
	settings := r.faultSettings()
	rowsOf := func(setting, group string) []row {
		from := r.faulted
		if setting == none {
			from = r.rows
		}
		var out []row
		for _, x := range from {
			if (setting == none || x.faults == setting) && g.key(x) == group {
				out = append(out, x)
			}
		}
		return out
	}
	ref := map[string]row{}
	for _, x := range r.rows {
		ref[withinInterface(x)] = x
	}
	var tested []string
	for _, s := range settings {
		for _, grp := range g.groups {
			tested = append(tested, s+"/"+grp)
		}
	}
	fam := r.pairedFamily("paired-"+name+"/", tested, ref, withinInterface, func(key string) []row {
		i := slices.Index(tested, key)
		return rowsOf(settings[i/len(g.groups)], g.groups[i%len(g.groups)])
	}, faultTests)
	for _, s := range append([]string{none}, settings...) {
		for _, grp := range g.groups {
			rows := rowsOf(s, grp)
			if len(rows) == 0 {
				continue
			}
			label := g.plain(grp)
			if s != none {
				label = "faults/" + name + "/" + s + "/" + grp
			}
			ci := r.tcCI(label, rows)
			injected, recovered := 0.0, 0.0
			for _, x := range rows {
				if !math.IsNaN(x.recovered) { // recovery judged
					injected += x.injected
					recovered += x.recovered
				}
			}
			recovery := math.NaN()
			if injected > 0 {
				recovery = recovered / injected
			}
			line := append(append([]any{s}, g.cells(grp, rows)...), len(rows), ci.Mean, ci.Lo, ci.Hi,
				stats.Mean(col(rows, func(x row) float64 { return x.injected })), recovery, stats.Mean(col(rows, func(x row) float64 { return x.falseClaims })))
			cells, sig := fam.cells(s + "/" + grp)
			if s == none {
				sig = "ref"
			}
			t.Rows = append(t.Rows, append(append(line, cells...), sig))
		}
	}
	if len(r.rows) == 0 {
		t.Note = fmt.Sprintf("no trial played without faults: the settings cannot be tested against %s", none)
		t.loud = true
	}
	return t
}

// faultsIntro is what report.md says above the tables under faults.
func (r *Report) faultsIntro() string {
	return "## " + faultsHeading + "\n\n" +
		"The tables above are over the trials without faults, but for the logistic regression, which adds the trials under faults with a term per setting (against no faults) and its interaction with each level or interface term (how much more the setting lowers the log-odds of TC there than at the reference); " +
		"these give the trials played under each fault setting of the config (docs/faults.md), " +
		fmt.Sprintf("with the trials without faults as the reference row `%s`. ", r.noFaults()) +
		"faults_per_trial is the mean of metrics.faults_injected, recovery_rate the sum of metrics.faults_recovered over the sum of metrics.faults_injected of the row's trials (– when none was injected), false_claims_per_trial the mean of metrics.false_claims (what the answer says is done that the final store does not hold); " +
		"d_tc is the mean paired difference of TC against the same interface without faults over trials sharing model, domain, scenario and repetition, " +
		"and p_tc its paired bootstrap p, Benjamini-Hochberg adjusted over the table's tests. trials.csv lists every trial, with its setting, faults injected and recovered and false claims in its last columns; tc_faults and recovery_faults draw the by_faults table.\n\n"
}
