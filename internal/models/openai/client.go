// Package openai is the client of one OpenAI-compatible Chat Completions
// endpoint (vLLM, SGLang, llama.cpp's llama-server, LM Studio, TGI, a
// hosted API) through github.com/sashabaranov/go-openai, one package
// without dependencies: chat with the retry policy every caller shares,
// streamed (SSE with usage) or not, the endpoint check of a run's
// preflight and a warm-up. Its wire-format double is openaitest.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/redact"
)

// Client talks to one endpoint. go-openai never retries: Chat retries
// until the caller's deadline, which a fixed retry count cannot.
type Client struct {
	// BaseURL is the endpoint's base URL as given (…/v1).
	BaseURL string
	hc      *http.Client
	// key is the API key, taken out of every error text the client
	// returns: an endpoint may quote it back.
	key string
	// sleep waits d between attempts, false when ctx ended first.
	sleep func(ctx context.Context, d time.Duration) bool
}

// New returns a client of baseURL that sends apiKey as a bearer token
// when it is not empty. Nothing is read from the environment
// (OPENAI_API_KEY, OPENAI_ORG_ID, …), and no organization or project
// header is sent: a key meant for api.openai.com must never go to a model
// server that is not it. hc, when not nil, is the HTTP client to use.
func New(baseURL, apiKey string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{BaseURL: baseURL, hc: hc, key: apiKey, sleep: sleep}
}

// api returns a go-openai client whose requests go through ex: go-openai
// takes its HTTP client when it is made, and each exchange keeps its own
// bound and what it saw.
func (c *Client) api(ex *exchange) *sdk.Client {
	cfg := sdk.DefaultConfig(c.key)
	cfg.BaseURL, cfg.HTTPClient = c.BaseURL, ex
	return sdk.NewClientWithConfig(cfg)
}

// ToolCall is one tool call of a reply, its arguments as the model wrote
// them.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Reply is one model reply, the chunks of a stream put together.
type Reply struct {
	Content string
	// Reasoning is the reasoning_content (or reasoning) vLLM, SGLang and
	// DeepSeek-style servers send beside the content.
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string
	// PromptTokens and CompletionTokens are the endpoint's usage counts
	// (the final usage chunk of a stream).
	PromptTokens     int
	CompletionTokens int
	// Wait is the time the last attempt took, from request to last byte.
	Wait time.Duration
	// Attempts counts the requests made for this reply.
	Attempts int
	// Bytes is what the last attempt read of the reply's body.
	Bytes int64
	// Fingerprint is the reply's system_fingerprint: "fp_ollama" from
	// Ollama's /v1.
	Fingerprint string
}

// ollamaFingerprint is the system_fingerprint of Ollama's /v1 replies.
const ollamaFingerprint = "fp_ollama"

// Chat sends one chat completion request, streamed (with usage in a final
// chunk) or not, retrying with backoff until ctx ends: 5xx, connections
// refused or cut and streams cut short; a 429 waits what Retry-After
// says, but never less than the backoff. The temperature is always sent,
// 0 included (see fill). Tool-call arguments that are not a JSON object
// come back at once as a *MalformedError, an over-long context as a
// *ContextLengthError, a reply past its bound in bytes (see
// models.ReplyLimit) as a *models.TooLongError: asking again would
// replay the same failure until the deadline. The reply is never nil, so
// that a caller can count what a failed attempt cost. No error text holds
// the key or an Authorization value.
func (c *Client) Chat(ctx context.Context, req sdk.ChatCompletionRequest, stream bool) (*Reply, error) {
	r, err := c.chat(ctx, req, stream)
	return r, c.redact(err)
}

func (c *Client) chat(ctx context.Context, req sdk.ChatCompletionRequest, stream bool) (*Reply, error) {
	cuts := 0
	for attempt := 0; ; attempt++ {
		start := time.Now()
		r := &Reply{}
		ex := &exchange{hc: c.hc, maxTokens: int64(req.MaxTokens), keep: !stream}
		var err error
		if stream {
			err = c.streamed(ctx, req, r, ex)
		} else {
			err = c.whole(ctx, req, r, ex)
		}
		r.Wait, r.Attempts, r.Bytes = time.Since(start), attempt+1, ex.read
		if err == nil {
			err = checkArguments(r.ToolCalls)
		}
		if err == nil && r.Fingerprint == ollamaFingerprint && len(req.Tools) > 0 && r.CompletionTokens > 0 &&
			strings.TrimSpace(r.Content) == "" && r.Reasoning == "" && len(r.ToolCalls) == 0 {
			// Ollama's tool parser dropped what the model wrote.
			err = &models.DroppedCallError{Tokens: r.CompletionTokens}
		}
		if ie := (*IncompleteError)(nil); errors.As(err, &ie) && ie.clean {
			if cuts++; cuts >= models.MaxCuts {
				return r, fmt.Errorf("%w, %d times in a row: the server ends its replies so", err, cuts)
			}
		}
		if err == nil || !retryable(ctx, err) {
			return r, err
		}
		wait := backoff(attempt)
		if ra, ok := retryAfter(err); ok {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < ra {
				return r, fmt.Errorf("%w (Retry-After %s is past the trial's deadline)", err, ra)
			}
			wait = max(wait, ra)
		}
		if !c.sleep(ctx, wait) {
			return r, err
		}
	}
}

