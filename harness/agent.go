package harness

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

// agent plays one trial: it reads the prompt, calls tools through the
// trial's MCP session and leaves its answer in the record.
type agent interface {
	run(ctx context.Context, tr *trialRun)
}

// trialRun is one trial in progress: a fresh server of the trial's task
// (a fresh store at its level, or a replay server), the tools as listed
// over MCP, and the record being filled.
type trialRun struct {
	t     Trial
	sess  *serve.Session
	tools []mcp.Tool
	// valid checks arguments against each listed tool's schema, to tell
	// a schema violation from an error of the tool itself.
	valid map[string]func(json.RawMessage) bool
	// prompts are the user turns, asked one after the other's answer.
	prompts []string
	rec     *results.Record
	// maxCalls is the trial's call cap (Config.CallLimit): an agent loop
	// makes no call past it and stops the trial with StopCallLimit.
	maxCalls int
}

// atCallLimit reports whether the trial has made all the calls its cap
// allows, and if so stops it: the record says the cap and how to raise it.
func (tr *trialRun) atCallLimit() bool {
	if tr.maxCalls <= 0 || len(tr.rec.Calls) < tr.maxCalls {
		return false
	}
	tr.rec.StopReason, tr.rec.Error = results.StopCallLimit, results.CallLimitError(tr.maxCalls)
	return true
}

// ask adds the i-th user turn to the record.
func (tr *trialRun) ask(i int) {
	tr.rec.Messages = append(tr.rec.Messages, results.Message{Role: "user", Content: tr.prompts[i]})
}

// call sends one tool call through MCP tools/call (or refuses a tool the
// server did not list, as a client would) and records it. A failed call
// classes the trial when nothing failed before it: the agent may find a
// failure of its own later (a tool call written as text), and the trial's
// class is the first in time. It returns the call whole, for the agent to
// answer its model with; the record's copy is the last of rec.Calls.
//
// The record keeps the call cut (results.Call.Cut) as soon as it is
// classed, so that a trial holds a bounded copy of what the subject sent
// and of what the server echoed of it, not megabytes per call. A benchmark
// scenario's scoring reads no result; an artifact's output_schema
// assertions read successful results whole, which its replay server (or
// the relay's line bound) keeps bounded, so those are cut only when the
// record is journaled.
func (tr *trialRun) call(ctx context.Context, turn int, name string, args json.RawMessage) results.Call {
	c := results.Call{Turn: turn, Tool: name, Arguments: args}
	if len(c.Arguments) == 0 {
		c.Arguments = json.RawMessage("{}")
	}
	start := time.Now()
	defer func() {
		c.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
		result := c.Result
		c.Cut()
		if !c.IsError && tr.scoresResults() {
			c.Result, c.ResultBytes = result, 0
		}
		tr.rec.Calls = append(tr.rec.Calls, c)
		tr.rec.Classify(c.ErrorClass)
	}()
	valid, ok := tr.valid[name]
	if !ok {
		c.IsError, c.ErrorClass = true, results.ErrUnknown
		c.Result = fmt.Sprintf("unknown tool %q; the tools are: %s", name, strings.Join(toolNames(tr.tools), ", "))
		return c
	}
	res, err := tr.sess.Call(ctx, name, c.Arguments)
	switch {
	case err != nil:
		c.IsError, c.ErrorClass, c.Result = true, results.ErrTool, "call failed: "+err.Error()
	case res.IsError:
		c.IsError, c.Result = true, res.Text
		c.ErrorClass = failedCallClass(valid, c.Arguments)
	default:
		c.Result = res.Text
	}
	return c
}

// scoresResults reports whether the trial's scoring reads successful
// results: an artifact's output_schema assertions do.
func (tr *trialRun) scoresResults() bool {
	switch tr.t.Task.(type) {
	case *artifactTask, *groupedTask:
		return true
	}
	return false
}

// callLogged makes a call (see call) as an agent that writes one tool
// call per reply, and adds that reply and the tool's to the transcript.
// The transcript's copy of the arguments is the call's, cut: the same
// bytes, not a second copy.
func (tr *trialRun) callLogged(ctx context.Context, turn int, name string, args json.RawMessage) results.Call {
	c := tr.call(ctx, turn, name, args)
	kept := tr.rec.Calls[len(tr.rec.Calls)-1]
	tr.rec.Messages = append(tr.rec.Messages,
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

func toolNames(tools []mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

// firstCallError is the class of the trial's first failed call: a
// fallback at the trial's end for calls not made through call, which
// classes the trial as each call fails.
func firstCallError(calls []results.Call) results.ErrorClass {
	for _, c := range calls {
		if c.ErrorClass != "" {
			return c.ErrorClass
		}
	}
	return ""
}

// answerAll answers the current user turn and every later one with the
// same text; calls is the number of calls made before.
func (tr *trialRun) answerAll(text string, calls int) {
	for i := 1; i < len(tr.prompts); i++ {
		tr.rec.Messages = append(tr.rec.Messages, results.Message{Role: "assistant", Content: text})
		tr.ask(i)
	}
	tr.answer(text, calls+len(tr.prompts))
}

// answer ends the trial with a final answer message.
func (tr *trialRun) answer(text string, turns int) {
	tr.rec.Messages = append(tr.rec.Messages, results.Message{Role: "assistant", Content: text})
	tr.end(text, turns)
}

// end ends the trial with the final answer already in the messages.
func (tr *trialRun) end(text string, turns int) {
	tr.rec.FinalAnswer = text
	tr.rec.Turns = turns
	tr.rec.StopReason = results.StopAnswer
}
