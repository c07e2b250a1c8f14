package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgranite/granite/harness/results"
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
	Rows        [][]any // string, int, float64 (NaN: not available), bool
	Note        string
	// loud says the note among the report's notes even when the table has
	// rows: what it says changes how the rows read.
	loud bool
}

// Report is everything computed from a results folder.
type Report struct {
	Results *Results
	// Covered is the number of scored trials; Planned what run.json
	// planned.
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
	rows       []row
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
	// verdicts are an artifact trial's assertion outcomes.
	verdicts []results.Verdict
	// index is the trial's place in the plan; promptS, genS, loadS and
	// waitS the model server's time in seconds (Ollama's durations; 0
	// when the backend reports none).
	index                       int
	promptS, genS, loadS, waitS float64
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
		m := rec.Metrics
		info := res.Manifest.Models[rec.Model]
		e, util := math.NaN(), math.NaN()
		if m.EnergyJ != nil {
			e = *m.EnergyJ
		}
		if rec.Energy != nil && (rec.Energy.Meter == "nvml" || rec.Energy.Meter == "tegra") && rec.Energy.Telemetry != nil {
			util = rec.Energy.Telemetry.MeanGPUUtil
		}
		var imet *surface.Metrics
		if info, ok := res.Manifest.Interfaces[results.InterfaceKey(rec.Domain, rec.InterfaceName())]; ok {
			imet = &info.Metrics
		}
		r.rows = append(r.rows, row{iface: rec.InterfaceName(), imet: imet, id: rec.TrialID, model: rec.Model, domain: rec.Domain, scenario: rec.Scenario, difficulty: rec.Difficulty,
			level: rec.Level, rep: rec.Repetition, tc: m.TC, tcs: m.TCStrict, f1: m.F1, af1: m.ActionF1, arg: m.ArgAcc, aarg: m.ActionArgAcc, wall: m.WallS,
			calls: float64(m.ToolCalls), zero: m.ZeroToolCall, err: rec.ErrorClass != "", errClass: string(rec.ErrorClass), timeout: m.Timeout,
			redundant: m.RedundantRate, ptok: float64(rec.PromptTokens), ctok: float64(rec.CompletionTokens),
			energy: e, util: util, params: info.Parameters, quant: info.Quantization, verdicts: rec.Assertions,
			index: rec.Index, promptS: float64(rec.Durations.PromptEvalNS) / 1e9, genS: float64(rec.Durations.EvalNS) / 1e9,
			loadS: float64(rec.Durations.LoadNS) / 1e9, waitS: float64(rec.Durations.ModelWaitNS) / 1e9})
		r.Artifacts = r.Artifacts || rec.Artifacts != ""
	}
	r.Covered = len(r.rows)
	if unplanned > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d %s of run.json's plan and left out of every table (the first, %s)", unplanned, plural(unplanned, "record is not a trial", "records are not trials"), firstUnplanned))
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
	for _, l := range level.Levels {
		if slices.ContainsFunc(r.rows, func(x row) bool { return x.level == l }) {
			r.Levels = append(r.Levels, l)
		}
	}
	for _, pair := range []struct {
		name, strict   string
		get, getStrict func(row) float64
	}{{"TC", "TC strict", getTC, getTCS}, {"ArgAcc", "action ArgAcc", getArg, getAArg}} {
		if slices.ContainsFunc(r.rows, func(x row) bool { return pair.get(x) > 0 }) && !slices.ContainsFunc(r.rows, func(x row) bool { return pair.getStrict(x) > 0 }) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s is 0 in every trial while %s is not: records written before granite scored %s carry 0 for it", pair.strict, pair.name, pair.strict))
		}
	}
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
		r.Interfaces = r.interfaceOrder()
		r.Baseline = r.chooseBaseline(opt.Baseline)
		builders = append(builders, r.byInterface, r.complexityTC, r.complexityArgAcc, r.interfaceFit)
	} else if opt.Baseline != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("baseline %s not used: no trial played a transformed interface and run.json measures none, so there is no by_interface table", opt.Baseline))
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
	return r
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
// the one Plan gives those. Without a config nothing can be checked.
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
	var i, n int
	if _, err := fmt.Sscanf(man.Shard, "%d/%d", &i, &n); err == nil && n > 1 && rec.Index%n != i {
		return fmt.Sprintf("index %d is not in shard %s", rec.Index, man.Shard)
	}
	if rec.Artifacts != "" && rec.Level != "" && (len(cfg.Granularities) > 0 || len(cfg.Interfaces) > 0 || cfg.ArtifactCmd != "" || cfg.ArtifactURL != "") {
		// An artifact played at a level (or interface) of its regrouped
		// tools.
		switch {
		case rec.Interface != "" && !configInterface(cfg, rec):
			return fmt.Sprintf("interface %s is not in the config", rec.Interface)
		case rec.Interface == "" && len(cfg.Granularities) > 0 && !slices.Contains(cfg.Granularities, rec.Level):
			return fmt.Sprintf("level %s is not in the config", rec.Level)
		case rec.TrialID != results.InterfaceTrialID(rec.Model, rec.Scenario, rec.InterfaceName(), rec.Repetition):
			return "its id does not name its model, artifact, interface and repetition"
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
	case rec.Interface != "" && !configInterface(cfg, rec):
		return fmt.Sprintf("interface %s is not in the config", rec.Interface)
	case rec.Interface == "" && len(cfg.Granularities) > 0 && !slices.Contains(cfg.Granularities, rec.Level):
		return fmt.Sprintf("level %s is not in the config", rec.Level)
	case len(cfg.Domains) > 0 && !slices.Contains(cfg.Domains, rec.Domain):
		return fmt.Sprintf("domain %s is not in the config", rec.Domain)
	case len(cfg.Scenarios) > 0 && !slices.Contains(cfg.Scenarios, rec.Scenario):
		return fmt.Sprintf("scenario %s is not in the config", rec.Scenario)
	case rec.Interface != "" && rec.TrialID != results.InterfaceTrialID(rec.Model, rec.Scenario, rec.Interface, rec.Repetition):
		return "its id does not name its model, scenario, interface and repetition"
	case rec.Interface == "" && rec.TrialID != results.TrialID(rec.Model, rec.Scenario, rec.Level, rec.Repetition):
		return "its id does not name its model, scenario, level and repetition"
	}
	return ""
}

