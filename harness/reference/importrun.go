package reference

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Tolerance is how far a re-scored metric may be from the recorded one and
// still reproduce it: float noise, no more.
const Tolerance = 1e-9

// Summary is what ImportRun imported.
type Summary struct {
	// Out is the results folder written; Conditions the records in it.
	Out        string
	Conditions int
	// Traced counts the conditions re-scored from their traces; Untraced
	// names (by trial id) those imported from results.jsonl alone.
	Traced   int
	Untraced []string
	// Reproduced counts the traced conditions whose re-scored metrics are
	// the recorded ones, each within Tolerance; Unrecorded the traced
	// conditions results.jsonl gave no metrics to compare; Mismatches
	// every metric of the others that differs.
	Reproduced int
	Unrecorded int
	Mismatches []Mismatch
}

// Mismatch is a re-scored metric that does not reproduce the recorded one.
type Mismatch struct {
	TrialID string
	// Line is the condition's line in results.jsonl.
	Line               int
	Metric             string
	Recorded, Rescored string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s (results.jsonl line %d): %s recorded %s, re-scored %s", m.TrialID, m.Line, m.Metric, m.Recorded, m.Rescored)
}

// Options are an import's choices beyond its folders.
type Options struct {
	// Build describes the granite binary, for run.json.
	Build *results.Build
}

// ImportRun reads a reference run folder (results.jsonl and traces/),
// takes each condition's scenario from scens, and writes a granite
// results folder at out: trials.jsonl through the results journal and
// run.json through WriteManifest, as granite run writes them, one record
// per condition in results.jsonl's order.
//
// Every problem is reported at once before anything is written: broken
// lines of results.jsonl (positioned), a condition whose scenario scens
// does not hold or holds without gold at its level, a trace that is not
// JSON, a condition given twice. out must not exist or be an empty
// folder; the folder is written beside it under a temporary name and
// renamed into place only when whole. A cancelled ctx stops it before
// anything is written.
func ImportRun(ctx context.Context, runDir string, scens []Scenario, out string, opt Options) (*Summary, error) {
	if err := checkOut(out); err != nil {
		return nil, err
	}
	resultsPath := filepath.Join(runDir, ResultsFile)
	conds, errs, err := readConditions(resultsPath)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Scenario{}
	for i := range scens {
		byID[scens[i].ID] = &scens[i]
	}
	experiment := "reference:" + filepath.Base(absPath(runDir))
	var list speclang.ErrorList
	at := func(c *Condition, jpath, format string, a ...any) {
		errs = append(errs, &speclang.Error{Pos: speclang.Pos{File: resultsPath, Line: c.Line, Col: 1}, Path: jpath, Msg: fmt.Sprintf(format, a...)})
	}
	sum := &Summary{Out: out, Conditions: len(conds)}
	recs := make([]*results.Record, 0, len(conds))
	first := map[string]int{} // trial id -> line
	for i := range conds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &conds[i]
		s := byID[c.Scenario]
		switch {
		case s == nil:
			at(c, "$.condition.scenario_id", "found scenario %q, which the scenarios folder does not hold; expected the folder the run was made from (--scenarios)", c.Scenario)
			continue
		case s.Domain != c.Domain:
			at(c, "$.condition.domain", "found domain %q; scenario %s (%s) is of domain %q", c.Domain, s.ID, s.File, s.Domain)
			continue
		case s.Gold[c.Level] == nil:
			at(c, "$.condition.granularity", "found granularity %s; scenario %s (%s) has no gold for it, so the condition cannot be scored", c.Granularity, s.ID, s.File)
			continue
		}
		if prev, dup := first[c.TrialID()]; dup {
			at(c, "$.condition", "found the condition of line %d again (%s); expected each condition once", prev, c.TrialID())
			continue
		}
		first[c.TrialID()] = c.Line
		t, err := ReadTrace(traceFile(runDir, c))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			t = nil
			sum.Untraced = append(sum.Untraced, c.TrialID())
		case errors.As(err, &list):
			errs = append(errs, list...)
			continue
		case err != nil:
			return nil, err
		default:
			sum.Traced++
		}
		rec := record(c, i, experiment, s, t)
		if t != nil {
			reproduce(sum, c, rec)
		}
		recs = append(recs, rec)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if err := write(out, recs, manifest(experiment, runDir, out, recs, opt)); err != nil {
		return nil, err
	}
	return sum, nil
}

// reproduce compares a traced condition's re-scored metrics with the
// recorded ones.
func reproduce(sum *Summary, c *Condition, rec *results.Record) {
	if c.Recorded == nil {
		sum.Unrecorded++
		return
	}
	diffs := Compare(c.Recorded, rec.Metrics.Paper)
	for i := range diffs {
		diffs[i].TrialID, diffs[i].Line = rec.TrialID, c.Line
	}
	if len(diffs) == 0 {
		sum.Reproduced++
	}
	sum.Mismatches = append(sum.Mismatches, diffs...)
}

