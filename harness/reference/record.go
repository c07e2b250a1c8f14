package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/speclang"
)

// This file turns one condition, its scenario and its trace into a trial
// record, re-scored.

// Faults is the fault setting a condition's trial is recorded under:
// none (the zero setting) when the reference injected no fault, else a
// setting named for its rate (fr0.2), so that the same scenario, level
// and repetition at two fault rates are two trials, and a report compares
// the rates as it compares any fault settings (docs/faults.md). The
// faults are the reference's injector's, which granite does not draw: the
// setting names its rate, not its kinds.
func (c *Condition) Faults() faults.Setting {
	if c.FaultRate == 0 {
		return faults.Setting{}
	}
	return faults.Setting{Name: "fr" + paper.FloatText(c.FaultRate), Rate: c.FaultRate}
}

// TrialID is the condition's trial id. Granite counts repetitions from 1,
// the reference from 0: repetition 0 is r1.
func (c *Condition) TrialID() string {
	return results.FaultTrialID(c.Model, c.Scenario, string(c.Level), c.Faults(), c.Repetition+1)
}

// record is a condition's trial record. t is its trace, nil when the run
// folder has none: then the record holds what results.jsonl says, and its
// metrics are the recorded ones.
func record(c *Condition, index int, experiment string, s *Scenario, t *Trace) *results.Record {
	rec := &results.Record{
		TrialID: c.TrialID(), Index: index, Experiment: experiment, Model: c.Model, Agent: results.AgentImported,
		Domain: c.Domain, Level: c.Level, Faults: c.Faults().Name, Scenario: c.Scenario, Difficulty: s.Difficulty,
		Repetition: c.Repetition + 1,
		Messages:   []results.Message{{Role: "user", Content: s.UserPrompt}},
		Calls:      []results.Call{},
		Reference:  &results.ReferenceCondition{Granularity: c.Granularity, FaultRate: c.FaultRate, Seed: c.Seed, Recorded: c.Recorded, Error: c.Error},
	}
	sum := c.Summary
	if t == nil {
		rec.StartedAt, rec.EndedAt = span(sum.StartedAt, sum.EndedAt, sum.WallSeconds)
		rec.Turns = sum.LLMTurns
		stop(rec, "", sum.TimedOut, c.Error)
		rec.Metrics = untracedMetrics(c)
		return rec
	}
	rec.Reference.Trace = c.TraceName()
	started, ended := t.StartedAt, t.EndedAt
	if started == nil && ended == nil { // an older trace: the line may say
		started, ended = sum.StartedAt, sum.EndedAt
	}
	rec.StartedAt, rec.EndedAt = span(started, ended, t.WallSeconds)
	rec.Turns = t.LLMTurns
	rec.PromptTokens, rec.CompletionTokens = t.TokensIn, t.TokensOut
	trial := &paper.Trial{Answer: text(t.FinalAnswer), Tokens: t.TokensIn + t.TokensOut}
	for _, r := range t.ToolResponses {
		trial.Errors = append(trial.Errors, r.IsError)
	}
	for i, tc := range t.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = json.RawMessage(`{}`)
		}
		// The reference records no turn of a call: each counts as its own,
		// in order.
		call := results.Call{Turn: i + 1, Tool: tc.Tool, Arguments: args, AtMS: tc.Timestamp * 1000}
		if i < len(t.ToolResponses) {
			r := &t.ToolResponses[i]
			call.Result, call.IsError = responseText(r.Response), r.IsError
			call.LatencyMS = math.Max(0, (r.Timestamp-tc.Timestamp)*1000)
			if r.IsError {
				call.ErrorClass = results.ErrTool
				rec.Classify(results.ErrTool)
			}
		}
		rec.Calls = append(rec.Calls, call)
		trial.Calls = append(trial.Calls, paper.Call{Tool: tc.Tool, Arguments: args})
	}
	rec.FinalAnswer = trial.Answer
	if trial.Answer != "" {
		rec.Messages = append(rec.Messages, results.Message{Role: "assistant", Content: trial.Answer})
	}
	errText := c.Error
	if errText == nil {
		errText = t.Error
	}
	stop(rec, trial.Answer, t.TimedOut, errText)
	pm := paper.Score(trial, s.PaperGold(c.Level))
	m := &results.Metrics{TC: pm.TaskCompletion, TCStrict: pm.TaskCompletion, ZeroToolCall: len(rec.Calls) == 0, Timeout: t.TimedOut,
		WallS: t.WallSeconds, ToolCalls: len(rec.Calls), Paper: pm}
	gold, actions := callGold(s, c)
	m.GoldCalls = len(gold)
	score.NewCallGold(gold, exactArgs, actions).ScoreCalls(m, rec.Calls)
	if m.TC == 0 {
		m.Why = completionWhy(trial.Answer, s.Contains)
	}
	rec.Metrics = m
	return rec
}

