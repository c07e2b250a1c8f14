package report

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// Seed is the default seed of the bootstrap; reports are reproducible.
const Seed = 20260921

// SmallModel is the size below which a model counts as small, as in the
// paper's small/large split.
const SmallModel = 8e9

// Results is a results folder: its manifest and its trial records.
type Results struct {
	Dir      string
	Manifest *results.Manifest
	Records  []results.Record
}

// Load reads a results folder, finished or not.
func Load(dir string) (*Results, error) {
	man, err := results.ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (expected a folder granite run or merge wrote)", dir, err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		return nil, err
	}
	return &Results{Dir: dir, Manifest: man, Records: recs}, nil
}

// Table is one table of the report: a CSV file and a Markdown table.
type Table struct {
	Name, Title string
	Header      []string
	// Rows hold string, int, float64 (NaN: not available), bool, or a
	// number with a footnote mark for report.md (see marked).
	Rows [][]any
	Note string
	// loud says the note among the report's notes even when the table has
	// rows: what it says changes how the rows read.
	loud bool
}

// Report is everything computed from a results folder.
type Report struct {
	Results *Results
	// Covered is the number of scored trials, under fault settings or
	// not; Planned what run.json planned, which counts both.
	Covered, Planned int
	Models           []string
	Levels           []level.Level
	Tables           []*Table
	// Notes are sentences the report must say (what could not be
	// computed, and why).
	Notes []string
	// Artifacts is set when some trials played synthesized artifacts.
	Artifacts bool
	// Interfaces are the interfaces the trials played, in the order the
	// interface tables list them (see interfaceOrder); Baseline is the one
	// by_interface tests the others against ("" when none was played).
	Interfaces []string
	Baseline   string
	seed       uint64
	// rows are the scored trials without faults, faulted those under a
	// fault setting (faults.go).
	rows, faulted []row
}

// Options are the choices of a report beyond the results.
type Options struct {
	// Seed seeds every bootstrap; 0 takes Seed.
	Seed uint64
	// Baseline is the interface the by_interface table tests every other
	// against; "" takes L4 when trials played it, else the first interface.
	Baseline string
}

// row is one scored trial, flattened.
type row struct {
	// id is the record's trial_id, which joins trials.csv to trials.jsonl.
	id, model, domain, scenario, difficulty string
	level                                   level.Level
	rep                                     int
	// tc is TC judged by the task, tcs the strict byte-equal store;
	// arg is ArgAcc aligning k-th calls, aarg action ArgAcc's best
	// pairing within each (tool, action).
	tc, tcs, f1, af1, arg, aarg, wall, calls float64
	zero, err, timeout                       bool
	errClass                                 string
	redundant, ptok, ctok                    float64
	energy                                   float64 // NaN without a meter
	util                                     float64 // mean GPU utilisation, NaN unknown
	params                                   float64 // 0 unknown
	quant                                    string
	// iface is the interface the trial played (the level as written when
	// it transforms none; "" for an artifact without a level), imet what
	// run.json measured of it on the trial's domain (nil: unknown).
	iface string
	imet  *surface.Metrics
	// comp is the interface's composition (as-written, atomic; "" for an
	// artifact without a level), gold the calls of the gold the trial
	// was scored against (NaN: the record predates gold_calls).
	comp string
	gold float64
	// verdicts are an artifact trial's assertion outcomes.
	verdicts []results.Verdict
	// paper is the reference implementation's metrics (nil in records
	// written before granite kept them); goldTools and tools are what the
	// paper tables tell an uninformative F1 or τ by (see paper.go), and
	// oneTool says the interface played offers a single tool.
	paper     *results.PaperMetrics
	goldTools int
	tools     []string
	oneTool   bool
	// index is the trial's place in the plan; promptS, genS, loadS and
	// waitS the model server's time in seconds (Ollama's durations; 0
	// when the backend reports none).
	index                       int
	promptS, genS, loadS, waitS float64
	// faults is the fault setting the trial played under ("" for none),
	// injected, recovered and falseClaims its metrics faults_injected,
	// faults_recovered and false_claims; recovered is NaN where it is not
	// judged (an artifact trial's).
	faults                           string
	injected, recovered, falseClaims float64
}

// Build computes every table. seed 0 takes the default.
func Build(res *Results, seed uint64) *Report { return BuildWith(res, Options{Seed: seed}) }

