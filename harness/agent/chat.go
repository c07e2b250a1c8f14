package agent

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/templates"
)

// A chat model backend (Ollama, an OpenAI-compatible endpoint) plays one
// agent loop, chatLoop: the same turn limits, error classes, stop reasons
// and transcript whatever the wire format. A backend supplies only a
// conversation, which keeps the messages in its own request form.
type conversation interface {
	// user adds a user turn.
	user(text string)
	// reply sends the conversation and, when it succeeds, adds the reply
	// to it. The record gets the request's durations and tokens. A failed
	// reply may still carry what the model wrote (Message.Role set), which
	// the transcript keeps when the model's output is what failed.
	reply(ctx context.Context, rec *results.Record) (modelReply, error)
	// toolResult adds the result of one of the reply's calls.
	toolResult(call replyCall, result results.Call)
	// classify names the error class of a failed reply.
	classify(ctx context.Context, err error) results.ErrorClass
}

// modelReply is one model reply in the record's form.
type modelReply struct {
	Message    results.Message
	Calls      []replyCall
	DoneReason string
}

// replyCall is one tool call of a reply.
type replyCall struct {
	ID, Name string
	Args     json.RawMessage
}

// failure is an error class a backend's client tells apart.
type failure struct {
	is    func(error) bool
	class results.ErrorClass
}

// classifyFailure names the error class of a failed request, the same
// for every wire format: a reply past its bound, the deadline, then the
// first of the backend's own classes the error is, else the transport.
func classifyFailure(ctx context.Context, err error, own ...failure) results.ErrorClass {
	switch {
	case models.IsTooLong(err):
		return results.ErrMalformedReply
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return results.ErrTimeout
	}
	for _, f := range own {
		if f.is(err) {
			return f.class
		}
	}
	return results.ErrTransport
}

// toolCallText spots a tool call the model wrote as text instead of using
// the tool-call channel: a JSON object with a name and arguments, or a
// <tool_call> tag.
var toolCallText = regexp.MustCompile(`(?s)<tool_call>|^\s*(\[\s*)?\{\s*"(name|function)"\s*:`)

// toolCache converts the trial's listed tools into a backend's request
// form T once per tool set: the same server lists the same tools every
// trial.
type toolCache[T any] struct {
	convert func([]mcp.Tool) (T, map[string][]string, error)
	sets    map[string]T
}

func newToolCache[T any](convert func([]mcp.Tool) (T, map[string][]string, error)) *toolCache[T] {
	return &toolCache[T]{convert: convert, sets: map[string]T{}}
}

// of converts a trial's tools, or returns them converted before.
func (c *toolCache[T]) of(tr *Trial) (T, error) {
	if t, ok := c.sets[tr.ToolSet]; ok {
		return t, nil
	}
	t, _, err := c.convert(tr.Tools)
	if err != nil {
		return t, err
	}
	c.sets[tr.ToolSet] = t
	return t, nil
}

// playChat is a chat model's agent loop, the same for every wire format:
// the trial's tools in the backend's form, the system prompt, the request
// options recorded, then chatLoop over the conversation start begins with
// them.
func playChat[T any](ctx context.Context, tr *Trial, tools *toolCache[T], options map[string]any, maxTurns int, start func(tools T, sys string) conversation) {
	converted, err := tools.of(tr)
	if err != nil {
		tr.Record.ErrorClass, tr.Record.Error, tr.Record.StopReason = results.ErrTransport, err.Error(), results.StopError
		return
	}
	sys, ok := systemPrompt(tr)
	if !ok {
		return
	}
	tr.Record.Options = options
	chatLoop(ctx, tr, start(converted, sys), sys, maxTurns)
}

// systemPrompt renders the agent's system prompt for a trial, or records
// why it cannot.
func systemPrompt(tr *Trial) (string, bool) {
	var sys strings.Builder
	if err := templates.Agent.Execute(&sys, tr.System); err != nil {
		tr.Record.ErrorClass, tr.Record.Error, tr.Record.StopReason = results.ErrTransport, err.Error(), results.StopError
		return "", false
	}
	return sys.String(), true
}

// chatLoop plays a trial's user turns through a conversation that already
// holds the system prompt sys.
func chatLoop(ctx context.Context, tr *Trial, conv conversation, sys string, maxTurns int) {
	rec := tr.Record
	rec.Messages = []results.Message{{Role: "system", Content: sys}}
	turn := 0
	for i := range tr.Prompts {
		tr.Ask(i)
		conv.user(tr.Prompts[i])
		if !converse(ctx, tr, conv, maxTurns, &turn) {
			return
		}
	}
	tr.end(rec.Messages[len(rec.Messages)-1].Content, turn)
}

// converse runs the model on one user turn until it answers without
// calling a tool (answered) or the trial stops (the record says why).
// Within a user turn, max_agent_turns replies may call tools and one more
// may answer, so that a model calling one tool per reply can finish a
// 10-call scenario under the default of 10; turn counts replies over the
// whole trial.
func converse(ctx context.Context, tr *Trial, conv conversation, maxTurns int, turn *int) bool {
	rec := tr.Record
	for replies := 1; ; replies++ {
		*turn++
		rec.Turns = *turn
		r, err := conv.reply(ctx, rec)
		if err != nil {
			// The failure that stops the trial says why it stopped; the
			// trial's class stays its first failure in time.
			class := conv.classify(ctx, err)
			if class == results.ErrMalformed && r.Message.Role != "" {
				rec.Messages = append(rec.Messages, r.Message) // the garbled reply belongs in the transcript
			}
			rec.Error, rec.StopReason = err.Error(), results.StopError
			if class == results.ErrTimeout {
				rec.StopReason = results.StopTimeout
			}
			rec.Classify(class)
			return false
		}
		rec.DoneReason = r.DoneReason
		// The transcript keeps the reply's tool calls cut as the calls
		// are (see Trial.Call), not a second copy of all they sent.
		r.Message.CutToolCalls()
		rec.Messages = append(rec.Messages, r.Message)
		if len(r.Calls) == 0 {
			if toolCallText.MatchString(r.Message.Content) && rec.ErrorClass == "" {
				rec.ErrorClass, rec.Error = results.ErrMalformed, "the model wrote a tool call as text instead of calling the tool"
			}
			return true
		}
		if replies > maxTurns {
			rec.StopReason = results.StopMaxTurns
			return false
		}
		for _, tc := range r.Calls {
			if tr.atCallLimit() {
				return false
			}
			// The model gets the result whole; the transcript, the
			// record's cut copy.
			c := tr.Call(ctx, *turn, tc.Name, tc.Args)
			kept := rec.Calls[len(rec.Calls)-1]
			rec.Messages = append(rec.Messages, results.Message{Role: "tool", ToolName: kept.Tool, Content: kept.Result})
			conv.toolResult(tc, c)
		}
		if ctx.Err() != nil {
			rec.StopReason = results.StopTimeout
			rec.Classify(results.ErrTimeout)
			return false
		}
	}
}