// configInterface reports whether the config plays the record's
// interface: one of its interfaces of the record's level, or a
// granularity named as its interface.
func configInterface(cfg *results.Config, rec *results.Record) bool {
	if rec.Interface == string(rec.Level) && slices.Contains(cfg.Granularities, rec.Level) {
		return true
	}
	return slices.ContainsFunc(cfg.Interfaces, func(s surface.Spec) bool {
		return s.Name == rec.Interface && (s.Level == "" || s.Level == rec.Level)
	})
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
)

// tcCI is the TC of some rows with its bootstrap interval.
func (r *Report) tcCI(label string, rows []row) CI {
	return Interval(r.seed, label, col(rows, getTC))
}

// ModelLevelLabel and ModelLabel label the intervals of a model's TC at a
// level (the model_level table) and over all its trials (the overall
// table); granite view labels its cells the same, so that it shows the
// report's intervals.
func ModelLevelLabel(model string, l level.Level) string { return "ml/" + model + "/" + string(l) }

// ModelLabel: see ModelLevelLabel.
func ModelLabel(model string) string { return "model/" + model }

// summary is the columns most tables share.
func (r *Report) summary(label string, rows []row) []any {
	ci := r.tcCI(label, rows)
	return []any{len(rows), ci.Mean, ci.Lo, ci.Hi, mean(col(rows, getTCS)), mean(col(rows, getF1)), mean(col(rows, getAF1)),
		mean(col(rows, getArg)), mean(col(rows, getAArg)), mean(col(rows, getWall)),
		rate(rows, func(x row) bool { return x.err }), rate(rows, func(x row) bool { return x.zero })}
}

// summaryHeader puts each task completion before its strict reading and
// each argument accuracy before its order-free one, so that the pairs read
// side by side.
var summaryHeader = []string{"trials", "tc", "tc_lo", "tc_hi", "tc_strict", "f1", "action_f1", "arg_acc", "action_arg_acc", "wall_s", "error_rate", "zero_call_rate"}

// levelTests are the metrics each level is tested on against L4, in the
// order of their columns; the stars of sig are TC's.
var levelTests = []metricTest{{"tc", getTC}, {"tc_strict", getTCS}, {"f1", getF1}, {"arg_acc", getArg}, {"action_arg_acc", getAArg}}

