package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/mcpgranite/granite/internal/models"
)

// streamed sends a streamed request and puts its chunks together in r.
// It reads each event's raw data through go-openai's stream, so that
// what go-openai's chunk type lacks (see extra) is read too.
func (c *Client) streamed(ctx context.Context, req sdk.ChatCompletionRequest, r *Reply, ex *exchange) error {
	req.StreamOptions = &sdk.StreamOptions{IncludeUsage: true}
	st, err := c.api(ex).CreateChatCompletionStream(ctx, req)
	if err != nil {
		return c.wrap(err, ex)
	}
	defer st.Close()
	var acc accumulator
	var rep models.Repeats
	for {
		data, err := st.RecvRaw()
		if errors.Is(err, io.EOF) {
			break // data: [DONE], or a clean end a finish_reason must have come before
		}
		if err != nil {
			acc.into(r)
			return c.wrap(err, ex)
		}
		var chunk sdk.ChatCompletionStreamResponse
		if err := json.Unmarshal(data, &chunk); err != nil {
			return fmt.Errorf("the endpoint sent an event that is not a chat.completion.chunk: %w", err)
		}
		for _, ch := range chunk.Choices {
			if ch.Index == 0 {
				rep.Add(ch.Delta.Content)
			}
		}
		if chunk.SystemFingerprint != "" {
			r.Fingerprint = chunk.SystemFingerprint
		}
		if !acc.add(&chunk, extras(data)) {
			return &IncompleteError{Msg: "the endpoint sent a chunk that does not continue its stream (another id, or a tool-call index out of range)"}
		}
	}
	acc.into(r)
	if r.FinishReason == "" {
		if rep.AtLimit() {
			// Ollama's /v1 ends a reply at its token repeat limit with
			// neither a finish_reason nor [DONE], and no usage.
			r.CompletionTokens = max(r.CompletionTokens, rep.Chunks)
			return &models.RepeatLimitError{Token: rep.Last, Chunks: rep.Chunks}
		}
		// A stream cut without an error: the SSE reader sees a clean end
		// where a proxy closed the connection.
		return &IncompleteError{Msg: "the stream ended before a finish_reason", clean: true}
	}
	return nil
}

// extra is what go-openai's reply and chunk types leave out: the
// reasoning field newer vLLM sends where others send reasoning_content.
type extra struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Reasoning string `json:"reasoning"`
		} `json:"message"`
		Delta struct {
			Reasoning string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
}

// extras reads data's extra, decoding it only when it names its key:
// most events and replies do not.
func extras(data []byte) extra {
	var x extra
	if bytes.Contains(data, []byte(`"reasoning"`)) {
		_ = json.Unmarshal(data, &x)
	}
	return x
}

// maxCallGrowth is how far past the calls so far a chunk's tool-call
// index may reach: sparse indices are a provider's right, an index of a
// billion is not.
const maxCallGrowth = 128

// accumulator puts a stream's chunks together: choice 0's content,
// reasoning and finish reason, its tool calls by index (a call's id and
// name come in one chunk, its arguments in fragments over the next
// ones), and the usage of the final chunk.
type accumulator struct {
	id                 string
	content, reasoning strings.Builder
	calls              []*callParts
	finish             string
	usage              sdk.Usage
}

type callParts struct {
	id         string
	name, args strings.Builder
}

// add adds a chunk and its extra, false when the chunk does not continue
// the stream: another id than the first chunk's, or a tool-call index
// below 0 or too far past the calls so far. An index of -1, which some
// providers send for a single call, is 0.
func (a *accumulator) add(c *sdk.ChatCompletionStreamResponse, x extra) bool {
	if a.id == "" {
		a.id = c.ID
	} else if c.ID != a.id {
		return false
	}
	if c.Usage != nil {
		a.usage = *c.Usage
	}
	for i, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.content.WriteString(ch.Delta.Content)
		if ch.Delta.ReasoningContent != "" {
			a.reasoning.WriteString(ch.Delta.ReasoningContent)
		} else if i < len(x.Choices) {
			a.reasoning.WriteString(x.Choices[i].Delta.Reasoning)
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
		for _, tc := range ch.Delta.ToolCalls {
			n := 0
			if tc.Index != nil && *tc.Index != -1 {
				n = *tc.Index
			}
			if n < 0 || n >= len(a.calls)+maxCallGrowth {
				return false
			}
			for len(a.calls) <= n {
				a.calls = append(a.calls, &callParts{})
			}
			p := a.calls[n]
			if tc.ID != "" {
				p.id = tc.ID
			}
			p.name.WriteString(tc.Function.Name)
			p.args.WriteString(tc.Function.Arguments)
		}
	}
	return true
}

// into puts what a has gathered into r.
func (a *accumulator) into(r *Reply) {
	r.Content, r.Reasoning, r.FinishReason = a.content.String(), a.reasoning.String(), a.finish
	r.PromptTokens, r.CompletionTokens = a.usage.PromptTokens, a.usage.CompletionTokens
	r.ToolCalls = nil
	for _, p := range a.calls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: p.id, Name: p.name.String(), Arguments: p.args.String()})
	}
}
