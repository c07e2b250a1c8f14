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
// backoff until ctx ends. A tool call the model garbled comes back at
// once as a *MalformedError, a reply past its bound in bytes (from the
// num_predict option, see models.ReplyLimit) as a *models.TooLongError:
// asking again would only replay the failure until the caller's
// deadline. The reply is never nil, so that a caller can count what a
// failed attempt cost. No error text holds an Authorization value.
func (c *Client) Chat(ctx context.Context, req *api.ChatRequest) (*Reply, error) {
	r, err := c.chat(ctx, req)
	return r, redact.Err(err)
}

func (c *Client) chat(ctx context.Context, req *api.ChatRequest) (*Reply, error) {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		r := &Reply{}
		done := false
		sctx, sn := withSniff(ctx, numPredict(req.Options))
		// The chunks are gathered in builders, not by +=, which copies
		// all that came before at every chunk: a reply streamed up to
		// its bound cost seconds of copying.
		var content, thinking strings.Builder
		err := c.api.Chat(sctx, req, func(resp api.ChatResponse) error {
			done = done || resp.Done
			r.Message.Role = resp.Message.Role
			content.WriteString(resp.Message.Content)
			thinking.WriteString(resp.Message.Thinking)
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
		if tooLong != nil {
			return r, tooLong
		}
		if err != nil && sn.err() != nil {
			return r, &MalformedError{Msg: "the model's reply is not valid Ollama JSON (tool-call arguments must be an object): " + sn.err().Error()}
		}
		if msg, ok := unparsedToolCall(err); ok {
			return r, &MalformedError{Msg: msg}
		}
		if err == nil && !done {
			// The body ended cleanly but the reply did not: a proxy or a
			// crashed runner cut it. What came is not the model's answer.
			err = ErrCutShort
		}
		if err == nil || !retryable(ctx, err) {
			return r, err
		}
		backoff := time.Duration(float64(250*time.Millisecond) * float64(int(1)<<min(attempt, 4)) * (0.75 + rand.Float64()/2))
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(backoff):
		}
	}
}

// ErrCutShort is a reply whose stream ended before its final chunk
// (done: true); Chat asks again, as for a cut connection.
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
// the load time Ollama reported.
func (c *Client) WarmUp(ctx context.Context, model string, keepAlive *api.Duration, options map[string]any) (time.Duration, error) {
	stream := false
	req := &api.ChatRequest{Model: model, Messages: []api.Message{}, Stream: &stream, KeepAlive: keepAlive, Options: options}
	r, err := c.Chat(ctx, req)
	if err != nil {
		return 0, err
	}
	return r.Metrics.LoadDuration, nil
}

// Show asks the host about a model (/api/show).
func (c *Client) Show(ctx context.Context, model string) (*api.ShowResponse, error) {
	r, err := c.api.Show(ctx, &api.ShowRequest{Model: model})
	return r, redact.Err(err)
}

// List lists the host's local models (/api/tags).
func (c *Client) List(ctx context.Context) (*api.ListResponse, error) {
	r, err := c.api.List(ctx)
	return r, redact.Err(err)
}

// MalformedError is a tool call the model garbled: Ollama could not parse
// it, or the client could not decode the reply Ollama made of it. It is
// the model's failure, not the transport's, and is never retried.
type MalformedError struct{ Msg string }

func (e *MalformedError) Error() string { return e.Msg }

// IsMalformed reports whether err is or wraps a *MalformedError.
func IsMalformed(err error) bool {
	var me *MalformedError
	return errors.As(err, &me)
}

// unparsedToolCall returns Ollama's message when err is Ollama's report
// that it could not parse the tool call the model wrote, "error parsing
// tool call: raw='…', err=…" (ollama/ollama issues 12884, 12064, 11704:
// https://github.com/ollama/ollama/issues/12884). Ollama sends it as an
// HTTP 500 with that error body when nothing was streamed yet or the
// request is not streamed, and as an error line of a 200 stream once
// chunks went out; the client turns the first into an api.StatusError
// and the second into a plain error. Nothing but the text tells it from
// a crashed runner, which is worth a retry, so the text is matched
// anywhere in the message and in any case.
func unparsedToolCall(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	msg := err.Error()
	var se api.StatusError
	if errors.As(err, &se) {
		msg = se.ErrorMessage // without the status Error() puts first
	}
	if strings.Contains(strings.ToLower(msg), "error parsing tool call") {
		return msg, true
	}
	return "", false
}

// retryable reports transient failures: 5xx, connections refused or cut,
// and error lines in a stream. Malformed replies and 4xx are not.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || IsMalformed(err) {
		return false
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500
	}
	return true
}
