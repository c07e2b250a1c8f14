// Package harness runs scenarios against the generated MCP servers: models
// (and built-in agents) for experiments, each trial on an in-process
// session of package serve. Gold execution, which verification and the
// right stores scoring reads need, is package gold; trials are scored by
// package score; an artifact's assertions, which need its tools' schemas,
// are judged here.
package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/live"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/progress"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios"
)

// Trial is one cell of the experiment grid.
type Trial struct {
	// Index is the trial's place in the full grid; ID is stable across
	// runs, shards and resumes of the same config.
	Index      int
	ID         string
	Model      string
	Repetition int
	// Faults is the fault setting the trial is played under; a setting
	// of rate 0 (the zero Setting among them) injects nothing.
	Faults faults.Setting
	// Task is what the trial plays: a benchmark scenario at a level, or
	// a synthesized artifact on a replay server.
	Task
}

// What is what the trial plays, as its record will say it: domain (or
// artifact source), level, interface, scenario (or artifact) and
// difficulty.
func (t Trial) What() *results.Record {
	rec := &results.Record{}
	t.identify(rec)
	return rec
}

// Shard selects every n-th trial starting at i (0 <= i < n).
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: expected i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return Shard{i, n}, nil
}

func (s Shard) String() string {
	if s.N == 0 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func (s Shard) has(index int) bool { return s.N <= 1 || index%s.N == s.I }

// Plan lists the grid in a fixed order (model, domain, interface:
// the granularities, then the config's interfaces; scenario, fault
// setting, repetition), so that each model's trials run together and its
// load happens once.
//
// An artifact run (cfg.Artifacts) plans model, artifact, repetition
// instead, with ids <model>/<artifact id>/r<n>; one of reference
// scenarios' levels, with ids <model>/<scenario>/<level>/r<n> (see
// planReference). ctx bounds listing a live command's tools.
func Plan(ctx context.Context, cfg *results.Config, spec *speclang.Spec, lookup gold.Lookup) ([]Trial, error) {
	var out []Trial
	golds := &goldCache{}
	if cfg.Artifacts != "" {
		set, err := LoadArtifacts(ctx, cfg, lookup)
		if err != nil {
			return nil, err
		}
		if set.levelled {
			return planReference(cfg, set)
		}
		if len(cfg.Played()) > 0 || cfg.ArtifactCmd != "" || cfg.ArtifactURL != "" {
			return planGrouped(cfg, set)
		}
		if len(cfg.Faults) > 0 {
			return nil, fmt.Errorf("%s: faults beside artifacts played as published: give levels or interfaces, or a live source, for a regrouped server whose relay injects them", cfg.Artifacts)
		}
		for _, model := range cfg.ModelNames() {
			for i := range set.Artifacts {
				a := &set.Artifacts[i]
				_, level, _ := scenarios.DomainSource(a.Source)
				task := &artifactTask{art: a, set: set, level: level}
				for rep := 1; rep <= cfg.Repetitions; rep++ {
					out = append(out, Trial{Index: len(out), ID: results.ArtifactTrialID(model, a.ID, rep),
						Model: model, Repetition: rep, Task: task})
				}
			}
		}
		return out, nil
	}
	// A domain's tasks (its interfaces, each scenario's gold as the
	// interface's composition derives it) are made once, shared by every
	// model's trials.
	tasksOf := map[string][]*scenarioTask{}
	for _, model := range cfg.ModelNames() {
		for _, d := range spec.Domains {
			if len(cfg.Domains) > 0 && !slices.Contains(cfg.Domains, d.Name) {
				continue
			}
			tasks, ok := tasksOf[d.Name]
			if !ok {
				var err error
				if tasks, err = domainTasks(cfg, d, lookup, golds); err != nil {
					return nil, err
				}
				tasksOf[d.Name] = tasks
			}
			for _, task := range tasks {
				for _, setting := range cfg.Settings() {
					for rep := 1; rep <= cfg.Repetitions; rep++ {
						out = append(out, Trial{
							Index: len(out), ID: results.FaultTrialID(model, task.scenario.ID, task.iface.Spec.Name, setting, rep),
							Model: model, Repetition: rep, Faults: setting, Task: task,
						})
					}
				}
			}
		}
	}
	return out, nil
}

// Options are a run's settings beyond the config.
type Options struct {
	Out    string
	Resume bool
	Shard  Shard
	// Endpoints serve this run's models in place of the config's, which
	// run.json and the config hash keep as written.
	Endpoints results.Endpoints
	// Progress receives the progress bar (Terminal) or log lines.
	Progress io.Writer
	Terminal bool
	Lookup   gold.Lookup
	// HTTP is the client for model servers (nil: a default one).
	HTTP *http.Client
	// Meter measures the trials (nil: the one the config asks for).
	Meter meter.Meter
	// Isolation is how agent commands are contained: auto (""),
	// namespaces or none (see agent's Isolation constants).
	Isolation string
	// Live receives progress and telemetry for live metrics (may be nil).
	Live *live.Metrics
	// Only, when set, runs only the trials of the shard it accepts; the
	// plan, run.json and resuming are the whole grid's. granite advise
	// spends a grid this way, a round at a time, where trials decide.
	Only func(Trial) bool
	// disk, when set, stands between the journal and its file: tests
	// put a disk that fills up there.
	disk func(*os.File) results.JournalFile
}

// Summary is what a run did.
type Summary struct {
	Out      string
	Planned  int // trials in this shard
	Resumed  int // already recorded
	Ran      int
	Duration time.Duration
	// TC is the mean task completion per model over this shard's records.
	TC map[string]float64
}

// Run executes the trials of cfg's grid in this shard that the output
// folder does not hold yet, appending each finished trial to trials.jsonl.
func Run(ctx context.Context, cfg *results.Config, spec *speclang.Spec, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	grid, err := Plan(ctx, cfg, spec, opts.Lookup)
	if err != nil {
		return nil, err
	}
	var trials []Trial
	for _, t := range grid {
		if opts.Shard.has(t.Index) {
			trials = append(trials, t)
		}
	}
	out := opts.Out
	if out == "" {
		out = cfg.Output
	}
	build := BuildInfo()
	man := &results.Manifest{Experiment: cfg.Name, ConfigHash: ConfigHash(cfg), Config: cfg, Shard: opts.Shard.String(), Build: &build,
		Trials: len(trials), Grid: len(grid), StartedAt: time.Now().UTC().Format(time.RFC3339), Meter: meter.None}
	cfg = opts.Endpoints.Apply(cfg)
	// Check the hosts, endpoints and agent commands before anything is
	// written, so that a run that cannot start leaves no folder to --resume.
	env := &agent.Env{Config: cfg, HTTP: opts.HTTP, Progress: opts.Progress, Isolation: opts.Isolation, ToolSets: toolSets(trials)}
	if abs, err := filepath.Abs(out); err == nil {
		env.Hidden = []string{abs} // no agent command sees (or forges) the run's records
	}
	err = agent.Preflight(ctx, env, func(model string) bool {
		return slices.ContainsFunc(trials, func(t Trial) bool { return t.Model == model })
	})
	man.Isolation = string(env.Mode)
	if err != nil {
		return nil, err
	}
	lock, err := results.LockOut(out)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if err := prepareOut(out, man, opts.Resume); err != nil {
		return nil, err
	}
	j, done, err := results.OpenJournalOn(filepath.Join(out, results.TrialsFile), opts.disk)
	if err != nil {
		return nil, err
	}
	if err := checkPlanned(filepath.Join(out, results.TrialsFile), done, trials, opts.Shard); err != nil {
		j.Close()
		return nil, err
	}
	if err := results.WriteManifest(out, man); err != nil {
		j.Close()
		return nil, err
	}
	recorded := map[string]bool{}
	for _, r := range done {
		recorded[r.TrialID] = true
	}
	var todo []Trial
	for _, t := range trials {
		if !recorded[t.ID] && (opts.Only == nil || opts.Only(t)) {
			todo = append(todo, t)
		}
	}
	sum := &Summary{Out: out, Planned: len(trials), Resumed: len(trials) - len(todo), TC: map[string]float64{}}
	man.Lost = lostKeywords(grid)
	if man.Interfaces == nil {
		man.Interfaces = interfaceInfos(grid)
	}
	m := opts.Meter
	if m == nil && len(todo) > 0 {
		if m, err = meter.Open(meterOptions(cfg)); err != nil {
			j.Close()
			return nil, err
		}
		defer m.Close()
	}
	if m != nil {
		fmt.Fprintln(opts.Progress, m.Describe())
		// A meter that measures describes the trials from here on; one that
		// measures nothing leaves the line of an earlier run that did.
		if m.Name() != meter.None || man.Meter == meter.None {
			man.Meter, man.MeterInfo, man.IdleW = m.Name(), m.Describe(), m.IdleW()
		}
	}
	opts.Live.Attach(m, len(trials), sum.Resumed)
	r := &runner{cfg: cfg, opts: opts, env: env, j: j, man: man, out: out, meter: m,
		progress: progress.New(opts.Progress, opts.Terminal, len(trials), sum.Resumed, "trials")}
	env.Checked = r.checked
	runErr := r.run(ctx, todo)
	if err := j.Close(); err != nil {
		runErr = journalFailed(err) // why the run stopped, whatever else failed with it
	}
	if err := results.WriteManifest(out, man); err != nil && runErr == nil {
		runErr = err
	}
	r.progress.Finish()
	sum.Ran = r.ran
	sum.Duration = time.Since(start)
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err == nil {
		// What the journal kept, which after a failed write is less than
		// the trials the workers finished.
		sum.Ran = len(recs) - sum.Resumed
		n := map[string]int{}
		for _, rec := range recs {
			if rec.Metrics != nil {
				sum.TC[rec.Model] += rec.Metrics.TC
				n[rec.Model]++
			}
		}
		for m := range sum.TC {
			sum.TC[m] /= float64(n[m])
		}
	}
	return sum, runErr
}

// journalFailed says what a failed journal means: which records are kept,
// and how to go on.
func journalFailed(err error) error {
	next := "fix the cause"
	if errors.Is(err, syscall.ENOSPC) {
		next = "free space"
	}
	return fmt.Errorf("%w; the trials recorded so far are kept; %s and rerun with --resume", err, next)
}

// ConfigHash identifies a config and the benchmark it runs on.
func ConfigHash(cfg *results.Config) string {
	c := *cfg
	c.Output = ""
	h := sha256.New()
	b, _ := json.Marshal(c)
	h.Write(b)
	if c.Artifacts != "" {
		// An artifact run is its artifacts and their tools.
		tools := c.ArtifactTools
		if tools == "" {
			tools = scenarios.ToolsFile(c.Artifacts)
		}
		for _, f := range []string{c.Artifacts, tools, c.Groups} {
			data, _ := os.ReadFile(f)
			h.Write(data)
		}
	}
	// The benchmark's specs, without the experiment configs: the config
	// itself is hashed above. (No separators between files: the hash of
	// every run recorded so far, which --resume and merge compare.)
	_ = eachSpec(func(p string, data []byte) {
		if !strings.HasPrefix(p, "experiments/") {
			h.Write([]byte(p))
			h.Write(data)
		}
	})
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// prepareOut checks that the output folder is new, or that resuming
// continues the same run, and fills man with what the earlier run
// learned. The caller holds the folder's lock and writes man once the
// journal is checked too.
func prepareOut(out string, man *results.Manifest, resume bool) error {
	prev, err := results.ReadManifest(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if st, serr := os.Stat(filepath.Join(out, results.TrialsFile)); serr == nil && st.Size() > 0 {
			return fmt.Errorf("%s holds trials.jsonl but no %s; expected a folder granite run made", out, results.ManifestFile)
		}
	case err != nil:
		return err
	case !resume:
		return fmt.Errorf("%s already holds a run (%s, shard %s); add --resume to continue it, or choose another --out", out, prev.Experiment, prev.Shard)
	case prev.ConfigHash != man.ConfigHash:
		return fmt.Errorf("%s holds a run of another config or benchmark (hash %s, now %s); resume only with the same config, or choose another --out", out, prev.ConfigHash, man.ConfigHash)
	case prev.Shard != man.Shard:
		return fmt.Errorf("%s holds shard %s; this run is shard %s", out, prev.Shard, man.Shard)
	default:
		// A resume continues the earlier run, and its run.json says what
		// all of it learned: this run warms up and asks /api/show only for
		// models with trials left, and opens no meter when none are left.
		man.StartedAt = prev.StartedAt
		man.WarmUps = prev.WarmUps
		man.Models = maps.Clone(prev.Models)
		man.Meter, man.MeterInfo, man.IdleW = prev.Meter, prev.MeterInfo, prev.IdleW
		// The same config and specs (the hash) show the same interfaces:
		// what the run measured of them holds.
		man.Interfaces = prev.Interfaces
	}
	return nil
}

// checkPlanned refuses a journal holding records of trials this run does
// not plan. A resume would count them as done ("77 of 72 planned
// trials") and the report would mix them in; the config hash cannot catch
// them, since they got into the file some other way (copied in, or joined
// from another folder's journal).
func checkPlanned(path string, done []results.Record, trials []Trial, shard Shard) error {
	planned := make(map[string]bool, len(trials))
	for _, t := range trials {
		planned[t.ID] = true
	}
	var foreign []string
	for _, r := range done {
		if !planned[r.TrialID] {
			foreign = append(foreign, r.TrialID)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	what, them := "records of trials that are", "them"
	if len(foreign) == 1 {
		what, them = "record of a trial that is", "it"
	}
	return fmt.Errorf("%s holds %d %s not in this run's plan (shard %s), e.g. %s; remove %s from the file, or choose another --out",
		path, len(foreign), what, shard, strings.Join(foreign[:min(3, len(foreign))], ", "), them)
}

// lostKeywords records what the default backend's tool types (Ollama's)
// drop of each tool set the grid plays (a domain at a level, or an
// artifact source).
func lostKeywords(grid []Trial) map[string]map[string][]string {
	return agent.LostBySet(agent.Default(), toolSets(grid))
}

// toolSets are the input schemas of each tool set trials play, by set and
// tool name.
func toolSets(trials []Trial) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for _, t := range trials {
		if key := t.toolsKey(); out[key] == nil {
			out[key] = t.schemas()
		}
	}
	return out
}

// runner runs trials on workers and journals them.
type runner struct {
	cfg      *results.Config
	opts     Options
	j        *results.Journal
	man      *results.Manifest
	out      string
	progress *progress.Bar
	meter    meter.Meter
	mu       sync.Mutex
	ran      int
	// env is what the backends were given at preflight.
	env *agent.Env
}

// run goes model by model: a model's trials are shared by the workers its
// backend readies (an Ollama model's: its parallel slots on every host,
// each host warmed up first).
func (r *runner) run(ctx context.Context, todo []Trial) error {
	for _, model := range r.cfg.ModelNames() {
		var ts []Trial
		for _, t := range todo {
			if t.Model == model {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			continue
		}
		select {
		case <-r.j.Failed(): // no warm-up for trials that cannot be recorded
			return r.j.Err()
		default:
		}
		r.progress.Label("model " + model)
		if err := r.runModel(ctx, model, ts); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (r *runner) runModel(ctx context.Context, model string, ts []Trial) error {
	entry, _ := r.cfg.Entry(model)
	workers, err := agent.For(entry).Workers(ctx, r.env, entry, len(ts))
	if err != nil {
		return err
	}
	// The trials' context ends when the journal fails: what they would
	// finish could not be recorded, so they stop at once.
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.j.Failed():
			cancel()
		case <-tctx.Done():
		}
	}()
	// Trials that run at once share the meter: each is given its part.
	var share *meter.Share
	if entry.Workers() > 1 && r.meter != nil {
		share = meter.NewShare(r.meter)
	}
	feed := make(chan Trial)
	errc := make(chan error, len(workers))
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range feed {
				select {
				case <-r.j.Failed(): // fed as the journal failed: not started
					continue
				default:
				}
				rec, err := r.trial(tctx, t, w.Agent, w.Host, share)
				if err != nil {
					errc <- err
					return
				}
				if rec == nil { // interrupted: not finished, not recorded
					continue
				}
				if err := r.j.Append(rec); err != nil {
					errc <- err
					return
				}
				r.mu.Lock()
				r.ran++
				r.mu.Unlock()
				r.progress.Done()
				r.opts.Live.Finished(rec)
			}
		}()
	}
loop:
	for _, t := range ts {
		select {
		case <-r.j.Failed(): // checked first: a free worker would otherwise hide it
			break loop
		default:
		}
		select {
		case feed <- t:
		case err = <-errc:
			break loop
		case <-r.j.Failed():
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	close(feed)
	wg.Wait()
	select {
	case <-r.j.Failed(): // the cause; workers' errors after it are its effects
		return r.j.Err()
	default:
	}
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// checked records a model's warm-up and what its server (or entry) says
// of it, and writes run.json at once: a run killed while a later model
// runs still names every model it checked, and a resume keeps them.
func (r *runner) checked(model string, info results.ModelInfo, w results.WarmUp) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.man.AddWarmUp(w)
	if r.man.Models == nil {
		r.man.Models = map[string]results.ModelInfo{}
	}
	r.man.Models[model] = info
	if err := results.WriteManifest(r.out, r.man); err != nil {
		return fmt.Errorf("record model %s in %s: %w", model, results.ManifestFile, err)
	}
	return nil
}

// agentTrial is what an agent sees of the trial, played on sess: the
// runner adds the listed tools and the call cap.
func (t Trial) agentTrial(sess *serve.Session, valid map[string]func(json.RawMessage) bool, rec *results.Record) *agent.Trial {
	tr := &agent.Trial{Session: sess, ToolSet: t.toolsKey(), Valid: valid, Prompts: t.prompts(), Record: rec,
		KeepResults: keepsResults(t.Task), System: agent.System(t.system()), Gold: goldByTurn(t.Task)}
	if st, ok := t.Task.(*scenarioTask); ok {
		tr.OracleAnswer = func() string {
			g, err := st.golds.gold(context.Background(), st)
			if err != nil {
				return "" // the trial's scoring says why
			}
			if rec.Faults != "" {
				g = g.UnderFaults(levelRecord(st.iface, rec).Calls, st.dom, st.level())
			}
			return g.OracleAnswer()
		}
	}
	return tr
}

// trial runs one trial on a fresh store and scores it. It returns nil when
// the run was interrupted before the trial finished.
func (r *runner) trial(ctx context.Context, t Trial, a agent.Agent, host string, share *meter.Share) (*results.Record, error) {
	entry, _ := r.cfg.Entry(t.Model)
	rec := &results.Record{TrialID: t.ID, Index: t.Index, Experiment: r.cfg.Name, Model: t.Model, Agent: agent.For(entry).Label(),
		Repetition: t.Repetition, Host: host, Calls: []results.Call{}}
	t.identify(rec)
	if !t.Faults.None() {
		rec.Faults = t.Faults.Name
	}
	if entry.Workers() > 1 {
		rec.Parallel = entry.Workers()
	}
	start := time.Now()
	rec.StartedAt = start.UTC().Format(time.RFC3339Nano)
	timeout := r.cfg.Timeout()
	if entry.TimeoutSeconds > 0 {
		timeout = time.Duration(entry.TimeoutSeconds * float64(time.Second))
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sess, valid, err := t.openUnder(tctx, r.cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	defer sess.Close()
	tools, err := sess.Tools(tctx)
	if err != nil {
		return nil, fmt.Errorf("trial %s: tools/list: %w", t.ID, err)
	}
	tr := t.agentTrial(sess, valid, rec)
	tr.Tools, tr.MaxCalls = tools, r.cfg.CallLimit()
	var mark meter.Mark
	var slot *meter.Slot
	switch {
	case share != nil:
		slot = share.Begin()
	case r.meter != nil:
		mark = r.meter.Mark()
	}
	a.Run(tctx, tr)
	switch {
	case share != nil:
		reading := share.End(slot)
		rec.Energy = &reading
	case r.meter != nil:
		reading := r.meter.Since(mark)
		rec.Energy = &reading
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	if rec.ErrorClass == "" {
		rec.ErrorClass = firstCallError(rec.Calls)
	}
	end := time.Now()
	rec.EndedAt = end.UTC().Format(time.RFC3339Nano)
	m, err := t.score(rec, sess)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	m.WallS = end.Sub(start).Seconds()
	if rec.Energy != nil {
		m.EnergyJ = rec.Energy.EnergyJ
	}
	rec.Metrics = m
	return rec, nil
}

// firstCallError is the class of the trial's first failed call: a
// fallback at the trial's end for calls not made through Trial.Call, which
// classes the trial as each call fails.
func firstCallError(calls []results.Call) results.ErrorClass {
	for _, c := range calls {
		if c.ErrorClass != "" {
			return c.ErrorClass
		}
	}
	return ""
}
