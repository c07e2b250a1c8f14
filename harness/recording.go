package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Recorder serves a scenario's domain at a level on one fresh store that
// every session shares (a person may reconnect, or a client open several
// sessions; the task's state is one), and records every call.
type Recorder struct {
	task *scenarioTask
	// faults is the fault schedule the server injects, nil for none.
	faults *faults.Schedule
	store  mcpdomain.Store
	srv    *server.MCPServer
	calls  agent.CallRecorder
	start  time.Time
	valid  map[string]func(json.RawMessage) bool

	// mu guards the log, which calls of several sessions append to.
	mu  sync.Mutex
	log *recorded.Log
}

// NewRecorder prepares the recording of scenario id (which names its
// domain) at a level, injecting the faults sched draws (nil: none; with
// no scenario of its own, drawn for id as for its trial).
func NewRecorder(spec *speclang.Spec, lookup gold.Lookup, id string, level level.Level, sched *faults.Schedule) (*Recorder, error) {
	t, err := scenarioByID(spec, lookup, id, level)
	if err != nil {
		return nil, err
	}
	if sched != nil && sched.Setting.None() {
		sched = nil
	}
	if sched != nil && sched.Scenario == "" {
		s := *sched
		s.Scenario, sched = id, &s
	}
	srv, st, err := serve.NewServer(t.dom, t.iface, serve.WithFaults(sched))
	if err != nil {
		return nil, err
	}
	return &Recorder{task: t, faults: sched, store: st, srv: srv, start: time.Now(), valid: t.validators()}, nil
}

// scenarioByID finds a scenario by id, in the domain its id names.
func scenarioByID(spec *speclang.Spec, lookup gold.Lookup, id string, level level.Level) (*scenarioTask, error) {
	name, _, _ := strings.Cut(id, "-")
	d := spec.Domain(name)
	if d == nil {
		return nil, fmt.Errorf("scenario %q: no domain %q; scenario ids start with their domain, like %s-001", id, name, spec.Domains[0].Name)
	}
	for _, s := range d.Scenarios {
		if s.ID != id {
			continue
		}
		dom, msg := gold.Generated(d, lookup)
		if msg != "" {
			return nil, fmt.Errorf("domain %s: %s", d.Name, msg)
		}
		if _, ok := dom.Tools[level]; !ok {
			return nil, fmt.Errorf("unknown level %q: want one of L4, L3, L2, L1", level)
		}
		iface, err := serve.Identity(dom, level)
		if err != nil {
			return nil, err
		}
		return newScenarioTask(d, dom, iface, s, &goldCache{})
	}
	return nil, fmt.Errorf("no scenario %q in domain %s (granite list shows them)", id, d.Name)
}

// Prompt is the scenario's prompt, to give the client.
func (r *Recorder) Prompt() string { return r.task.scenario.Prompt }

// Handler serves the recorded server over streamable HTTP with o's
// checks; every session shares the one store. Each call is kept, and
// appended to the file RecordTo started before the client gets its reply.
func (r *Recorder) Handler(o serve.Options) (*serve.Handler, error) {
	o.OnCall = func(c serve.Observed) {
		r.calls.Add(c)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.log != nil {
			calls, _ := agent.ServedCalls([]serve.Observed{c}, r.start, r.valid)
			r.log.Add(calls[0], c.Session, r.store.Snapshot())
		}
	}
	o.SharedStore = true
	return serve.NewHandler(serve.Existing(r.srv), o)
}

// Recording is what was recorded so far.
func (r *Recorder) Recording() *recorded.Session {
	calls, sessions := agent.ServedCalls(r.calls.Observed(), r.start, r.task.validators())
	return &recorded.Session{Domain: r.task.domain.Name, Level: r.task.level(), Scenario: r.task.scenario.ID, Prompt: r.Prompt(),
		StartedAt: r.start.UTC().Format(time.RFC3339Nano), EndedAt: time.Now().UTC().Format(time.RFC3339Nano),
		Faults: r.faults, Calls: calls, Sessions: sessions, FinalStore: r.store.Snapshot()}
}

// RecordTo starts the recording file at path (see recorded.Create): a
// header line now, then one line per call as it is answered, each written
// and synced before the client reads the reply. The cost is one fsync per
// call; see BenchmarkRecordedCall.
func (r *Recorder) RecordTo(path string) error {
	l, err := recorded.Create(path, recorded.Header{Domain: r.task.domain.Name, Level: r.task.level(), Scenario: r.task.scenario.ID,
		Prompt: r.Prompt(), StartedAt: r.start.UTC().Format(time.RFC3339Nano), Store: r.store.Snapshot(), Faults: r.faults})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.log = l
	r.mu.Unlock()
	return nil
}

// Close ends the recording file (recorded.Log.End) and reports the first
// write that failed.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	if l == nil {
		return nil
	}
	r.log = nil
	return l.End(r.store.Snapshot())
}