// backoff is the wait before the retry after attempt (from 0): 250 ms
// doubling up to 4 s, plus up to a quarter at random so that parallel
// trials do not retry in step. It is also the floor under a Retry-After:
// a server answering "Retry-After: 0" to every request was asked 216
// times in 10 s.
func backoff(attempt int) time.Duration {
	return time.Duration(float64(250*time.Millisecond) * float64(int(1)<<min(attempt, 4)) * (1 + rand.Float64()/4))
}

// exchange is the HTTP doer of one request and its reply. It fills in
// what go-openai leaves out of a chat request (see fill), cuts the reply
// at the bound of maxTokens (0: none set), counts what it read, and keeps
// what go-openai's errors and types do not carry: the reply's header (a
// Retry-After) and, when keep is set, its bytes (newer vLLM's reasoning).
type exchange struct {
	hc        *http.Client
	maxTokens int64
	keep      bool
	read      int64
	header    http.Header
	body      bytes.Buffer
}

// Do sends req: the only POST the client makes is a chat request.
func (ex *exchange) Do(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err == nil {
			body, err = fill(body)
		}
		if err != nil {
			return nil, fmt.Errorf("fill in the chat request: %w", err)
		}
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Body, _ = req.GetBody()
	}
	resp, err := ex.hc.Do(req)
	if err != nil {
		return nil, err
	}
	ex.header = resp.Header
	resp.Body = models.LimitBody(resp.Body, ex.maxTokens, &ex.read)
	if ex.keep {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, &ex.body), resp.Body}
	}
	return resp, nil
}

// fill writes into a chat request's JSON what go-openai leaves out as a
// zero value (its issue 9): a temperature of 0, greedy decoding, which a
// server would take as its default of 1 when missing (the issue's
// workaround, math.SmallestNonzeroFloat32, overflows llama.cpp's logits),
// and the empty content of a message without tool calls (a tool's empty
// result, an empty answer), which OpenAI's API refuses when missing.
func fill(body []byte) ([]byte, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if _, ok := req["temperature"]; !ok {
		req["temperature"] = json.RawMessage("0")
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(req["messages"], &msgs); err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if _, ok := m["content"]; !ok && m["tool_calls"] == nil {
			m["content"] = json.RawMessage(`""`)
		}
	}
	var err error
	if req["messages"], err = json.Marshal(msgs); err != nil {
		return nil, err
	}
	return json.Marshal(req)
}

// redact takes the key and any credential out of err's text.
func (c *Client) redact(err error) error { return redact.Err(err, c.key) }

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// whole sends a request without streaming and fills r.
func (c *Client) whole(ctx context.Context, req sdk.ChatCompletionRequest, r *Reply, ex *exchange) error {
	res, err := c.api(ex).CreateChatCompletion(ctx, req)
	if err != nil {
		return c.wrap(err, ex)
	}
	r.PromptTokens, r.CompletionTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens
	if len(res.Choices) == 0 {
		return &IncompleteError{Msg: "the endpoint's reply has no choices"}
	}
	ch := res.Choices[0]
	r.FinishReason, r.Content, r.Reasoning, r.Fingerprint = string(ch.FinishReason), ch.Message.Content, ch.Message.ReasoningContent, res.SystemFingerprint
	if x := extras(ex.body.Bytes()); r.Reasoning == "" && len(x.Choices) > 0 {
		r.Reasoning = x.Choices[0].Message.Reasoning
	}
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if piece, ok := models.RepeatedTail(r.Content); ok && r.FinishReason == "" {
		// Ollama's /v1 answers an unstreamed request its repeat limit
		// ended with finish_reason null.
		return &models.RepeatLimitError{Token: strings.TrimSpace(piece), Chunks: r.CompletionTokens}
	}
	return nil
}