// exactArgs are the arguments granite's call metrics compare exactly: an
// action names an operation, not a value.
var exactArgs = map[string]bool{"action": true}

// callGold is the gold granite's call metrics score against: the
// required gold calls of the condition's level (those the reference
// scores), and the tools whose gold calls carry an action argument.
func callGold(s *Scenario, c *Condition) ([]*speclang.Call, map[string]bool) {
	var gold []*speclang.Call
	actions := map[string]bool{}
	for _, g := range s.Gold[c.Level] {
		if _, ok := g.Arguments["action"]; ok {
			actions[g.Tool] = true
		}
		if g.Required {
			gold = append(gold, &speclang.Call{Tool: g.Tool, Args: g.Arguments})
		}
	}
	return gold, actions
}

// completionWhy says why the reference's task completion is 0, which is
// tc of an imported trial: the reference kept no store to judge the task
// by, only the answer.
func completionWhy(answer string, contains []string) []string {
	const basis = " (tc of an imported trial is the reference's task completion, by strings in the answer: the reference keeps no store to judge the task by)"
	if answer == "" {
		return []string{"no final answer" + basis}
	}
	var why []string
	lower := strings.ToLower(answer)
	for _, s := range contains {
		if !strings.Contains(lower, strings.ToLower(s)) {
			why = append(why, fmt.Sprintf("the answer does not contain %q%s", s, basis))
		}
	}
	return why
}

// untracedMetrics are the metrics of a condition without a trace: the
// recorded ones, as metrics.paper, and granite's metrics of the same
// meaning taken from them (tc is the recorded task completion, f1 and
// arg_acc the recorded tool selection F1 and argument accuracy), since
// granite's own need the calls. Nil when the line recorded no metrics.
func untracedMetrics(c *Condition) *results.Metrics {
	p := c.Recorded
	if p == nil {
		return nil
	}
	cp := *p
	return &results.Metrics{TC: p.TaskCompletion, TCStrict: p.TaskCompletion, F1: p.ToolF1, ActionF1: p.ToolF1, ArgAcc: p.ArgAcc, ActionArgAcc: p.ArgAcc,
		RedundantRate: p.RedundantRate, ZeroToolCall: c.Summary.ToolCalls == 0, Timeout: c.Summary.TimedOut, WallS: c.Summary.WallSeconds,
		ToolCalls: c.Summary.ToolCalls, Paper: &cp,
		Why: []string{"imported from results.jsonl alone (the run folder has no trace of it): its metrics are the reference's as recorded, granite's call metrics among them, since granite's own need the calls"}}
}

// stop sets why the trial stopped: answer when it has a final answer,
// else timeout when it timed out, else error when it failed, else answer
// (a trial that ended without text, which the reference records as no
// final answer). A timeout and a failure are classed whatever the answer.
func stop(rec *results.Record, answer string, timedOut bool, errText *string) {
	switch {
	case answer != "":
		rec.StopReason = results.StopAnswer
	case timedOut:
		rec.StopReason = results.StopTimeout
	case errText != nil:
		rec.StopReason = results.StopError
	default:
		rec.StopReason = results.StopAnswer
	}
	if timedOut {
		rec.Classify(results.ErrTimeout)
	}
	if errText != nil {
		rec.Classify(results.ErrAgent)
		rec.Error = *errText
	}
}

// responseText is a tool response as a record keeps a result: the text of
// an MCP result's text content, joined by newlines; a string as it is;
// anything else as its JSON.
func responseText(raw json.RawMessage) string {
	var mcp struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &mcp) == nil && len(mcp.Content) > 0 {
		var parts []string
		for _, c := range mcp.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// span is a trial's start and end as a record keeps them (RFC 3339): the
// reference's times as written when they have a zone, one without a zone
// read as UTC, a missing one derived from the other and the wall time;
// empty when it recorded neither. Times are checked when read (isoTime).
func span(started, ended *string, wallS float64) (string, string) {
	s, sText, sok := isoTime(started)
	e, eText, eok := isoTime(ended)
	wall := time.Duration(wallS * float64(time.Second))
	switch {
	case !sok && !eok:
		return "", ""
	case !eok:
		eText = s.Add(wall).Format(time.RFC3339Nano)
	case !sok:
		sText = e.Add(-wall).Format(time.RFC3339Nano)
	}
	return sText, eText
}

// isoTime reads a time as Python's isoformat writes it, and says it as
// RFC 3339: as written when it has its zone, else read as UTC. False for
// none, or one that is no time (which the readers of results.jsonl and
// traces refuse).
func isoTime(s *string) (time.Time, string, bool) {
	if s == nil || *s == "" {
		return time.Time{}, "", false
	}
	if t, err := time.Parse(time.RFC3339Nano, *s); err == nil {
		return t, *s, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, *s); err == nil {
			return t, t.Format(time.RFC3339Nano), true
		}
	}
	return time.Time{}, "", false
}