// ScoreRecording turns a recording and the answer the client gave into a
// trial record of the usual schema, scored as a command agent's trial of
// the same calls is: model names the subject (trial id
// <model>/<scenario>/<level>/r1), agent "recorded".
func ScoreRecording(ctx context.Context, spec *speclang.Spec, lookup gold.Lookup, rc *recorded.Session, model, answer string) (*results.Record, error) {
	t, err := scenarioByID(spec, lookup, rc.Scenario, rc.Level)
	if err != nil {
		return nil, err
	}
	if _, err := mcpdomain.Rows(rc.FinalStore); err != nil {
		return nil, fmt.Errorf("the recording's final_store: %w", err)
	}
	rec := &results.Record{TrialID: results.TrialID(model, rc.Scenario, string(rc.Level), 1), Experiment: recordedExperiment, Model: model,
		Agent: results.AgentRecorded, Repetition: 1, StartedAt: rc.StartedAt, EndedAt: rc.EndedAt, Calls: []results.Call{}}
	t.identify(rec)
	if f := rc.Faults; f != nil && !f.Setting.None() {
		// Named as the trial whose faults it met.
		rec.Faults, rec.Repetition = f.Setting.Name, f.Repetition
		rec.TrialID = results.FaultTrialID(model, rc.Scenario, string(rc.Level), f.Setting, f.Repetition)
	}
	agent.FillServed(rec, t.prompts(), append([]results.Call{}, rc.Calls...), agent.ClipAnswer(strings.TrimSpace(answer)))
	rec.StopReason = results.StopAnswer
	g, err := t.golds.gold(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("gold: %w", err)
	}
	if rec.Faults != "" {
		g = g.UnderFaults(rec.Calls, t.dom, t.level())
	}
	m, err := score.Score(rec, g, rc.FinalStore)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	if rec.Faults != "" {
		// No store stands behind a recording's final snapshot to apply a
		// write to: recovery is judged by the calls alone (score.Faults).
		m.FaultsInjected, m.FaultsRecovered = score.Faults(rec.Calls, t.dom, t.level(), nil)
	}
	start, err1 := time.Parse(time.RFC3339Nano, rc.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, rc.EndedAt)
	if err1 == nil && err2 == nil {
		m.WallS = end.Sub(start).Seconds()
	}
	rec.Metrics = m
	return rec, nil
}

// MutateRecording proves the verdict on a recording of a right solution:
// every variant the catalogue derives from its answer, final store and
// calls' outputs (score.Operators) is scored against the scenario's gold
// at the recording's level.
func MutateRecording(ctx context.Context, spec *speclang.Spec, lookup gold.Lookup, rc *recorded.Session, answer string) ([]score.VariantVerdict, error) {
	t, err := scenarioByID(spec, lookup, rc.Scenario, rc.Level)
	if err != nil {
		return nil, err
	}
	g, err := t.golds.gold(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("gold: %w", err)
	}
	var outputs []string
	for _, c := range rc.Calls {
		if !c.IsError {
			outputs = append(outputs, c.Result)
		}
	}
	return g.Mutate(score.Base{Answer: agent.ClipAnswer(strings.TrimSpace(answer)), Store: rc.FinalStore, Outputs: outputs})
}

// recordedExperiment names the results folders granite score makes.
const recordedExperiment = "recorded"

// AddRecord appends a scored recording (ScoreRecording) to a results
// folder granite score made, or makes it: a folder of granite run plans
// its trials, and a record it did not plan would stop its --resume.
func AddRecord(out string, rec *results.Record) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	lock, err := results.LockOut(out)
	if err != nil {
		return err
	}
	defer lock.Release()
	man, err := results.ReadManifest(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		man = &results.Manifest{Experiment: recordedExperiment, Config: &results.Config{Name: recordedExperiment}, Shard: "0/1",
			StartedAt: time.Now().UTC().Format(time.RFC3339), Meter: meter.None}
	case err != nil:
		return err
	case man.Experiment != recordedExperiment:
		return fmt.Errorf("%s holds a run of %s; add recordings to a folder of their own (granite report reads each folder)", out, man.Experiment)
	}
	j, done, err := results.OpenJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		return err
	}
	for _, d := range done {
		if d.TrialID == rec.TrialID {
			j.Close()
			return fmt.Errorf("%s already holds %s; name this session apart with --model", out, rec.TrialID)
		}
	}
	rec.Index, rec.Experiment = len(done), recordedExperiment
	if err := j.Append(rec); err != nil {
		j.Close()
		return err
	}
	if err := j.Close(); err != nil {
		return err
	}
	if _, ok := man.Config.Entry(rec.Model); !ok {
		man.Config.Models = append(man.Config.Models, results.ModelEntry{Name: rec.Model})
	}
	if !slices.Contains(man.Config.Granularities, rec.Level) {
		man.Config.Granularities = append(man.Config.Granularities, rec.Level)
	}
	man.Trials, man.Grid = len(done)+1, len(done)+1
	// The hash covers the recorded subjects and levels and the specs they
	// were scored on, as a run's covers its config.
	man.ConfigHash = ConfigHash(man.Config)
	return results.WriteManifest(out, man)
}