func (r *Report) overall() *Table {
	t := &Table{Name: "overall", Title: "Overall by model",
		Header: append([]string{"model", "params_b", "quantization"}, append(summaryHeader, "calls", "redundant_rate", "prompt_tokens", "completion_tokens")...)}
	for _, m := range r.Models {
		rows := r.where(func(x row) bool { return x.model == m })
		p := math.NaN()
		if rows[0].params > 0 {
			p = rows[0].params / 1e9
		}
		line := append([]any{m, p, rows[0].quant}, r.summary(ModelLabel(m), rows)...)
		line = append(line, mean(col(rows, func(x row) float64 { return x.calls })), mean(col(rows, func(x row) float64 { return x.redundant })),
			mean(col(rows, func(x row) float64 { return x.ptok })), mean(col(rows, func(x row) float64 { return x.ctok })))
		t.Rows = append(t.Rows, line)
	}
	return t
}

// metricTest is a metric a table's paired tests compare, by its column
// name.
type metricTest struct {
	name string
	get  func(row) float64
}

// pairKey pairs trials of two groups: the same model, domain, scenario
// and repetition.
func pairKey(x row) string { return fmt.Sprintf("%s|%s|%s|%d", x.model, x.domain, x.scenario, x.rep) }

// family is a table's paired tests of groups (levels, interfaces) against
// a reference, on each metric, Benjamini-Hochberg adjusted together.
type family struct {
	metrics int
	// byGroup holds each tested group's mean differences and adjusted p
	// per metric.
	byGroup map[string][]Paired
	adj     map[string][]float64
}

// pairedFamily tests each group's rows (rowsOf) against the reference
// rows (by pairKey) on every metric by paired bootstrap, each test seeded
// from label, group and metric; a test without pairs has no p and is left
// out of the adjustment.
func (r *Report) pairedFamily(label string, groups []string, ref map[string]row, rowsOf func(string) []row, metrics []metricTest) *family {
	f := &family{metrics: len(metrics), byGroup: map[string][]Paired{}, adj: map[string][]float64{}}
	var ps []float64
	type at struct {
		group string
		m     int
	}
	var tested []at
	for _, g := range groups {
		rows := rowsOf(g)
		for mi, m := range metrics {
			var diffs []float64
			for _, x := range rows {
				if b, ok := ref[pairKey(x)]; ok {
					if d := m.get(x) - m.get(b); !math.IsNaN(d) {
						diffs = append(diffs, d)
					}
				}
			}
			p := PairedBootstrap(diffs, rngFor(r.seed, fmt.Sprintf("%s%s/%s", label, g, m.name)))
			f.byGroup[g] = append(f.byGroup[g], p)
			f.adj[g] = append(f.adj[g], math.NaN())
			if !math.IsNaN(p.P) {
				ps = append(ps, p.P)
				tested = append(tested, at{g, mi})
			}
		}
	}
	for j, q := range BH(ps) {
		f.adj[tested[j].group][tested[j].m] = q
	}
	return f
}

// cells are a group's d_ and p_ cells, metric by metric (NaN for the
// reference and untested ones), and the stars of its first metric.
func (f *family) cells(group string) ([]any, string) {
	out := make([]any, 2*f.metrics)
	for i := range out {
		out[i] = math.NaN()
	}
	ps, ok := f.byGroup[group]
	if !ok {
		return out, ""
	}
	for m, p := range ps {
		out[2*m], out[2*m+1] = p.Mean, f.adj[group][m]
	}
	return out, stars(f.adj[group][0])
}

// byLevel compares every level with L4 by paired bootstrap over trials
// that share model, scenario and repetition, Benjamini-Hochberg adjusted
// over the family of (level, metric) tests.
func (r *Report) byLevel() *Table {
	header := append([]string{"level"}, summaryHeader...)
	for _, m := range levelTests {
		header = append(header, "d_"+m.name, "p_"+m.name)
	}
	t := &Table{Name: "by_level", Title: "By level, with paired bootstrap tests against L4 (BH-adjusted p)", Header: append(header, "sig")}
	base := map[string]row{}
	for _, x := range r.where(func(x row) bool { return x.level == level.L4 }) {
		// Transformed interfaces of L4 share the key; L4 as written is
		// the reference when it was played.
		if b, ok := base[pairKey(x)]; !ok || b.iface != string(level.L4) {
			base[pairKey(x)] = x
		}
	}
	var others []string
	for _, l := range r.Levels {
		if l != level.L4 {
			others = append(others, string(l))
		}
	}
	fam := r.pairedFamily("paired/", others, base, func(g string) []row { return r.where(func(x row) bool { return string(x.level) == g }) }, levelTests)
	for _, l := range r.Levels {
		line := append([]any{string(l)}, r.summary("level/"+string(l), r.where(func(x row) bool { return x.level == l }))...)
		cells, sig := fam.cells(string(l))
		if l == level.L4 {
			sig = "ref"
		}
		t.Rows = append(t.Rows, append(append(line, cells...), sig))
	}
	if len(base) == 0 {
		t.Note = "no L4 trials: the levels cannot be compared with L4"
	}
	return t
}

