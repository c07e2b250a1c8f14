// Package ollama is the client of one Ollama host (docs/api.md of the
// ollama module): chat with the retry policy every caller shares, host
// checks whose errors say what to do next, warm-up and structured output.
// Its wire-format double is ollamatest.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/redact"
)

// Client talks to one Ollama host through a transport that tells the
// model's malformed replies from the transport's failures (see sniff.go).
type Client struct {
	// Host is the host's URL as given.
	Host string
	api  *api.Client
}

// New returns a client of host; hc, when not nil, is the HTTP client to
// build on (its transport is wrapped, never replaced).
func New(host string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("ollama host %q: %w", host, err)
	}
	return &Client{Host: host, api: api.NewClient(u, sniffingClient(hc))}, nil
}

// Reply is one model reply, the chunks of a stream put together.
type Reply struct {
	Message api.Message
	// Metrics are the final chunk's counts and durations.
	Metrics    api.Metrics
	DoneReason string
	// Wait is the time the last attempt took, from request to last byte.
	Wait time.Duration
	// Bytes is what the last attempt read of the reply's body.
	Bytes int64
}

// Chat sends one /api/chat request, retrying transport errors and 5xx with
// backoff until ctx ends. The model's own failures come back at once,
// since asking again would only replay them until the caller's deadline:
// a tool call it garbled as a *MalformedError, a reply Ollama ended at its
// token repeat limit as a *models.RepeatLimitError, a reply Ollama's tool parser
// emptied as a *models.DroppedCallError, a reply past its bound in bytes (from
// the num_predict option, see models.ReplyLimit) as a
// *models.TooLongError; a prompt longer than the context, refused when
// the request says "truncate": false, as a *ContextLengthError. A stream
// that ends before its final chunk is never an answer. The reply is never
// nil, so that a caller can count what a failed attempt cost. No error
// text holds an Authorization value.
func (c *Client) Chat(ctx context.Context, req *api.ChatRequest) (*Reply, error) {
	var r *Reply
	cuts := 0
	err := retry(ctx, func() (bool, error) {
		var err error
		r, err = c.attempt(ctx, req)
		if errors.Is(err, ErrCutShort) {
			// A body that ended cleanly but early, again and again, is
			// no transient failure: give it up after a few.
			cuts++
			return cuts < models.MaxCuts, err
		}
		return retryable(ctx, err), err
	})
	return r, redact.Err(err)
}

// retry calls f until it succeeds or says its error is not worth another
// try, waiting between tries with jittered exponential backoff (250 ms,
// doubling up to 4 s); when ctx ends first, the last error is returned.
func retry(ctx context.Context, f func() (again bool, err error)) error {
	for attempt := 0; ; attempt++ {
		again, err := f()
		if err == nil || !again {
			return err
		}
		backoff := time.Duration(float64(250*time.Millisecond) * float64(int(1)<<min(attempt, 4)) * (0.75 + rand.Float64()/2))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
	}
}

// attempt is one request and what its reply proves: the chunks put
// together, and an error when the reply is not a whole answer.
func (c *Client) attempt(ctx context.Context, req *api.ChatRequest) (*Reply, error) {
	start := time.Now()
	r := &Reply{}
	done := false
	sctx, sn := withSniff(ctx, numPredict(req.Options))
	// The chunks are gathered in builders, not by +=, which copies all
	// that came before at every chunk: a reply streamed up to its bound
	// cost seconds of copying.
	var content, thinking strings.Builder
	var rep models.Repeats
	err := c.api.Chat(sctx, req, func(resp api.ChatResponse) error {
		done = done || resp.Done
		r.Message.Role = resp.Message.Role
		content.WriteString(resp.Message.Content)
		thinking.WriteString(resp.Message.Thinking)
		rep.Add(resp.Message.Content)
		r.Message.ToolCalls = append(r.Message.ToolCalls, resp.Message.ToolCalls...)
		if resp.Done {
			r.Metrics, r.DoneReason = resp.Metrics, resp.DoneReason
		}
		return nil
	})
	r.Message.Content, r.Message.Thinking = content.String(), thinking.String()
	r.Wait = time.Since(start)
	tooLong, read := sn.cut()
	r.Bytes = read
	switch status, readErr := sn.ended(); {
	case tooLong != nil:
		return r, tooLong
	case err != nil && sn.err() != nil:
		return r, &MalformedError{Msg: "the model's reply is not valid Ollama JSON (tool-call arguments must be an object): " + sn.err().Error()}
	case readErr != nil && !done:
		// The deadline passed or the server went away mid-reply.
		// ollama/api hands the line the read cut in two to its decoder
		// and returns that half line as the error, or ends as if the
		// stream had ended well: either way the read's error is the
		// cause. Nothing says how many tokens came; the chunks are
		// about one each.
		r.Metrics.EvalCount = rep.Chunks
		return r, fmt.Errorf("the reply was cut after %d bytes, before its final chunk: %w", read, readErr)
	case err != nil:
		if msg, ok := badFormat(err); ok {
			return r, &FormatError{Msg: msg}
		}
		if msg, ok := unparsedToolCall(err); ok {
			return r, &MalformedError{Msg: msg}
		}
		if msg, ok := contextTooLong(err); ok {
			return r, &ContextLengthError{Msg: msg}
		}
		return r, err
	case status >= http.StatusBadRequest:
		// ollama/api reads an error status with an empty body as no
		// chunks at all, and returns nil.
		return r, api.StatusError{StatusCode: status, Status: http.StatusText(status), ErrorMessage: "the reply's body is empty"}
	case !done:
		r.Metrics.EvalCount = rep.Chunks
		if rep.AtLimit() || !isStreamed(req) {
			// The server ended the body itself: Ollama does that without
			// a done chunk only at its token repeat limit, and answers
			// an unstreamed request that hit it with done: false.
			return r, &models.RepeatLimitError{Token: rep.Last, Chunks: rep.Chunks}
		}
		return r, ErrCutShort
	case r.Metrics.EvalCount > 0 && len(req.Tools) > 0 && r.Message.Content == "" && r.Message.Thinking == "" && len(r.Message.ToolCalls) == 0:
		return r, &models.DroppedCallError{Tokens: r.Metrics.EvalCount}
	}
	return r, nil
}

