package harness

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Recording is what granite serve --record keeps: the scenario an
// interactive client (Claude Desktop, an IDE) was given, every call of
// every session, and the store they left. granite score turns it into a
// trial record. On disk it is a log that grows as calls come (see
// RecordTo), so that a killed server loses none of the calls it answered;
// a whole-file recording (WriteFile, and the corpus) reads as well.
type Recording struct {
	Domain    string      `json:"domain"`
	Level     level.Level `json:"level"`
	Scenario  string      `json:"scenario"`
	Prompt    string      `json:"prompt"`
	StartedAt string      `json:"started_at"`
	EndedAt   string      `json:"ended_at"`
	// Calls are classed as a trial's calls are; Sessions counts the
	// sessions that called a tool.
	Calls    []results.Call `json:"calls"`
	Sessions int            `json:"sessions"`
	// FinalStore is the canonical snapshot of the one store every session
	// shared, which the verdict judges.
	FinalStore json.RawMessage `json:"final_store"`
	// Notes say what reading the file had to make up for: a recording
	// whose server was killed has no end, and maybe a cut last line.
	Notes []string `json:"-"`
}

// Recorder serves a scenario's domain at a level on one fresh store that
// every session shares (a person may reconnect, or a client open several
// sessions; the task's state is one), and records every call.
type Recorder struct {
	task  *scenarioTask
	store mcpdomain.Store
	srv   *server.MCPServer
	calls agent.CallRecorder
	start time.Time
	valid map[string]func(json.RawMessage) bool

	// mu guards the log, which calls of several sessions append to.
	mu  sync.Mutex
	log *recordLog
}

// NewRecorder prepares the recording of scenario id (which names its
// domain) at a level.
func NewRecorder(spec *speclang.Spec, lookup gold.Lookup, id string, level level.Level) (*Recorder, error) {
	t, err := scenarioByID(spec, lookup, id, level)
	if err != nil {
		return nil, err
	}
	st := t.dom.NewStore()
	srv, err := t.dom.NewServer(level, st)
	if err != nil {
		return nil, err
	}
	return &Recorder{task: t, store: st, srv: srv, start: time.Now(), valid: t.validators()}, nil
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
		return &scenarioTask{domain: d, dom: dom, level: level, scenario: s, golds: &goldCache{}}, nil
	}
	return nil, fmt.Errorf("no scenario %q in domain %s (granite list shows them)", id, d.Name)
}

// Prompt is the scenario's prompt, to give the client.
func (r *Recorder) Prompt() string { return r.task.scenario.Prompt }

// Handler serves the recorded server over streamable HTTP with o's
// checks; every session shares the one store. Each call is kept, and
// appended to the file RecordTo started before the client gets its reply.
func (r *Recorder) Handler(o serve.Options) *serve.Handler {
	o.OnCall = func(c serve.Observed) {
		r.calls.Add(c)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.log != nil {
			r.log.add(c, r)
		}
	}
	return serve.NewServerHandler(r.srv, o)
}

// Recording is what was recorded so far.
func (r *Recorder) Recording() *Recording {
	calls, sessions := agent.ServedCalls(r.calls.Observed(), r.start, r.task.validators())
	return &Recording{Domain: r.task.domain.Name, Level: r.task.level, Scenario: r.task.scenario.ID, Prompt: r.Prompt(),
		StartedAt: r.start.UTC().Format(time.RFC3339Nano), EndedAt: time.Now().UTC().Format(time.RFC3339Nano),
		Calls: calls, Sessions: sessions, FinalStore: r.store.Snapshot()}
}