func (r *Report) modelLevel() *Table {
	t := &Table{Name: "model_level", Title: "By model and level",
		Header: append([]string{"model", "level"}, append(summaryHeader, "tc_per_s", "j_per_success", "mean_power_w")...)}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			rows := r.where(func(x row) bool { return x.model == m && x.level == l })
			if len(rows) == 0 {
				continue
			}
			line := append([]any{m, string(l)}, r.summary(ModelLevelLabel(m, l), rows)...)
			t.Rows = append(t.Rows, append(line, efficiency(rows)...))
		}
	}
	if len(r.Levels) == 0 {
		t.Note = noLevelNote
	}
	return t
}

// modelTime is the model server's seconds per trial, by model and level,
// split into prompt evaluation and generation, with the load and the
// whole wait beside them; and the prompt evaluation of the first trial of
// each (domain, level) against the later ones: the trials of a (domain,
// level) run back to back, so the later ones find the system prompt and
// tool list in the server's prefix cache. Their time shows it; Ollama's
// prompt_eval_count does not, as it counts the cached prefix too.
func (r *Report) modelTime() *Table {
	t := &Table{Name: "model_time", Title: "Model time per trial: prompt evaluation and generation (s)",
		Header: []string{"model", "level", "trials", "prompt_eval_s", "generation_s", "load_s", "model_wait_s",
			"prompt_tokens", "tokens_generated", "first_prompt_eval_s", "later_prompt_eval_s"}}
	first := map[string]int{} // model/domain/level -> the lowest plan index
	for _, x := range r.rows {
		k := x.model + "/" + x.domain + "/" + string(x.level)
		if i, ok := first[k]; !ok || x.index < i {
			first[k] = x.index
		}
	}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			rows := r.where(func(x row) bool { return x.model == m && x.level == l })
			if len(rows) == 0 || !slices.ContainsFunc(rows, func(x row) bool { return x.promptS+x.genS > 0 }) {
				continue
			}
			var firsts, laters []float64
			for _, x := range rows {
				if first[x.model+"/"+x.domain+"/"+string(x.level)] == x.index {
					firsts = append(firsts, x.promptS)
				} else {
					laters = append(laters, x.promptS)
				}
			}
			t.Rows = append(t.Rows, []any{m, string(l), len(rows),
				mean(col(rows, func(x row) float64 { return x.promptS })), mean(col(rows, func(x row) float64 { return x.genS })),
				mean(col(rows, func(x row) float64 { return x.loadS })), mean(col(rows, func(x row) float64 { return x.waitS })),
				mean(col(rows, func(x row) float64 { return x.ptok })), mean(col(rows, func(x row) float64 { return x.ctok })),
				mean(firsts), mean(laters)})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no trial has model-server durations (built-in agents, agent commands and OpenAI-compatible endpoints report none)"
	}
	return t
}

// efficiency is TC per second of wall time, GPU joules per completed
// task, and mean power (NaN without energy).
func efficiency(rows []row) []any {
	var tc, wall, e float64
	metered := true
	for _, x := range rows {
		tc += x.tc
		wall += x.wall
		if math.IsNaN(x.energy) {
			metered = false
		}
		e += x.energy
	}
	jps, power := math.NaN(), math.NaN()
	if metered && len(rows) > 0 {
		if tc > 0 {
			jps = e / tc
		}
		if wall > 0 {
			power = e / wall
		}
	}
	tps := math.NaN()
	if wall > 0 {
		tps = tc / wall
	}
	return []any{tps, jps, power}
}

// assertions is the pass rate of artifact assertions by model, kind and
// severity.
func (r *Report) assertions() *Table {
	t := &Table{Name: "assertions", Title: "Artifact assertions passed, by model, kind and severity",
		Header: []string{"model", "kind", "severity", "assertions", "passed"}}
	for _, m := range r.Models {
		type key struct{ kind, severity string }
		n, ok := map[key]int{}, map[key]int{}
		var keys []key
		for _, x := range r.where(func(x row) bool { return x.model == m }) {
			for _, v := range x.verdicts {
				k := key{v.Kind, v.Severity}
				if n[k] == 0 {
					keys = append(keys, k)
				}
				n[k]++
				if v.Passed {
					ok[k]++
				}
			}
		}
		slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.kind+a.severity, b.kind+b.severity) })
		for _, k := range keys {
			t.Rows = append(t.Rows, []any{m, k.kind, k.severity, n[k], float64(ok[k]) / float64(n[k])})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no artifact trial has assertions"
	}
	return t
}

