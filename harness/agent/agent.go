// Package agent holds the subjects a trial is played by: Ollama models,
// models of an OpenAI-compatible endpoint, agent programs run as commands
// and the built-in agents, each kind one file behind Backend and
// registered in backends. The runner (package harness) asks the registry
// for a kind's config checks, preflight, workers and record label, and
// hands each trial to an Agent as a Trial: what an agent sees of it.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
)

// An Agent plays one trial: it reads the prompts, calls tools through the
// trial's MCP session and leaves its answer in the record.
type Agent interface {
	Run(ctx context.Context, tr *Trial)
}

// Trial is what an agent sees of one trial in progress, filled by the
// runner: a fresh server of the trial's task (a fresh store at its level,
// or a replay server), the tools as listed over MCP, and the record being
// filled.
type Trial struct {
	Session *serve.Session
	Tools   []mcp.Tool
	// ToolSet names the trial's tools, which every trial with the same
	// name lists identically: a model backend converts them once per name.
	ToolSet string
	// Valid checks arguments against each listed tool's schema, to tell
	// a schema violation from an error of the tool itself.
	Valid map[string]func(json.RawMessage) bool
	// Prompts are the user turns, asked one after the other's answer.
	Prompts []string
	Record  *results.Record
	// MaxCalls is the trial's call cap (Config.CallLimit): an agent loop
	// makes no call past it and stops the trial with StopCallLimit.
	MaxCalls int
	// KeepResults says the trial's scoring reads successful results
	// whole (an artifact's output_schema assertions do): the record keeps
	// them uncut until it is journaled.
	KeepResults bool
	// System is what the agent's system prompt says of the system.
	System System
	// Gold are the calls the oracle makes, by the user turn they answer.
	Gold [][]results.MessageCall
	// OracleAnswer, when set, is what the oracle answers after its last
	// call (a scenario's facts, bound to their subjects); without it the
	// oracle answers with the tools' results.
	OracleAnswer func() string
}

// System is what the agent's system prompt says of the system it serves:
// the fields templates.Agent reads.
type System struct{ Title, Description string }

// atCallLimit reports whether the trial has made all the calls its cap
// allows, and if so stops it: the record says the cap and how to raise it.
func (tr *Trial) atCallLimit() bool {
	if tr.MaxCalls <= 0 || len(tr.Record.Calls) < tr.MaxCalls {
		return false
	}
	tr.Record.StopReason, tr.Record.Error = results.StopCallLimit, results.CallLimitError(tr.MaxCalls)
	return true
}

// Ask adds the i-th user turn to the record.
func (tr *Trial) Ask(i int) {
	tr.Record.Messages = append(tr.Record.Messages, results.Message{Role: "user", Content: tr.Prompts[i]})
}

// Call sends one tool call through MCP tools/call (or refuses a tool the
// server did not list, as a client would) and records it. A failed call
// classes the trial when nothing failed before it: the agent may find a
// failure of its own later (a tool call written as text), and the trial's
// class is the first in time. It returns the call whole, for the agent to
// answer its model with; the record's copy is the last of Record.Calls.
//
// The record keeps the call cut (results.Call.Cut) as soon as it is
// classed, so that a trial holds a bounded copy of what the subject sent
// and of what the server echoed of it, not megabytes per call. A benchmark
// scenario's scoring reads no result; an artifact's output_schema
// assertions read successful results whole, which its replay server (or
// the relay's line bound) keeps bounded, so those are cut only when the
// record is journaled.
func (tr *Trial) Call(ctx context.Context, turn int, name string, args json.RawMessage) results.Call {
	c := results.Call{Turn: turn, Tool: name, Arguments: args}
	if len(c.Arguments) == 0 {
		c.Arguments = json.RawMessage("{}")
	}
	start := time.Now()
	defer func() {
		c.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
		result := c.Result
		c.Cut()
		if !c.IsError && tr.KeepResults {
			c.Result, c.ResultBytes = result, 0
		}
		tr.Record.Calls = append(tr.Record.Calls, c)
		tr.Record.Classify(c.ErrorClass)
	}()
	valid, ok := tr.Valid[name]
	if !ok {
		c.IsError, c.ErrorClass = true, results.ErrUnknown
		c.Result = fmt.Sprintf("unknown tool %q; the tools are: %s", name, strings.Join(toolNames(tr.Tools), ", "))
		return c
	}
	res, err := tr.Session.Call(ctx, name, c.Arguments)
	switch {
	case err != nil:
		c.IsError, c.ErrorClass, c.Result = true, results.ErrTool, "call failed: "+err.Error()
	case res.IsError:
		c.IsError, c.Result = true, res.Text
		c.ErrorClass = failedCallClass(valid, c.Arguments)
	default:
		c.Result = res.Text
	}
	c.Fault = res.Fault
	return c
}

// CallLogged makes a call (see Call) as an agent that writes one tool
// call per reply, and adds that reply and the tool's to the transcript.
// The transcript's copy of the arguments is the call's, cut: the same
// bytes, not a second copy.
func (tr *Trial) CallLogged(ctx context.Context, turn int, name string, args json.RawMessage) results.Call {
	c := tr.Call(ctx, turn, name, args)
	kept := tr.Record.Calls[len(tr.Record.Calls)-1]
	tr.Record.Messages = append(tr.Record.Messages,
		results.Message{Role: "assistant", ToolCalls: []results.MessageCall{{Name: kept.Tool, Arguments: kept.Arguments}}},
		results.Message{Role: "tool", ToolName: kept.Tool, Content: kept.Result})
	return c
}

// failedCallClass is the class of a call the server answered with an
// error: a schema violation when the arguments fail the tool's schema,
// else an error of the tool itself.
func failedCallClass(valid func(json.RawMessage) bool, args json.RawMessage) results.ErrorClass {
	if !valid(args) {
		return results.ErrSchema
	}
	return results.ErrTool
}

// toolNames are the names of the listed tools, sorted, for a message.
func toolNames(tools []mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

// answerAll answers the current user turn and every later one with the
// same text; calls is the number of calls made before.
func (tr *Trial) answerAll(text string, calls int) {
	for i := 1; i < len(tr.Prompts); i++ {
		tr.Record.Messages = append(tr.Record.Messages, results.Message{Role: "assistant", Content: text})
		tr.Ask(i)
	}
	tr.Answer(text, calls+len(tr.Prompts))
}

// Answer ends the trial with a final answer message.
func (tr *Trial) Answer(text string, turns int) {
	tr.Record.Messages = append(tr.Record.Messages, results.Message{Role: "assistant", Content: text})
	tr.end(text, turns)
}

// end ends the trial with the final answer already in the messages.
func (tr *Trial) end(text string, turns int) {
	tr.Record.FinalAnswer = text
	tr.Record.Turns = turns
	tr.Record.StopReason = results.StopAnswer
}