// BuildWith computes every table with the options given.
func BuildWith(res *Results, opt Options) *Report {
	seed := opt.Seed
	if seed == 0 {
		seed = Seed
	}
	r := &Report{Results: res, seed: seed, Planned: res.Manifest.Trials}
	seen := map[string]bool{}
	var repeated, unplanned int
	var firstUnplanned string
	parallel := map[string]int{} // models that ran trials at once, and how many
	for _, rec := range res.Records {
		if rec.Metrics == nil {
			continue
		}
		// ReadJournal keeps the first record of a trial id; Results made
		// otherwise may repeat one, and a repeat must not count twice.
		if seen[rec.TrialID] {
			repeated++
			continue
		}
		seen[rec.TrialID] = true
		if why := notPlanned(res.Manifest, &rec); why != "" {
			if unplanned == 0 {
				firstUnplanned = rec.TrialID + ": " + why
			}
			unplanned++
			continue
		}
		if rec.Parallel > 1 {
			parallel[rec.Model] = max(parallel[rec.Model], rec.Parallel)
		}
		// Trials under a fault setting make the tables and figures under
		// faults (faults.go), the logistic regression's fault terms and
		// trials.csv's last rows; every other table is over the trials
		// without.
		if rec.Faults != "" {
			r.faulted = append(r.faulted, newRow(res.Manifest, &rec))
			continue
		}
		r.rows = append(r.rows, newRow(res.Manifest, &rec))
		r.Artifacts = r.Artifacts || rec.Artifacts != ""
	}
	r.Covered = len(r.rows) + len(r.faulted)
	if unplanned > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d %s of run.json's plan and left out of every table (the first, %s)", unplanned, plural(unplanned, "record is not a trial", "records are not trials"), firstUnplanned))
	}
	if len(r.faulted) > 0 && len(r.rows) == 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("every trial played under a fault setting: the tables before %q hold none, and the settings are not tested against trials without faults", faultsHeading))
	}
	if repeated > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d %s a trial id; the first of each counts", repeated, plural(repeated, "record repeats", "records repeat")))
	}
	if len(parallel) > 0 {
		var ms []string
		for _, m := range slices.Sorted(maps.Keys(parallel)) {
			ms = append(ms, fmt.Sprintf("%s (parallel %d)", m, parallel[m]))
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s ran several trials at once: their wall times include waiting behind each other, and their energy is each trial's share of what the meter measured while they overlapped (records say energy.shared), so latency and energy of runs with parallel > 1 are not comparable with sequential ones", strings.Join(ms, ", ")))
	}
	if r.Covered > r.Planned {
		r.Notes = append(r.Notes, fmt.Sprintf("the results hold %d scored trials that fit run.json's config, but it plans %d: run.json does not list the benchmark's scenarios, so the report cannot tell which are extra and covers them all", r.Covered, r.Planned))
	}
	// Models come in the config's order; a run.json without its config
	// (made by hand, or damaged) leaves the order the trials came in.
	var order []string
	if cfg := res.Manifest.Config; cfg != nil {
		order = cfg.ModelNames()
	} else {
		for _, x := range r.rows {
			order = append(order, x.model)
		}
	}
	for _, m := range order {
		if !slices.Contains(r.Models, m) && slices.ContainsFunc(r.rows, func(x row) bool { return x.model == m }) {
			r.Models = append(r.Models, m)
		}
	}
	r.Levels = levelsOf(r.rows)
	for _, pair := range []struct {
		name, strict   string
		get, getStrict func(row) float64
	}{{"TC", "TC strict", getTC, getTCS}, {"ArgAcc", "action ArgAcc", getArg, getAArg}} {
		if slices.ContainsFunc(r.rows, func(x row) bool { return pair.get(x) > 0 }) && !slices.ContainsFunc(r.rows, func(x row) bool { return pair.getStrict(x) > 0 }) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s is 0 in every trial while %s is not: records written before granite scored %s carry 0 for it", pair.strict, pair.name, pair.strict))
		}
	}
	r.markOneTool()
	builders := []func() *Table{r.overall, r.byLevel, r.modelLevel, r.modelDomain, r.byDomain, r.byDifficulty,
		r.sizeClass, r.bestLevel, r.passK, r.errorClasses, r.modelTime, r.spearman, r.logistic}
	if r.Artifacts {
		builders = append(builders, r.assertions)
	}
	// The interface tables come when some trial played a transformed
	// interface or run.json measured the interfaces played; otherwise
	// every interface is a level as written and by_level says it all.
	if slices.ContainsFunc(res.Records, func(rec results.Record) bool { return rec.Interface != "" }) ||
		slices.ContainsFunc(r.rows, func(x row) bool { return x.imet != nil }) {
		r.Interfaces = r.interfaceOrder(r.rows)
		r.Baseline = r.chooseBaseline(opt.Baseline)
		builders = append(builders, r.byInterface, r.complexityTC, r.complexityArgAcc, r.interfaceFit)
		if len(r.compositions()) > 1 {
			builders = append(builders, r.byComposition, r.compositionModel)
		}
	} else if opt.Baseline != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("baseline %s not used: no trial played a transformed interface and run.json measures none, so there is no by_interface table", opt.Baseline))
	}
	// The trials under fault settings have their own tables, under their
	// own heading.
	if len(r.faulted) > 0 {
		builders = append(builders, r.byFaults, r.byFaultsModel)
	}
	// The reference's metrics come last, under their own heading, when
	// some record carries them.
	if slices.ContainsFunc(r.rows, hasPaper) {
		builders = append(builders, r.paperModels, r.paperLevels)
	}
	r.Tables = make([]*Table, len(builders))
	var wg sync.WaitGroup
	for i, b := range builders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Tables[i] = b()
		}()
	}
	wg.Wait()
	for _, t := range r.Tables {
		if t.Note != "" && (len(t.Rows) == 0 || t.loud) {
			r.Notes = append(r.Notes, t.Title+": "+t.Note)
		}
	}
	if c := r.paperCoverage(); c != "" {
		r.Notes = append(r.Notes, c)
	}
	return r
}