func (r *Report) modelDomain() *Table {
	t := &Table{Name: "model_domain", Title: "TC by model and domain", Header: []string{"model", "domain", "trials", "tc", "tc_strict"}}
	for _, m := range r.Models {
		for _, d := range r.domains() {
			rows := r.where(func(x row) bool { return x.model == m && x.domain == d })
			if len(rows) > 0 {
				t.Rows = append(t.Rows, []any{m, d, len(rows), mean(col(rows, getTC)), mean(col(rows, getTCS))})
			}
		}
	}
	return t
}

func (r *Report) domains() []string {
	var out []string
	for _, x := range r.rows {
		if !slices.Contains(out, x.domain) {
			out = append(out, x.domain)
		}
	}
	slices.Sort(out)
	return out
}

func (r *Report) byDomain() *Table {
	t := &Table{Name: "by_domain", Title: "By domain", Header: append([]string{"domain"}, summaryHeader...)}
	for _, d := range r.domains() {
		t.Rows = append(t.Rows, append([]any{d}, r.summary("domain/"+d, r.where(func(x row) bool { return x.domain == d }))...))
	}
	return t
}

func (r *Report) byDifficulty() *Table {
	t := &Table{Name: "by_difficulty", Title: "By difficulty", Header: append([]string{"difficulty"}, summaryHeader...)}
	for _, d := range r.difficulties() {
		rows := r.where(func(x row) bool { return x.difficulty == d })
		t.Rows = append(t.Rows, append([]any{d}, r.summary("difficulty/"+d, rows)...))
	}
	return t
}

// Difficulties are the difficulty tiers in the order tables list them:
// the benchmark's, easiest first, then synthesized artifacts'.
var Difficulties = []string{"easy", "medium", "hard", "simple", "complex"}

// difficulties lists the difficulties the trials have, in Difficulties'
// order.
func (r *Report) difficulties() []string {
	var out []string
	for _, d := range Difficulties {
		if slices.ContainsFunc(r.rows, func(x row) bool { return x.difficulty == d }) {
			out = append(out, d)
		}
	}
	return out
}

