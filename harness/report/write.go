package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/stats"
)

// Write puts the report into out: report.md, one CSV per table,
// trials.csv (one row per scored trial, the tables' raw material) and the
// plots as SVG and PNG. It returns the files written.
func (r *Report) Write(out string) ([]string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := results.RealDir(out); err != nil {
		return nil, err
	}
	var files []string
	for _, t := range r.Tables {
		f := filepath.Join(out, t.Name+".csv")
		if err := writeCSV(f, t.Header, t.Rows); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	f := filepath.Join(out, "trials.csv")
	header, rows := r.trialTable()
	if err := writeCSV(f, header, rows); err != nil {
		return nil, err
	}
	files = append(files, f)
	plots, notes, err := r.plots(out)
	if err != nil {
		return nil, err
	}
	files = append(files, plots...)
	md := filepath.Join(out, "report.md")
	if err := results.WriteFile(out, "report.md", []byte(r.markdown(plots, notes, out))); err != nil {
		return nil, err
	}
	return append(files, md), nil
}

// trialHeader: trial_id and error_class join a row back to its record in
// trials.jsonl.
var trialHeader = []string{"trial_id", "model", "level", "domain", "scenario", "difficulty", "repetition", "tc", "tc_strict", "f1", "action_f1", "arg_acc", "action_arg_acc",
	"wall_s", "tool_calls", "zero_tool_call", "error", "error_class", "timeout", "redundant_rate", "prompt_tokens", "completion_tokens", "energy_j", "params", "quantization"}

// trialFaultHeader are the columns trials.csv adds, after trialHeader's,
// when the run played fault settings: the setting (the one of rate 0,
// or none, for the trials without faults) and the trial's
// metrics.faults_injected, metrics.faults_recovered and
// metrics.false_claims.
var trialFaultHeader = []string{"faults", "faults_injected", "faults_recovered", "false_claims"}

// trialTable is trials.csv: every scored trial, those without faults
// first; a run under fault settings adds its trials under them and the
// fault columns, so that a run without faults keeps its columns.
func (r *Report) trialTable() (header []string, rows [][]any) {
	header = trialHeader
	all := r.rows
	if len(r.faulted) > 0 {
		header = append(slices.Clone(trialHeader), trialFaultHeader...)
		all = append(slices.Clone(r.rows), r.faulted...)
	}
	none := r.noFaults()
	rows = make([][]any, 0, len(all))
	for _, x := range all {
		line := []any{x.id, x.model, string(x.level), x.domain, x.scenario, x.difficulty, x.rep, x.tc, x.tcs, x.f1, x.af1, x.arg, x.aarg,
			x.wall, x.calls, x.zero, x.err, x.errClass, x.timeout, x.redundant, x.ptok, x.ctok, x.energy, x.params, x.quant}
		if len(r.faulted) > 0 {
			setting := x.faults
			if setting == "" {
				setting = none
			}
			var recovered any = x.recovered // empty where not judged
			if !math.IsNaN(x.recovered) {
				recovered = int(x.recovered)
			}
			line = append(line, setting, int(x.injected), recovered, int(x.falseClaims))
		}
		rows = append(rows, line)
	}
	return header, rows
}

func writeCSV(path string, header []string, rows [][]any) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(header); err != nil {
		return err
	}
	for _, row := range rows {
		rec := make([]string, len(row))
		for i, v := range row {
			rec[i] = csvCell(v)
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return results.WriteFile(filepath.Dir(path), filepath.Base(path), b.Bytes())
}

// csvCell writes numbers in full precision; not-available is empty. A
// name (a model's, a scenario's) is escaped as in the Markdown tables, so
// that a file read in a terminal or a spreadsheet moves no cursor.
func csvCell(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case marked:
		return csvCell(x.v)
	default:
		return oneline.Escape(fmt.Sprint(x))
	}
}

// mdCell writes numbers for reading: 3 decimals, "–" when not available.
func mdCell(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return "–"
		case x != 0 && math.Abs(x) < 0.001:
			return strconv.FormatFloat(x, 'e', 1, 64)
		case math.Abs(x) >= 1000:
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'f', 3, 64)
	case bool:
		if x {
			return "yes"
		}
		return ""
	case marked:
		if math.IsNaN(x.v) {
			return mdCell(x.v)
		}
		return mdCell(x.v) + x.mark
	default:
		return strings.ReplaceAll(oneline.Escape(fmt.Sprint(x)), "|", `\|`)
	}
}