// newRow flattens a scored record.
func newRow(man *results.Manifest, rec *results.Record) row {
	m := rec.Metrics
	info := man.Models[rec.Model]
	e, util := math.NaN(), math.NaN()
	if m.EnergyJ != nil {
		e = *m.EnergyJ
	}
	if rec.Energy != nil && (rec.Energy.Meter == "nvml" || rec.Energy.Meter == "tegra") && rec.Energy.Telemetry != nil {
		util = rec.Energy.Telemetry.MeanGPUUtil
	}
	var imet *surface.Metrics
	if info, ok := man.Interfaces[results.InterfaceKey(rec.Domain, rec.InterfaceName())]; ok {
		imet = &info.Metrics
	}
	comp, gold := "", math.NaN()
	if rec.Level != "" {
		comp = compositionOf(rec, man)
	}
	if m.GoldCalls > 0 {
		gold = float64(m.GoldCalls)
	}
	recovered := float64(m.FaultsRecovered)
	if rec.Artifacts != "" {
		recovered = math.NaN() // an external tool's effect is in no store granite reads
	}
	return row{faults: rec.Faults, injected: float64(m.FaultsInjected), recovered: recovered, falseClaims: float64(m.FalseClaims),
		iface: rec.InterfaceName(), imet: imet, comp: comp, gold: gold, id: rec.TrialID, model: rec.Model, domain: rec.Domain, scenario: rec.Scenario, difficulty: rec.Difficulty,
		level: rec.Level, rep: rec.Repetition, tc: m.TC, tcs: m.TCStrict, f1: m.F1, af1: m.ActionF1, arg: m.ArgAcc, aarg: m.ActionArgAcc, wall: m.WallS,
		calls: float64(m.ToolCalls), zero: m.ZeroToolCall, err: rec.ErrorClass != "", errClass: string(rec.ErrorClass), timeout: m.Timeout,
		redundant: m.RedundantRate, ptok: float64(rec.PromptTokens), ctok: float64(rec.CompletionTokens),
		energy: e, util: util, params: info.Parameters, quant: info.Quantization, verdicts: rec.Assertions,
		index: rec.Index, promptS: float64(rec.Durations.PromptEvalNS) / 1e9, genS: float64(rec.Durations.EvalNS) / 1e9,
		loadS: float64(rec.Durations.LoadNS) / 1e9, waitS: float64(rec.Durations.ModelWaitNS) / 1e9,
		paper: m.Paper, goldTools: distinctGoldTools(rec), tools: toolNames(rec)}
}

// levelsOf lists the levels rows played, finest first.
func levelsOf(rows []row) []level.Level {
	var out []level.Level
	for _, l := range level.Levels {
		if slices.ContainsFunc(rows, func(x row) bool { return x.level == l }) {
			out = append(out, l)
		}
	}
	return out
}