func (r *Report) sizeClass() *Table {
	t := &Table{Name: "size_class", Title: "Small (< 8B) and large models", Header: append([]string{"class"}, summaryHeader...)}
	for _, c := range []struct {
		name string
		keep func(row) bool
	}{
		{"small (<8B)", func(x row) bool { return x.params > 0 && x.params < SmallModel }},
		{"large (>=8B)", func(x row) bool { return x.params >= SmallModel }},
	} {
		if rows := r.where(c.keep); len(rows) > 0 {
			t.Rows = append(t.Rows, append([]any{c.name}, r.summary("size/"+c.name, rows)...))
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no model sizes in run.json (built-in agents have none)"
	}
	return t
}

// BestLevelRule is how each model's best level is chosen, in words for
// the report.
const BestLevelRule = "over the trials (domain, scenario, repetition) the model played at every one of its levels: " +
	"the highest TC; on a tie the highest TC strict, then the lower mean wall time, then the finer level (L4 first)"

// bestLevel is each model at its best level (BestLevelRule), with its wall
// time, energy per completed task and TC per second; rule says which step
// of the rule decided, and pareto marks models no other model beats on
// both TC and wall time.
func (r *Report) bestLevel() *Table {
	t := &Table{Name: "best_level", Title: "Each model at its best level (Pareto front: no model is both faster and better)",
		Header: []string{"model", "best_level", "tc", "wall_s", "tc_per_s", "j_per_success", "pareto", "trials", "rule"}}
	type pt struct {
		m       string
		l       level.Level
		tc, tcs float64
		wall    float64
		eff     []any
		n       int
		rule    string
	}
	var pts []pt
	for _, m := range r.Models {
		byLevel := map[level.Level][]row{}
		for _, l := range r.Levels {
			if rows := r.where(func(x row) bool { return x.model == m && x.level == l }); len(rows) > 0 {
				byLevel[l] = rows
			}
		}
		shared, common := sharedTrials(byLevel)
		var cands []pt
		for _, l := range r.Levels { // L4 first: the last step of the rule
			rows := slices.DeleteFunc(slices.Clone(byLevel[l]), func(x row) bool { return !shared[trialKey(x)] })
			if len(rows) > 0 {
				cands = append(cands, pt{m: m, l: l, tc: mean(col(rows, getTC)), tcs: mean(col(rows, func(x row) float64 { return x.tcs })),
					wall: mean(col(rows, getWall)), eff: efficiency(rows), n: len(rows)})
			}
		}
		if len(cands) == 0 {
			continue
		}
		steps := []struct {
			name string
			cmp  func(a, b pt) int
		}{
			{"tc", func(a, b pt) int { return cmp.Compare(b.tc, a.tc) }},
			{"tc_strict", func(a, b pt) int { return cmp.Compare(b.tcs, a.tcs) }},
			{"wall time", func(a, b pt) int { return cmp.Compare(a.wall, b.wall) }},
		}
		slices.SortStableFunc(cands, func(a, b pt) int {
			for _, s := range steps {
				if c := s.cmp(a, b); c != 0 {
					return c
				}
			}
			return 0
		})
		best := cands[0]
		best.rule = "only level"
		if len(cands) > 1 {
			best.rule = "level order"
			for _, s := range steps {
				if s.cmp(best, cands[1]) != 0 {
					best.rule = s.name
					break
				}
			}
		}
		if !common {
			best.rule += " (no trial ran at every level: each level over its own)"
		}
		pts = append(pts, best)
	}
	for _, p := range pts {
		front := !slices.ContainsFunc(pts, func(q pt) bool {
			return q.m != p.m && q.tc >= p.tc && q.wall <= p.wall && (q.tc > p.tc || q.wall < p.wall)
		})
		t.Rows = append(t.Rows, []any{p.m, string(p.l), p.tc, p.wall, p.eff[0], p.eff[1], front, p.n, p.rule})
	}
	return t
}

// trialKey names a trial across levels: its domain, scenario and
// repetition.
func trialKey(x row) string { return fmt.Sprintf("%s/%s/%d", x.domain, x.scenario, x.rep) }

// sharedTrials lists the trials played at every level given (common);
// when no trial is, it lists every trial, so that a model whose levels ran
// apart still has a best level.
func sharedTrials(byLevel map[level.Level][]row) (trials map[string]bool, common bool) {
	count := map[string]int{}
	for _, rows := range byLevel {
		seen := map[string]bool{}
		for _, x := range rows {
			if k := trialKey(x); !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	out := map[string]bool{}
	for k, n := range count {
		if n == len(byLevel) {
			out[k] = true
		}
	}
	if len(out) > 0 {
		return out, true
	}
	for k := range count {
		out[k] = true
	}
	return out, false
}

func (r *Report) passK() *Table {
	t := &Table{Name: "pass_k", Title: "pass^k: the chance that all k repetitions of a scenario succeed", Header: []string{"model", "level", "k", "pass_k"}}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			succ := map[string]int{}
			reps := map[string]int{}
			var keys []string
			for _, x := range r.where(func(x row) bool { return x.model == m && x.level == l }) {
				k := x.domain + "/" + x.scenario
				if _, ok := reps[k]; !ok {
					keys = append(keys, k)
				}
				reps[k]++
				succ[k] += int(x.tc)
			}
			if len(keys) == 0 {
				continue
			}
			var c, n []int
			for _, k := range keys {
				c, n = append(c, succ[k]), append(n, reps[k])
			}
			for k, v := range PassK(c, n) {
				t.Rows = append(t.Rows, []any{m, string(l), k + 1, v})
			}
		}
	}
	return t
}

func (r *Report) errorClasses() *Table {
	t := &Table{Name: "errors", Title: "Error classes by model", Header: []string{"model", "error_class", "trials", "share"}}
	classes := map[string]map[string]int{}
	for _, x := range r.rows {
		if x.errClass == "" {
			continue
		}
		if classes[x.model] == nil {
			classes[x.model] = map[string]int{}
		}
		classes[x.model][x.errClass]++
	}
	for _, m := range r.Models {
		n := len(r.where(func(x row) bool { return x.model == m }))
		cs := classes[m]
		keys := make([]string, 0, len(cs))
		for k := range cs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, []any{m, k, cs[k], float64(cs[k]) / float64(n)})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no trial has an error class"
	}
	return t
}

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
			means[i] = append(means[i], mean(col(rows, c.get)))
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
