package agent

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
)

// What an MCP server granite serves observed of a subject it cannot see
// inside, as the record's calls and transcript: an agent command's calls,
// and an interactive session's that granite serve --record keeps.

// CallRecorder collects the calls a trial's server answered.
type CallRecorder struct {
	mu    sync.Mutex
	calls []serve.Observed
}

// Add keeps a call as a record would (see results.Call.Cut): an agent
// that sends a thousand 1 MB arguments costs granite kilobytes each.
func (c *CallRecorder) Add(o serve.Observed) {
	if args := results.CutArguments(o.Arguments); len(args) != len(o.Arguments) {
		o.ArgumentsBytes, o.Arguments = len(o.Arguments), args
	}
	if text, cut := results.CutText(o.Text); cut {
		o.TextBytes, o.Text = len(o.Text), text
	}
	if text, cut := results.CutText(o.RPCError); cut {
		o.RPCError = text
	}
	c.mu.Lock()
	c.calls = append(c.calls, o)
	c.mu.Unlock()
}

// Observed returns the calls in the order they came.
func (c *CallRecorder) Observed() []serve.Observed {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.calls)
	slices.SortStableFunc(out, func(a, b serve.Observed) int { return a.Start.Compare(b.Start) })
	return out
}

// ServedCalls turns observed calls into the record's calls, classed as
// the built-in agents' calls are (see Trial.Call), sessions numbered
// in the order they first called a tool. It returns the number of
// sessions.
func ServedCalls(obs []serve.Observed, start time.Time, valid map[string]func(json.RawMessage) bool) ([]results.Call, int) {
	sessions := map[string]int{}
	out := make([]results.Call, 0, len(obs))
	for i, o := range obs {
		if _, ok := sessions[o.Session]; !ok {
			sessions[o.Session] = len(sessions) + 1
		}
		c := results.Call{Turn: i + 1, Tool: o.Tool, Arguments: o.Arguments, Result: o.Text, IsError: o.IsError,
			LatencyMS: float64(o.Duration.Microseconds()) / 1000, Session: sessions[o.Session],
			AtMS: max(0, float64(o.Start.Sub(start).Microseconds())/1000), ArgumentsBytes: o.ArgumentsBytes, ResultBytes: o.TextBytes,
			Fault: o.Fault}
		c.Tool = results.CutName(c.Tool)
		if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
			c.Arguments = json.RawMessage("{}")
		}
		ok, known := valid[o.Tool]
		switch {
		case !known:
			c.IsError, c.ErrorClass = true, results.ErrUnknown
			if c.Result = o.RPCError; c.Result == "" {
				c.Result = o.Text
			}
		case o.RPCError != "":
			c.IsError, c.ErrorClass, c.Result = true, results.ErrMalformed, o.RPCError
		case o.IsError:
			c.ErrorClass = failedCallClass(ok, c.Arguments)
		}
		out = append(out, c)
	}
	return out, len(sessions)
}

// FillServed completes the record of an agent granite served: the user
// turns, each call as the agent's tool call and the tool's reply, and the
// final answer. Turns stays 0: granite does not see an agent's replies.
func FillServed(rec *results.Record, prompts []string, calls []results.Call, answer string) {
	for _, p := range prompts {
		rec.Messages = append(rec.Messages, results.Message{Role: "user", Content: p})
	}
	for _, c := range calls {
		rec.Messages = append(rec.Messages,
			results.Message{Role: "assistant", ToolCalls: []results.MessageCall{{Name: c.Tool, Arguments: c.Arguments}}},
			results.Message{Role: "tool", ToolName: c.Tool, Content: c.Result})
	}
	rec.Messages = append(rec.Messages, results.Message{Role: "assistant", Content: answer})
	rec.Calls = calls
	rec.FinalAnswer = answer
	for _, c := range calls {
		rec.Classify(c.ErrorClass)
	}
}