// plural picks the words for a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// notPlanned says why a record is not a trial of the run's plan, or "".
// run.json keeps the config but not the benchmark's scenarios, so the
// plan is checked as far as the config fixes it: the model, level,
// domain, scenario and repetition, the shard, and that the trial id is
// the one Plan gives those (under its fault setting, when it names one).
// Without a config nothing can be checked.
func notPlanned(man *results.Manifest, rec *results.Record) string {
	cfg := man.Config
	if cfg == nil {
		return ""
	}
	switch {
	case !slices.Contains(cfg.ModelNames(), rec.Model):
		return fmt.Sprintf("model %s is not in the config", rec.Model)
	case cfg.Repetitions > 0 && (rec.Repetition < 1 || rec.Repetition > cfg.Repetitions):
		return fmt.Sprintf("repetition %d, the config has %d", rec.Repetition, cfg.Repetitions)
	}
	id := results.TrialID(rec.Model, rec.Scenario, rec.InterfaceName(), rec.Repetition)
	if rec.Faults != "" {
		k := slices.IndexFunc(cfg.Faults, func(f faults.Setting) bool { return f.Name == rec.Faults && !f.None() })
		switch {
		case k < 0:
			return fmt.Sprintf("fault setting %s is not in the config", rec.Faults)
		case rec.Artifacts != "" && rec.Level == "":
			return "artifacts played as published are not played under faults"
		}
		id = results.FaultTrialID(rec.Model, rec.Scenario, rec.InterfaceName(), cfg.Faults[k], rec.Repetition)
	}
	var i, n int
	if _, err := fmt.Sscanf(man.Shard, "%d/%d", &i, &n); err == nil && n > 1 && rec.Index%n != i {
		return fmt.Sprintf("index %d is not in shard %s", rec.Index, man.Shard)
	}
	if rec.Artifacts != "" && rec.Level != "" && (len(cfg.Played()) > 0 || cfg.ArtifactCmd != "" || cfg.ArtifactURL != "") {
		// An artifact played at a level (or interface) of its regrouped
		// tools.
		switch {
		case !configInterface(cfg, rec):
			return notInConfig(rec)
		case rec.TrialID != id:
			return "its id does not name its model, artifact, interface, fault setting and repetition"
		}
		return ""
	}
	if rec.Artifacts != "" {
		if rec.TrialID != results.ArtifactTrialID(rec.Model, rec.Scenario, rec.Repetition) {
			return "its id does not name its model, artifact and repetition"
		}
		return ""
	}
	switch {
	case !configInterface(cfg, rec):
		return notInConfig(rec)
	case len(cfg.Domains) > 0 && !slices.Contains(cfg.Domains, rec.Domain):
		return fmt.Sprintf("domain %s is not in the config", rec.Domain)
	case len(cfg.Scenarios) > 0 && !slices.Contains(cfg.Scenarios, rec.Scenario):
		return fmt.Sprintf("scenario %s is not in the config", rec.Scenario)
	case rec.TrialID != id && rec.Faults != "":
		return "its id does not name its model, scenario, interface (or level), fault setting and repetition"
	case rec.TrialID != id:
		return "its id does not name its model, scenario, interface (or level) and repetition"
	}
	return ""
}

// configInterface reports whether the config plays the record's
// interface (results.Config.Played): its name at its level. A config
// that names none plays whatever its records say.
func configInterface(cfg *results.Config, rec *results.Record) bool {
	played := cfg.Played()
	return len(played) == 0 || slices.ContainsFunc(played, func(s surface.Spec) bool {
		return s.Name == rec.InterfaceName() && (s.Level == "" || s.Level == rec.Level)
	})
}

// notInConfig says which of the record's interface or level the config
// does not play.
func notInConfig(rec *results.Record) string {
	if rec.Interface != "" {
		return fmt.Sprintf("interface %s is not in the config", rec.Interface)
	}
	return fmt.Sprintf("level %s is not in the config", rec.Level)
}

// Table returns the table with the given name.
func (r *Report) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// where returns the rows a filter keeps.
func (r *Report) where(keep func(row) bool) []row {
	var out []row
	for _, x := range r.rows {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func col(rows []row, f func(row) float64) []float64 {
	out := make([]float64, 0, len(rows))
	for _, x := range rows {
		if v := f(x); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func rate(rows []row, f func(row) bool) float64 {
	if len(rows) == 0 {
		return math.NaN()
	}
	n := 0
	for _, x := range rows {
		if f(x) {
			n++
		}
	}
	return float64(n) / float64(len(rows))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var (
	getTC   = func(x row) float64 { return x.tc }
	getTCS  = func(x row) float64 { return x.tcs }
	getF1   = func(x row) float64 { return x.f1 }
	getAF1  = func(x row) float64 { return x.af1 }
	getArg  = func(x row) float64 { return x.arg }
	getAArg = func(x row) float64 { return x.aarg }
	getWall = func(x row) float64 { return x.wall }
	// getCalls is the subject's calls, getGold the gold's (NaN where the
	// record does not say).
	getCalls = func(x row) float64 { return x.calls }
	getGold  = func(x row) float64 { return x.gold }
)