// Compare lists the metrics of got that differ from want by more than
// Tolerance, under the reference's keys; error recovery differs also
// when one is null and the other not.
func Compare(want, got *results.PaperMetrics) []Mismatch {
	var out []Mismatch
	num := func(key string, w, g float64) {
		if !(math.Abs(w-g) <= Tolerance) {
			out = append(out, Mismatch{Metric: key, Recorded: fmt.Sprint(w), Rescored: fmt.Sprint(g)})
		}
	}
	num("tool_selection_precision", want.ToolPrecision, got.ToolPrecision)
	num("tool_selection_recall", want.ToolRecall, got.ToolRecall)
	num("tool_selection_f1", want.ToolF1, got.ToolF1)
	num("argument_accuracy", want.ArgAcc, got.ArgAcc)
	num("sequence_edit_distance", want.EditDistance, got.EditDistance)
	num("sequence_kendall_tau", want.KendallTau, got.KendallTau)
	num("task_completion", want.TaskCompletion, got.TaskCompletion)
	switch w, g := want.ErrorRecovery, got.ErrorRecovery; {
	case w == nil && g == nil:
	case w == nil || g == nil:
		out = append(out, Mismatch{Metric: "error_recovery_rate", Recorded: rateText(w), Rescored: rateText(g)})
	default:
		num("error_recovery_rate", *w, *g)
	}
	if want.Tokens != got.Tokens {
		out = append(out, Mismatch{Metric: "token_efficiency", Recorded: fmt.Sprint(want.Tokens), Rescored: fmt.Sprint(got.Tokens)})
	}
	num("redundant_call_rate", want.RedundantRate, got.RedundantRate)
	return out
}

func rateText(r *float64) string {
	if r == nil {
		return "null"
	}
	return fmt.Sprint(*r)
}

// manifest is run.json of an imported run: a config naming the models,
// domains and scenarios the conditions have, as many repetitions as the
// most repeated and a fault setting per fault rate (none for rate 0), so
// that granite report reads every record as planned; one trial a
// condition.
func manifest(experiment, runDir, out string, recs []*results.Record, opt Options) *results.Manifest {
	cfg := &results.Config{Name: experiment, Output: out,
		Description: fmt.Sprintf("conditions of the reference implementation's run folder %s, imported by granite import runs", filepath.Base(absPath(runDir)))}
	var domains, scens []string
	started := ""
	for _, r := range recs {
		if !slices.ContainsFunc(cfg.Models, func(m results.ModelEntry) bool { return m.Name == r.Model }) {
			cfg.Models = append(cfg.Models, results.ModelEntry{Name: r.Model})
		}
		domains = appendNew(domains, r.Domain)
		scens = appendNew(scens, r.Scenario)
		cfg.Repetitions = max(cfg.Repetitions, r.Repetition)
		setting := faults.Setting{Name: "none"}
		if r.Reference != nil && r.Reference.FaultRate > 0 {
			setting = faults.Setting{Name: r.Faults, Rate: r.Reference.FaultRate}
		}
		if !slices.ContainsFunc(cfg.Faults, func(f faults.Setting) bool { return f.Name == setting.Name }) {
			cfg.Faults = append(cfg.Faults, setting)
		}
		if r.StartedAt != "" && (started == "" || r.StartedAt < started) {
			started = r.StartedAt
		}
	}
	slices.Sort(domains)
	slices.Sort(scens)
	cfg.Domains, cfg.Scenarios = domains, scens
	if len(cfg.Faults) == 1 && cfg.Faults[0].None() {
		cfg.Faults = nil // a run without faults, as granite writes one
	}
	slices.SortFunc(cfg.Faults, func(a, b faults.Setting) int { return cmp.Compare(a.Rate, b.Rate) })
	b, _ := json.Marshal(cfg)
	h := sha256.Sum256(b)
	return &results.Manifest{Experiment: experiment, ConfigHash: hex.EncodeToString(h[:]), Config: cfg, Shard: "0/1",
		Trials: len(recs), Grid: len(recs), StartedAt: started, Meter: "none", Build: opt.Build}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// checkOut refuses an output that exists and is not an empty folder.
func checkOut(out string) error {
	if out == "" {
		return errors.New("no output folder given")
	}
	fi, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a folder; choose a new folder for the imported results", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty; choose a new folder for the imported results (an import never adds to or replaces results)", out)
	}
	return nil
}

// write writes the results folder into a new folder beside out, through
// the results journal and WriteManifest, and renames it to out when
// whole. On failure nothing is left.
func write(out string, recs []*results.Record, man *results.Manifest) (err error) {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".import-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	j, _, err := results.OpenJournal(filepath.Join(tmp, results.TrialsFile))
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			j.Close()
			return err
		}
	}
	if err := j.Close(); err != nil {
		return err
	}
	if err := results.WriteManifest(tmp, man); err != nil {
		return err
	}
	// An empty folder at out (checked before reading) gives way; anything
	// that appeared in it since makes the remove, and the import, fail.
	if err := os.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w; the imported results were not written", out, err)
	}
	return os.Rename(tmp, out)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