func (r *Report) markdown(plots, notes []string, out string) string {
	var b strings.Builder
	m := r.Results.Manifest
	fmt.Fprintf(&b, "# granite report: %s\n\n", oneline.Escape(m.Experiment))
	cover := fmt.Sprintf("This report covers **%d of %d** planned trials", r.Covered, r.Planned)
	switch {
	case r.Covered > r.Planned:
		// A share above 100% would read as a finished run; the notes say why.
		cover = fmt.Sprintf("This report covers **%d** trials, **more than the %d planned** (see the notes)", r.Covered, r.Planned)
	case r.Planned > 0:
		cover += fmt.Sprintf(" (%.1f%%)", 100*float64(r.Covered)/float64(r.Planned))
	}
	switch {
	case strings.HasPrefix(m.Shard, "merged "):
		cover += " of the merged shards " + oneline.Escape(strings.TrimPrefix(m.Shard, "merged "))
	case m.Shard != "" && m.Shard != "0/1":
		cover += " of shard " + oneline.Escape(m.Shard)
	}
	b.WriteString(cover + ", config hash `" + oneline.Escape(m.ConfigHash) + "`")
	if r.Covered < r.Planned {
		b.WriteString(". **The run is unfinished or partial**: numbers will change as trials land")
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "Models: %s. Levels: %s. 95%% intervals are percentile bootstraps of %d resamples (seed %d); level tests are paired bootstraps against L4 over trials sharing model, scenario and repetition, Benjamini-Hochberg adjusted over all level × metric tests (* p<0.05, ** p<0.01, *** p<0.001); a bootstrap p is two-sided, each side (resamples at or past zero + 1) / (%d + 1), so the smallest is 2/%d ≈ %.4f, never 0; Spearman p-values are exact permutation p-values up to %d models (t approximation above). In the plots, error bars are these 95%% intervals (mean GPU power, a ratio of sums, has none), a bar of 0 is drawn as a stub on the axis and a value not available as no bar, and a title says when a plot pools models. Energy meter: %s.\n\n",
		oneline.Escape(orNone(r.Models)), levelsString(r), stats.Resamples, r.seed, stats.Resamples, stats.Resamples+1, 2.0/(stats.Resamples+1), ExactSpearman, m.Meter)
	b.WriteString("Definitions: TC is 1 when the trial answered, every state condition holds, every answer fact is stated, and the store changed nothing the task did not ask for (rows created are matched by content whatever IDs they got, free text by presence not wording, an optional field left out counts as right); TC strict is 1 when the trial answered, the answer states every fact and the final store equals a right final store byte for byte (τ-bench's reading); F1 is tool selection over tool names, action F1 over (tool, action) pairs; ArgAcc is the share of required gold key-value pairs the aligned call (k-th call of the same tool) gives right, action ArgAcc the same share with calls paired within each (tool, action) by the best assignment, so that their order does not count; pass^k is the chance that all k repetitions of a scenario succeed; a model's best level is chosen " + BestLevelRule + " (the best-level table's rule column says which step decided).")
	if r.Artifacts {
		b.WriteString(" For synthesized artifacts, played on replay servers that answer the expected calls with their recorded outputs, TC is 1 when the trial answered and no blocker assertion failed, the gold is the expected calls, the domain is the artifact's source and the difficulty its tier.")
	}
	if r.Interfaces != nil {
		fmt.Fprintf(&b, " Interfaces (%s) are tested against %s as levels are against L4, pairing trials that share model, domain, scenario and repetition, BH-adjusted over all interface × metric tests. The complexity models regress TC and ArgAcc (a fractional logit: the same likelihood on a share) on the interfaces' metrics as run.json measured them, z-scored so that each effect is per SD and rank orders them, by a ridge logistic (λ = %g, the intercept unpenalised: a normal prior of SD 1 on each effect, which keeps collinear metrics estimable and shares an effect among them); their intervals are percentiles of %d refits on resampled trials, the interfaces held fixed.",
			strings.Join(r.Interfaces, ", "), r.Baseline, RidgeLambda, ComplexityResamples)
	}
	b.WriteString("\n\n")
	for _, n := range append(r.Notes, notes...) {
		b.WriteString("> " + oneline.Escape(n) + "\n\n")
	}
	for _, p := range plots {
		if strings.HasSuffix(p, ".svg") {
			rel, _ := filepath.Rel(out, p)
			fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(p), ".svg"), filepath.ToSlash(rel))
		}
	}
	intro, faultsIntro := false, false
	for _, t := range r.Tables {
		heading := "##"
		switch {
		case isPaperTable(t):
			if !intro {
				b.WriteString(r.paperIntro())
				intro = true
			}
			heading = "###"
		case isFaultTable(t):
			if !faultsIntro {
				b.WriteString(r.faultsIntro())
				faultsIntro = true
			}
			heading = "###"
		}
		fmt.Fprintf(&b, "%s %s\n\n", heading, t.Title)
		if len(t.Rows) == 0 {
			note := t.Note
			if note == "" {
				note = "no scored trial"
			}
			fmt.Fprintf(&b, "Not available: %s.\n\n", oneline.Escape(note))
			continue
		}
		b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat(" --- |", len(t.Header)) + "\n")
		for _, row := range t.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = mdCell(v)
				if isP(t.Header[i]) && v == 0.0 {
					// Only a normal tail that underflowed float64 is 0
					// here (the bootstrap's floor is 1/(B+1) a side).
					cells[i] = "< 1e-300"
				}
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		if t.Note != "" {
			fmt.Fprintf(&b, "\nNote: %s.\n", oneline.Escape(t.Note))
		}
		fmt.Fprintf(&b, "\nCSV: `%s.csv`\n\n", t.Name)
	}
	return b.String()
}

// isP tells a p-value column by its name: p, or p_ and the metric.
func isP(header string) bool { return header == "p" || strings.HasPrefix(header, "p_") }

func levelsString(r *Report) string {
	return orNone(r.levelNames())
}

// orNone lists names, or says there are none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