// checkArguments refuses tool-call arguments that are not a JSON object;
// an empty string is no arguments, as llama.cpp sends for a call without
// parameters.
func checkArguments(calls []ToolCall) error {
	for _, tc := range calls {
		a := strings.TrimSpace(tc.Arguments)
		if a == "" {
			continue
		}
		var obj map[string]json.RawMessage
		if !strings.HasPrefix(a, "{") || json.Unmarshal([]byte(a), &obj) != nil {
			return &MalformedError{Msg: fmt.Sprintf("the model's arguments to %s are not a JSON object: %s", tc.Name, clip(a, 200))}
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// wrap turns go-openai's errors into the package's: an HTTP error with
// the endpoint's message (go-openai's text holds the status line and the
// whole body) with the key taken out, an over-long context as a
// *ContextLengthError, an error event in a stream as the
// *IncompleteError it is, a reply past its bound as the
// *models.TooLongError it is.
func (c *Client) wrap(err error, ex *exchange) error {
	var te *models.TooLongError
	if errors.As(err, &te) {
		return te // go-openai's "error, reading response body" adds nothing
	}
	var (
		status         int
		msg, typ, code string
		re             *sdk.RequestError
		ae             *sdk.APIError
	)
	switch {
	case errors.As(err, &re): // a body that is not OpenAI's {"error": {…}}; first, as it may wrap an empty *APIError
		status = re.HTTPStatusCode
		msg, typ = bodyMessage(re.Body)
	case errors.As(err, &ae) && ae.HTTPStatusCode == 0: // go-openai's stream reader read an error event
		return &IncompleteError{Msg: "the endpoint's stream ended with an error: " + ae.Message}
	case errors.As(err, &ae):
		status, msg, typ = ae.HTTPStatusCode, ae.Message, ae.Type
		code, _ = ae.Code.(string)
	default:
		return err
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	se := &StatusError{StatusCode: status, Msg: redact.Text(msg, c.key), header: ex.header, err: err}
	if status == http.StatusBadRequest && isContextLength(code, typ, msg) {
		return &ContextLengthError{StatusError: se}
	}
	if status == http.StatusInternalServerError && models.ParserFailure(msg) {
		// Ollama's /v1 reports a tool call its parser could not read as
		// a 500, like a crashed runner; asking again replays it.
		return &MalformedError{Msg: se.Msg}
	}
	return se
}

// bodyMessage reads the message of an error body that is not OpenAI's
// {"error": {…}}: vLLM's and SGLang's top-level {"message", "type"},
// TGI's {"error": "…", "error_type"}, FastAPI's {"detail"}.
func bodyMessage(data []byte) (msg, typ string) {
	var e struct {
		Message   string `json:"message"`
		Type      string `json:"type"`
		Error     any    `json:"error"`
		ErrorType string `json:"error_type"`
		Detail    any    `json:"detail"`
	}
	if json.Unmarshal(data, &e) != nil {
		return strings.TrimSpace(clip(string(data), 500)), ""
	}
	switch {
	case e.Message != "":
		return e.Message, e.Type
	case e.Error != nil:
		if s, ok := e.Error.(string); ok {
			return s, e.ErrorType
		}
	case e.Detail != nil:
		if s, ok := e.Detail.(string); ok {
			return s, ""
		}
		b, _ := json.Marshal(e.Detail)
		return clip(string(b), 500), ""
	}
	return strings.TrimSpace(clip(string(data), 500)), ""
}

// isContextLength recognises the ways servers say a request is longer
// than the model's context: OpenAI's code context_length_exceeded, vLLM's
// "maximum context length is N tokens", llama.cpp's
// exceed_context_size_error, SGLang's and TGI's wordings.
func isContextLength(code, typ, msg string) bool {
	if code == "context_length_exceeded" || strings.Contains(typ, "exceed_context_size") {
		return true
	}
	m := strings.ToLower(msg)
	for _, w := range []string{"context length", "context_length", "context size", "context window", "exceeds the available context", "too many tokens", "input is too long"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// StatusError is an HTTP error of the endpoint with its message.
type StatusError struct {
	StatusCode int
	Msg        string
	header     http.Header
	err        error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Msg)
}

func (e *StatusError) Unwrap() error { return e.err }

// ContextLengthError is a request the endpoint refused as longer than the
// model's context: the conversation outgrew it, which no retry mends.
type ContextLengthError struct{ *StatusError }

// IsContextLength reports whether err is or wraps a *ContextLengthError.
func IsContextLength(err error) bool {
	var ce *ContextLengthError
	return errors.As(err, &ce)
}

// MalformedError is a tool call whose arguments are not a JSON object:
// the model's failure, not the transport's, never retried.
type MalformedError struct{ Msg string }

func (e *MalformedError) Error() string { return e.Msg }

// IsMalformed reports whether err is or wraps a *MalformedError.
func IsMalformed(err error) bool {
	var me *MalformedError
	return errors.As(err, &me)
}

// IncompleteError is a reply that stopped short: a stream that ended
// without a finish_reason, or chunks that do not belong together.
type IncompleteError struct {
	Msg string
	// clean marks a stream whose body ended well without a finish_reason
	// (see models.MaxCuts).
	clean bool
}

func (e *IncompleteError) Error() string { return e.Msg }

// retryable reports transient failures: 429, 5xx, connections refused or
// cut, streams cut short or ended by an error event (an
// *IncompleteError). The model's
// malformed calls, an over-long context, a reply past its bound and
// other 4xx are not.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || IsMalformed(err) || IsContextLength(err) || models.IsTooLong(err) || models.IsRepeatLimit(err) || models.IsDroppedCall(err) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500
	}
	var ie *IncompleteError
	return errors.As(err, &ie) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || isNet(err)
}

func isNet(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// retryAfter reads a 429's or 503's Retry-After: seconds, or an HTTP date
// (retry-after-ms, OpenAI's own, first).
func retryAfter(err error) (time.Duration, bool) {
	var se *StatusError
	if !errors.As(err, &se) || se.header == nil {
		return 0, false
	}
	if ms, err := strconv.ParseFloat(se.header.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := se.header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// Models lists the model ids the endpoint serves (GET {base}/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	ex := &exchange{hc: c.hc}
	list, err := c.api(ex).ListModels(ctx)
	if err != nil {
		return nil, c.redact(c.wrap(err, ex))
	}
	var ids []string
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// Check reports whether the endpoint answers within 10 seconds and lists
// model; its errors name the URL, the model and what the endpoint lists,
// never the key.
func (c *Client) Check(ctx context.Context, model string) error {
	return c.redact(c.check(ctx, model))
}

func (c *Client) check(ctx context.Context, model string) error {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ids, err := c.Models(hctx)
	cancel()
	if err != nil {
		var se *StatusError
		switch {
		case errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden):
			return fmt.Errorf("GET %s/models refused the key (%v): set the environment variable the model entry's api_key_env names", c.BaseURL, err)
		case errors.Is(err, syscall.ECONNREFUSED):
			return fmt.Errorf("GET %s/models: connection refused: start the model server there, or fix base_url", c.BaseURL)
		}
		return fmt.Errorf("GET %s/models: %v: expected an OpenAI-compatible endpoint; base_url usually ends in /v1", c.BaseURL, err)
	}
	// Ollama lists tags whole ("tiny:latest") and chats with an untagged
	// name as its ":latest", as the ollama backend's check does.
	if !slices.Contains(ids, model) && (strings.Contains(model, ":") || !slices.Contains(ids, model+":latest")) {
		listed := "nothing"
		if len(ids) > 0 {
			listed = strings.Join(ids, ", ")
		}
		return fmt.Errorf("GET %s/models does not list model %q; it lists %s: set the entry's model to one of them, or serve %s there", c.BaseURL, model, listed, model)
	}
	return nil
}

// ServerContext asks the server, after a warm-up, how many tokens of
// context the model was loaded with, since the OpenAI API has no field to
// set it: vLLM's /models lists max_model_len, Ollama's /api/ps (beside
// its /v1) the loaded model's context_length. 0 when the server says
// neither.
func (c *Client) ServerContext(ctx context.Context, model string) int {
	var vllm struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if c.getJSON(ctx, strings.TrimSuffix(c.BaseURL, "/")+"/models", &vllm) {
		for _, m := range vllm.Data {
			if m.ID == model && m.MaxModelLen > 0 {
				return m.MaxModelLen
			}
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	root := strings.TrimSuffix(strings.TrimSuffix(c.BaseURL, "/"), "/v1")
	if c.getJSON(ctx, root+"/api/ps", &ps) {
		for _, m := range ps.Models {
			if m.Name == model || m.Model == model || m.Name == model+":latest" {
				return m.ContextLength
			}
		}
	}
	return 0
}

// getJSON GETs url with the endpoint's key and decodes a 200's JSON body
// into v, reporting whether it did.
func (c *Client) getJSON(ctx context.Context, url string, v any) bool {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(hctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v) == nil
}

// WarmUp sends one short request, so that loading the model, compiling
// its graphs and filling caches never land in a measured trial.
func (c *Client) WarmUp(ctx context.Context, model string, maxTokens int) (time.Duration, error) {
	start := time.Now()
	_, err := c.Chat(ctx, sdk.ChatCompletionRequest{
		Model:     model,
		Messages:  []sdk.ChatCompletionMessage{{Role: sdk.ChatMessageRoleUser, Content: "Say OK."}},
		MaxTokens: max(1, min(maxTokens, 8)),
	}, false)
	return time.Since(start), err
}