// WriteFile writes a recording whole (mode 0600: it holds what the person
// typed into their client's tool calls); a server records with RecordTo.
func (rec *Recording) WriteFile(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Indented for a reader; the store's bytes come back with Compact
	// (see ReadRecording), which HTML escaping would not allow.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// recordingFormat names the log form of a recording in its first line.
const recordingFormat = "granite-recording-log/1"

// logHeader is the first line of a recording log: the task, and the store
// before any call.
type logHeader struct {
	Format    string          `json:"format"`
	Domain    string          `json:"domain"`
	Level     level.Level     `json:"level"`
	Scenario  string          `json:"scenario"`
	Prompt    string          `json:"prompt"`
	StartedAt string          `json:"started_at"`
	Store     json.RawMessage `json:"store"`
}

// logLine is every later line of a recording log: a call as it was
// answered, the store after it when the call changed it, and, on the
// last line of a server that stopped cleanly, the end.
type logLine struct {
	Call    *results.Call   `json:"call,omitempty"`
	Store   json.RawMessage `json:"store,omitempty"`
	EndedAt string          `json:"ended_at,omitempty"`
}

// recordLog appends a recording's lines to its file, each synced before
// the call's reply goes out, so that kill -9 loses no answered call.
type recordLog struct {
	f    *os.File
	path string
	// sessions numbers sessions as they first call; calls counts them.
	sessions map[string]int
	calls    int
	// store is the last store written, so that reads add no snapshot.
	store []byte
	// err is the first write that failed; Close reports it.
	err error
}

// RecordTo starts the recording file at path (mode 0600: it holds what
// the person typed into their client's tool calls; an existing file is
// replaced): a header line now, then one line per call as it is
// answered, each written and synced before the client reads the reply.
// The cost is one fsync per call; see BenchmarkRecordedCall.
func (r *Recorder) RecordTo(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	store := r.store.Snapshot()
	l := &recordLog{f: f, path: path, sessions: map[string]int{}, store: store}
	l.write(logHeader{Format: recordingFormat, Domain: r.task.domain.Name, Level: r.task.level, Scenario: r.task.scenario.ID,
		Prompt: r.Prompt(), StartedAt: r.start.UTC().Format(time.RFC3339Nano), Store: store})
	if l.err == nil {
		// The file's name must survive a crash too, not only its bytes.
		if dir, err := os.Open(filepath.Dir(path)); err == nil {
			_ = dir.Sync()
			dir.Close()
		}
	}
	if l.err != nil {
		f.Close()
		return l.err
	}
	r.mu.Lock()
	r.log = l
	r.mu.Unlock()
	return nil
}

// Close ends the recording file with the end time (and the store, if a
// call still in flight when the last line was written changed it), and
// reports the first write that failed.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	if l == nil {
		return nil
	}
	r.log = nil
	end := logLine{EndedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if snap := r.store.Snapshot(); !bytes.Equal(snap, l.store) {
		end.Store = snap
	}
	l.write(end)
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

// add appends one answered call, classed as the recording's calls are,
// with the store after it when it changed. The caller holds r.mu.
func (l *recordLog) add(o serve.Observed, r *Recorder) {
	calls, _ := agent.ServedCalls([]serve.Observed{o}, r.start, r.valid)
	c := calls[0]
	if _, ok := l.sessions[o.Session]; !ok {
		l.sessions[o.Session] = len(l.sessions) + 1
	}
	l.calls++
	c.Turn, c.Session = l.calls, l.sessions[o.Session]
	line := logLine{Call: &c}
	if snap := r.store.Snapshot(); !bytes.Equal(snap, l.store) {
		line.Store, l.store = snap, snap
	}
	l.write(line)
}

// write appends v as one line in one write, then syncs; after a failure
// it writes nothing more, so the file stays a prefix of what happened.
func (l *recordLog) write(v any) {
	if l.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.err = fmt.Errorf("record to %s: %w", l.path, err)
	}
}

// ReadRecording reads a file granite serve --record wrote: a log, also
// one whose server was killed (its last line may be cut short: it is
// ignored, and Notes say so), or a whole-file recording.
func ReadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var h logHeader
	var rec *Recording
	if json.Unmarshal(first, &h) == nil && h.Format == recordingFormat {
		rec, err = readLog(path, br, h)
	} else {
		rec, err = readWhole(path, io.MultiReader(bytes.NewReader(first), br))
	}
	if err != nil {
		return nil, err
	}
	if rec.Scenario == "" || rec.Level == "" || len(rec.FinalStore) == 0 {
		return nil, fmt.Errorf("%s: not a recording of granite serve --record (want scenario, level and final_store)", path)
	}
	// The snapshot is canonical compact JSON, which the strict verdict
	// compares byte for byte.
	var b bytes.Buffer
	if err := json.Compact(&b, rec.FinalStore); err != nil {
		return nil, fmt.Errorf("%s: final_store: %w", path, err)
	}
	rec.FinalStore = b.Bytes()
	return rec, nil
}

// readWhole reads a recording written whole (WriteFile).
func readWhole(path string, r io.Reader) (*Recording, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

// readLog reads the lines after a log's header. Calls come in the order
// they were answered; the recording orders them as they came, as a
// whole-file recording does, and numbers turns and sessions in that order.
func readLog(path string, br *bufio.Reader, h logHeader) (*Recording, error) {
	rec := &Recording{Domain: h.Domain, Level: h.Level, Scenario: h.Scenario, Prompt: h.Prompt, StartedAt: h.StartedAt,
		Calls: []results.Call{}, FinalStore: h.Store}
	for n := 2; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var l logLine
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				if err == io.EOF {
					// A line without its newline is one a kill cut
					// short: every line before it was synced whole.
					rec.Notes = append(rec.Notes, fmt.Sprintf("%s:%d: the last line is cut short (granite serve was killed while writing it): ignored", path, n))
					break
				}
				return nil, fmt.Errorf("%s:%d: not a line of a recording log: %w", path, n, jerr)
			}
			if l.Call != nil {
				rec.Calls = append(rec.Calls, *l.Call)
			}
			if len(l.Store) > 0 {
				rec.FinalStore = l.Store
			}
			if l.EndedAt != "" {
				rec.EndedAt = l.EndedAt
			}
		}
		if err == io.EOF {
			break
		}
	}
	rec.Sessions = orderCalls(rec.Calls)
	if rec.EndedAt == "" {
		rec.EndedAt = lastCallEnd(rec)
		rec.Notes = append(rec.Notes, fmt.Sprintf("%s: the recording has no end (granite serve did not stop cleanly, e.g. kill -9): "+
			"scored are its %d calls and the store after the last of them, ending at the last call", path, len(rec.Calls)))
	}
	return rec, nil
}