func isStreamed(req *api.ChatRequest) bool { return req.Stream == nil || *req.Stream }

// ErrCutShort is a reply whose body ended cleanly before its final chunk
// (done: true) with no repeat Ollama would stop at: a proxy ended it. Chat
// asks again, a few times.
var ErrCutShort = errors.New("the reply ended before its final chunk (done: true): the stream was cut")

// numPredict reads the num_predict option, whatever number type holds it;
// 0 when it is unset or not positive (Ollama's -1 is no limit).
func numPredict(opts map[string]any) int64 {
	switch v := opts["num_predict"].(type) {
	case int:
		return int64(max(v, 0))
	case int64:
		return max(v, 0)
	case float64:
		return int64(max(v, 0))
	}
	return 0
}

// Structured asks model for a reply in the JSON Schema format (Ollama's
// constrained decoding), at temperature 0 and without streaming, under
// Chat's retry policy, and returns the reply's text. Ollama constrains
// the decoding, not the meaning: callers validate the text again.
func (c *Client) Structured(ctx context.Context, model string, msgs []api.Message, format json.RawMessage) (string, error) {
	stream := false
	r, err := c.Chat(ctx, &api.ChatRequest{Model: model, Messages: msgs, Stream: &stream, Format: format,
		Options: map[string]any{"temperature": 0}})
	if err != nil {
		return "", err
	}
	return r.Message.Content, nil
}

// WarmUp loads model with the options and keep-alive later requests will
// use, so that load time never lands in a measured request, and returns
// the load time: Ollama's load reply (done_reason "load") carries no
// durations, so it is the request's own wall time unless the reply
// reports one.
func (c *Client) WarmUp(ctx context.Context, model string, keepAlive *api.Duration, options map[string]any) (time.Duration, error) {
	stream := false
	req := &api.ChatRequest{Model: model, Messages: []api.Message{}, Stream: &stream, KeepAlive: keepAlive, Options: options}
	r, err := c.Chat(ctx, req)
	if err != nil {
		return 0, err
	}
	if r.Metrics.LoadDuration > 0 {
		return r.Metrics.LoadDuration, nil
	}
	return r.Wait, nil
}

// Show asks the host about a model (/api/show), retrying transport errors
// and 5xx as Chat does, a few times: it comes between a warm-up and a
// model's trials, where an outage must not end the run.
func (c *Client) Show(ctx context.Context, model string) (*api.ShowResponse, error) {
	var r *api.ShowResponse
	tries := 0
	err := retry(ctx, func() (bool, error) {
		var err error
		r, err = c.api.Show(ctx, &api.ShowRequest{Model: model})
		tries++
		return tries < maxShowTries && retryable(ctx, err), err
	})
	return r, redact.Err(err)
}

// maxShowTries bounds Show's attempts: about 8 s of backoff in all.
const maxShowTries = 6

// List lists the host's local models (/api/tags).
func (c *Client) List(ctx context.Context) (*api.ListResponse, error) {
	r, err := c.api.List(ctx)
	return r, redact.Err(err)
}

// retryable reports transient failures: 5xx, connections refused or cut,
// and error lines in a stream. Malformed replies and 4xx are not.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || IsMalformed(err) || IsContextLength(err) || models.IsRepeatLimit(err) || models.IsDroppedCall(err) || IsFormat(err) || models.IsTooLong(err) {
		return false
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500
	}
	return true
}
