package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Recording is what granite serve --record writes when it stops: the
// scenario an interactive client (Claude Desktop, an IDE) was given, every
// call of every session, and the store they left. granite score turns it
// into a trial record.
type Recording struct {
	Domain    string          `json:"domain"`
	Level     mcpdomain.Level `json:"level"`
	Scenario  string          `json:"scenario"`
	Prompt    string          `json:"prompt"`
	StartedAt string          `json:"started_at"`
	EndedAt   string          `json:"ended_at"`
	// Calls are classed as a trial's calls are; Sessions counts the
	// sessions that called a tool.
	Calls    []results.Call `json:"calls"`
	Sessions int            `json:"sessions"`
	// FinalStore is the canonical snapshot of the one store every session
	// shared, which the verdict judges.
	FinalStore json.RawMessage `json:"final_store"`
}

// Recorder serves a scenario's domain at a level on one fresh store that
// every session shares (a person may reconnect, or a client open several
// sessions; the task's state is one), and records every call.
type Recorder struct {
	task  *scenarioTask
	store mcpdomain.Store
	srv   *server.MCPServer
	calls callRecorder
	start time.Time
}

// NewRecorder prepares the recording of scenario id (which names its
// domain) at a level.
func NewRecorder(spec *speclang.Spec, lookup Lookup, id string, level mcpdomain.Level) (*Recorder, error) {
	t, err := scenarioByID(spec, lookup, id, level)
	if err != nil {
		return nil, err
	}
	st := t.rt.NewStore()
	srv, err := t.rt.NewServer(level, st)
	if err != nil {
		return nil, err
	}
	return &Recorder{task: t, store: st, srv: srv, start: time.Now()}, nil
}

// scenarioByID finds a scenario by id, in the domain its id names.
func scenarioByID(spec *speclang.Spec, lookup Lookup, id string, level mcpdomain.Level) (*scenarioTask, error) {
	name, _, _ := strings.Cut(id, "-")
	d := spec.Domain(name)
	if d == nil {
		return nil, fmt.Errorf("scenario %q: no domain %q; scenario ids start with their domain, like %s-001", id, name, spec.Domains[0].Name)
	}
	for _, s := range d.Scenarios {
		if s.ID != id {
			continue
		}
		rt, msg := generated(d, lookup)
		if msg != "" {
			return nil, fmt.Errorf("domain %s: %s", d.Name, msg)
		}
		if _, ok := rt.Tools[level]; !ok {
			return nil, fmt.Errorf("unknown level %q: want one of L4, L3, L2, L1", level)
		}
		return &scenarioTask{domain: d, rt: rt, level: level, scenario: s, golds: &goldCache{}}, nil
	}
	return nil, fmt.Errorf("no scenario %q in domain %s (granite list shows them)", id, d.Name)
}

// Prompt is the scenario's prompt, to give the client.
func (r *Recorder) Prompt() string { return r.task.scenario.Prompt }

// Handler serves the recorded server over streamable HTTP with o's
// checks; every session shares the one store.
func (r *Recorder) Handler(o serve.Options) *serve.Handler {
	o.OnCall = r.calls.add
	return serve.NewServerHandler(r.srv, o)
}

// Recording is what was recorded so far.
func (r *Recorder) Recording() *Recording {
	calls, sessions := servedCalls(r.calls.observed(), r.start, r.task.validators())
	return &Recording{Domain: r.task.domain.Name, Level: r.task.level, Scenario: r.task.scenario.ID, Prompt: r.Prompt(),
		StartedAt: r.start.UTC().Format(time.RFC3339Nano), EndedAt: time.Now().UTC().Format(time.RFC3339Nano),
		Calls: calls, Sessions: sessions, FinalStore: r.store.Snapshot()}
}

// WriteFile writes a recording (mode 0600: it holds what the person
// typed into their client's tool calls).
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

// ReadRecording reads a file granite serve --record wrote.
func ReadRecording(path string) (*Recording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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
	return &rec, nil
}

// ScoreRecording turns a recording and the answer the client gave into a
// trial record of the usual schema, scored as a command agent's trial of
// the same calls is: model names the subject (trial id
// <model>/<scenario>/<level>/r1), agent "recorded".
func ScoreRecording(ctx context.Context, spec *speclang.Spec, lookup Lookup, rc *Recording, model, answer string) (*results.Record, error) {
	t, err := scenarioByID(spec, lookup, rc.Scenario, rc.Level)
	if err != nil {
		return nil, err
	}
	if _, err := mcpdomain.Rows(rc.FinalStore); err != nil {
		return nil, fmt.Errorf("the recording's final_store: %w", err)
	}
	rec := &results.Record{TrialID: results.TrialID(model, rc.Scenario, rc.Level, 1), Experiment: "recorded", Model: model,
		Agent: results.AgentRecorded, Repetition: 1, StartedAt: rc.StartedAt, EndedAt: rc.EndedAt, Calls: []results.Call{}}
	t.identify(rec)
	fillServed(rec, t.prompts(), append([]results.Call{}, rc.Calls...), clipAnswer(strings.TrimSpace(answer)))
	rec.StopReason = results.StopAnswer
	g, err := t.golds.gold(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("gold: %w", err)
	}
	m, err := Score(rec, g, rc.FinalStore)
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