// orderCalls sorts calls by when they came and numbers their turns, and
// their sessions in the order each first called; it returns the sessions.
func orderCalls(calls []results.Call) int {
	slices.SortStableFunc(calls, func(a, b results.Call) int { return cmp.Compare(a.AtMS, b.AtMS) })
	sessions := map[int]int{}
	for i := range calls {
		if _, ok := sessions[calls[i].Session]; !ok {
			sessions[calls[i].Session] = len(sessions) + 1
		}
		calls[i].Turn, calls[i].Session = i+1, sessions[calls[i].Session]
	}
	return len(sessions)
}

// lastCallEnd is when the last answered call ended, or the start when
// there was none: the end of a recording whose server was killed.
func lastCallEnd(rec *Recording) string {
	start, err := time.Parse(time.RFC3339Nano, rec.StartedAt)
	if err != nil {
		return rec.StartedAt
	}
	var end float64
	for _, c := range rec.Calls {
		end = max(end, c.AtMS+c.LatencyMS)
	}
	return start.Add(time.Duration(end * float64(time.Millisecond))).UTC().Format(time.RFC3339Nano)
}

// ScoreRecording turns a recording and the answer the client gave into a
// trial record of the usual schema, scored as a command agent's trial of
// the same calls is: model names the subject (trial id
// <model>/<scenario>/<level>/r1), agent "recorded".
func ScoreRecording(ctx context.Context, spec *speclang.Spec, lookup gold.Lookup, rc *Recording, model, answer string) (*results.Record, error) {
	t, err := scenarioByID(spec, lookup, rc.Scenario, rc.Level)
	if err != nil {
		return nil, err
	}
	if _, err := mcpdomain.Rows(rc.FinalStore); err != nil {
		return nil, fmt.Errorf("the recording's final_store: %w", err)
	}
	rec := &results.Record{TrialID: results.TrialID(model, rc.Scenario, rc.Level, 1), Experiment: recordedExperiment, Model: model,
		Agent: results.AgentRecorded, Repetition: 1, StartedAt: rc.StartedAt, EndedAt: rc.EndedAt, Calls: []results.Call{}}
	t.identify(rec)
	agent.FillServed(rec, t.prompts(), append([]results.Call{}, rc.Calls...), agent.ClipAnswer(strings.TrimSpace(answer)))
	rec.StopReason = results.StopAnswer
	g, err := t.golds.gold(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("gold: %w", err)
	}
	m, err := score.Score(rec, g, rc.FinalStore)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	start, err1 := time.Parse(time.RFC3339Nano, rc.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, rc.EndedAt)
	if err1 == nil && err2 == nil {
		m.WallS = end.Sub(start).Seconds()
	}
	rec.Metrics = m
	return rec, nil
}

// CorpusEntry is one recording of a corpus folder: agents' work on a
// scenario, <domain>/<scenario>.<level>.record.json, with the answer it
// gave (.answer.txt) and, when the agent was wrong, why (.agent-wrong.txt).
type CorpusEntry struct {
	Name      string // <scenario>.<level>
	Recording *Recording
	Answer    string
	Wrong     string // empty for a right solution
}

// ReadCorpus reads every recording of a corpus folder, in file order; a
// recording without its answer is an error.
func ReadCorpus(dir string) ([]CorpusEntry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.record.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no <domain>/<scenario>.<level>.record.json recordings in it", dir)
	}
	var out []CorpusEntry
	for _, f := range files {
		base := strings.TrimSuffix(f, ".record.json")
		rc, err := ReadRecording(f)
		if err != nil {
			return nil, err
		}
		answer, err := os.ReadFile(base + ".answer.txt")
		if err != nil {
			return nil, fmt.Errorf("recording %s has no answer: %w", f, err)
		}
		wrong, _ := os.ReadFile(base + ".agent-wrong.txt")
		out = append(out, CorpusEntry{filepath.Base(base), rc, string(answer), strings.TrimSpace(string(wrong))})
	}
	return out, nil
}

// MutateRecording proves the verdict on a recording of a right solution:
// every variant the catalogue derives from its answer, final store and
// calls' outputs (score.Operators) is scored against the scenario's gold
// at the recording's level.
func MutateRecording(ctx context.Context, spec *speclang.Spec, lookup gold.Lookup, rc *Recording, answer string) ([]score.VariantVerdict, error) {
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
