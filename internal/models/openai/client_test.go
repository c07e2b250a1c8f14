package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/openai"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
)

func hello(model string) sdk.ChatCompletionRequest {
	return sdk.ChatCompletionRequest{Model: model, Messages: []sdk.ChatCompletionMessage{{Role: sdk.ChatMessageRoleUser, Content: "hi"}}}
}

// TestChatAssemblesReplies: streamed and whole replies come out the same:
// content, reasoning (as reasoning_content or as newer vLLM's reasoning),
// several tool calls with their IDs and arguments put together from
// fragments, the finish reason and the usage counts.
func TestChatAssemblesReplies(t *testing.T) {
	for _, key := range []string{"", "reasoning"} {
		testChatAssemblesReplies(t, openaitest.Step{Content: "Two calls: ", Reasoning: "The user wants both lamps — on, at 40 %.", ReasoningKey: key,
			Calls: []openaitest.Call{{Name: "set_lamp", Args: `{"lamp_id":"LP01","on":true}`}, {Name: "set_lamp", Args: `{"lamp_id":"LP02","level":40,"note":"é€"}`}}})
	}
}

func testChatAssemblesReplies(t *testing.T, step openaitest.Step) {
	t.Helper()
	for _, stream := range []bool{true, false} {
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return step })
		r, err := openai.New(f.URL, "", nil).Chat(context.Background(), hello("m"), stream)
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if r.Content != step.Content || r.Reasoning != step.Reasoning || r.FinishReason != "tool_calls" || r.Attempts != 1 ||
			r.PromptTokens != openaitest.PromptTokens || r.CompletionTokens != openaitest.CompletionTokens {
			t.Errorf("stream %v: %+v", stream, r)
		}
		if len(r.ToolCalls) != len(step.Calls) {
			t.Fatalf("stream %v: calls %+v", stream, r.ToolCalls)
		}
		for i, c := range r.ToolCalls {
			if c.Name != step.Calls[i].Name || c.Arguments != step.Calls[i].Args || c.ID == "" || i > 0 && c.ID == r.ToolCalls[0].ID {
				t.Errorf("stream %v: call %d %+v, want %+v with its own ID", stream, i, c, step.Calls[i])
			}
		}
		req := f.Requests()[0]
		if req.Stream != stream || stream != (req.StreamOptions != nil && req.StreamOptions.IncludeUsage) {
			t.Errorf("stream %v: request stream %v, options %+v; want include_usage exactly when streaming", stream, req.Stream, req.StreamOptions)
		}
	}
}

// TestChatRetryPolicy: 5xx, 429, cut connections and error events are
// retried until a reply comes; arguments that are not a JSON object, an
// over-long context and other 4xx come back at once.
func TestChatRetryPolicy(t *testing.T) {
	ok := openaitest.Step{Content: "fine"}
	cases := []struct {
		name     string
		stream   bool
		first    openaitest.Step
		requests int
		check    func(error) bool // nil: the reply comes
		wantErr  string
	}{
		{"a 500, streaming", true, openaitest.Step{Status: 500}, 2, nil, ""},
		{"a 503, not streaming", false, openaitest.Step{Status: 503}, 2, nil, ""},
		{"a 429 with Retry-After", true, openaitest.Step{Status: 429, RetryAfter: "0"}, 2, nil, ""},
		{"a dropped connection", true, openaitest.Step{Hangup: true}, 2, nil, ""},
		{"a connection cut mid-stream", true, openaitest.Step{HangupMidStream: true}, 2, nil, ""},
		{"an error event mid-stream", true, openaitest.Step{ErrEvent: "CUDA out of memory"}, 2, nil, ""},
		{"arguments that are not JSON", true, openaitest.Step{Calls: []openaitest.Call{{Name: "f", Args: `lamp_id=LP01`}}}, 1, openai.IsMalformed, "are not a JSON object: lamp_id=LP01"},
		{"arguments that are a JSON string", false, openaitest.Step{Calls: []openaitest.Call{{Name: "f", Args: `"{\"a\":1}"`}}}, 1, openai.IsMalformed, "are not a JSON object"},
		{"OpenAI's context_length_exceeded", true, openaitest.Step{Status: 400, ErrCode: "context_length_exceeded", ErrType: "invalid_request_error",
			ErrBody: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."}, 1, openai.IsContextLength, "maximum context length is 8192"},
		{"vLLM's over-long prompt", false, openaitest.Step{Status: 400, Dialect: "vllm", ErrType: "BadRequestError",
			ErrBody: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion)."}, 1, openai.IsContextLength, "4096 tokens"},
		{"llama.cpp's exceed_context_size_error", true, openaitest.Step{Status: 400, ErrType: "exceed_context_size_error",
			ErrBody: "the request exceeds the available context size, try increasing it"}, 1, openai.IsContextLength, "available context size"},
		{"another 400", true, openaitest.Step{Status: 400, ErrBody: "tool_choice must be auto"}, 1,
			func(err error) bool { return !openai.IsContextLength(err) && !openai.IsMalformed(err) }, "400 Bad Request: tool_choice must be auto"},
		{"TGI's 422", false, openaitest.Step{Status: 422, Dialect: "tgi", ErrType: "validation", ErrBody: "Input validation error: `temperature` must be strictly positive"}, 1,
			isStatus(422), "422 Unprocessable Entity: Input validation error: `temperature` must be strictly positive"},
		{"TGI's over-long input", true, openaitest.Step{Status: 400, Dialect: "tgi", ErrType: "validation", ErrBody: "Input is too long for this model"}, 1,
			openai.IsContextLength, "400 Bad Request: Input is too long"},
		{"FastAPI's detail", true, openaitest.Step{Status: 400, Dialect: "fastapi", ErrBody: "messages: field required"}, 1,
			isStatus(400), "400 Bad Request: messages: field required"},
		{"vLLM's 503", true, openaitest.Step{Status: 503, Dialect: "vllm", ErrBody: "the engine is sleeping"}, 2, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
				if n.Add(1) == 1 {
					return c.first
				}
				return ok
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := openai.New(f.URL, "", nil).Chat(ctx, hello("m"), c.stream)
			switch {
			case f.Chats() != c.requests:
				t.Errorf("%d requests, want %d (error %v)", f.Chats(), c.requests, err)
			case c.check == nil && (err != nil || r.Content != "fine" || r.Attempts != 2):
				t.Errorf("reply %+v, error %v", r, err)
			case c.check != nil && (err == nil || !c.check(err) || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %T %v, want one containing %q of the right kind", err, err, c.wantErr)
			}
		})
	}
}

// isStatus reports an error that is a *StatusError of status, its
// message without go-openai's own wording around the body.
func isStatus(status int) func(error) bool {
	return func(err error) bool {
		var se *openai.StatusError
		return errors.As(err, &se) && se.StatusCode == status && !strings.Contains(se.Msg, "error, status code") && !strings.Contains(se.Msg, "{")
	}
}

// TestZeroValuesSent: what go-openai leaves out as a zero value goes on
// the wire all the same: a temperature of 0 (greedy, where a missing one
// is the server's default of 1), and an empty content, which OpenAI's API
// refuses when it is missing, for a tool's empty result and an empty
// answer; an assistant message with calls and no content has none.
func TestZeroValuesSent(t *testing.T) {
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return openaitest.Step{Content: "x"} })
	req := hello("m")
	req.Messages = append(req.Messages,
		sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Type: sdk.ToolTypeFunction, Function: sdk.FunctionCall{Name: "f", Arguments: "{}"}}}},
		sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleTool, ToolCallID: "c1"},
		sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleAssistant},
		sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleUser, Content: "again"})
	for _, stream := range []bool{true, false} {
		if _, err := openai.New(f.URL, "", nil).Chat(context.Background(), req, stream); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		got := reqs[len(reqs)-1]
		if got.Temperature == nil || *got.Temperature != 0 {
			t.Errorf("stream %v: temperature %v, want 0 sent", stream, got.Temperature)
		}
		for i, m := range got.Messages {
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(m, &fields)
			_, has := fields["content"]
			if want := i != 1; has != want || has && string(fields["content"]) != `""` && i != 0 && i != 4 {
				t.Errorf("stream %v: message %d is %s; want a content exactly when it has no tool calls", stream, i, m)
			}
		}
	}
}

// TestRetryAfter: a 429 waits what Retry-After says before asking again,
// and gives up at once when that is past the deadline.
func TestRetryAfter(t *testing.T) {
	var n atomic.Int32
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
		if n.Add(1) == 1 {
			return openaitest.Step{Status: 429, RetryAfter: "1", ErrBody: "rate limited"}
		}
		return openaitest.Step{Content: "fine"}
	})
	c := openai.New(f.URL, "", nil)
	start := time.Now()
	if _, err := c.Chat(context.Background(), hello("m"), true); err != nil || time.Since(start) < time.Second {
		t.Errorf("error %v after %v; want a reply after at least the second Retry-After asked for", err, time.Since(start))
	}
	n.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, hello("m"), true)
	if err == nil || !strings.Contains(err.Error(), "Retry-After 1s is past the trial's deadline") || ctx.Err() != nil {
		t.Errorf("error %v (context %v); want the 429 at once, naming the deadline", err, ctx.Err())
	}
}

// TestChatUntilDeadline: a 5xx that never ends is retried until the
// caller's deadline, and a reply slower than the deadline ends with it.
func TestChatUntilDeadline(t *testing.T) {
	for _, step := range []openaitest.Step{{Status: 502}, {Delay: time.Minute, Content: "late"}} {
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return step })
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		_, err := openai.New(f.URL, "", nil).Chat(ctx, hello("m"), true)
		cancel()
		if err == nil || ctx.Err() == nil {
			t.Errorf("%+v: error %v after %d requests; want the deadline to end it", step, err, f.Chats())
		}
		if step.Status != 0 && f.Chats() < 2 {
			t.Errorf("a %d was asked %d times; want retries", step.Status, f.Chats())
		}
	}
}

// TestCheck: the endpoint must list the model; the error names the URL,
// the model and what is listed, and a dead endpoint says so.
func TestCheck(t *testing.T) {
	f := openaitest.NewServer(t, []string{"Qwen/Qwen3-4B", "Qwen/Qwen3-8B"}, nil)
	c := openai.New(f.URL, "", nil)
	if err := c.Check(context.Background(), "Qwen/Qwen3-4B"); err != nil {
		t.Errorf("a listed model: %v", err)
	}
	err := c.Check(context.Background(), "qwen3-4b")
	want := "GET " + f.URL + `/models does not list model "qwen3-4b"; it lists Qwen/Qwen3-4B, Qwen/Qwen3-8B`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	err = openai.New("http://127.0.0.1:1/v1", "", nil).Check(context.Background(), "m")
	if err == nil || !strings.Contains(err.Error(), "GET http://127.0.0.1:1/v1/models: connection refused") {
		t.Errorf("a dead endpoint: %v", err)
	}
}

// TestAPIKey: the configured key goes out as a bearer token; without one,
// no key the SDK would take from the environment reaches the endpoint.
func TestAPIKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return openaitest.Step{Content: "x"} })
	for key, want := range map[string]string{"": "", "sk-configured": "Bearer sk-configured"} {
		if _, err := openai.New(f.URL, key, nil).Chat(context.Background(), hello("m"), false); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		if got := reqs[len(reqs)-1].Authorization; got != want {
			t.Errorf("key %q: Authorization %q, want %q", key, got, want)
		}
	}
}

// TestWarmUp: a warm-up is one short request to the model.
func TestWarmUp(t *testing.T) {
	f := openaitest.NewServer(t, []string{"m"}, nil)
	if _, err := openai.New(f.URL, "", nil).WarmUp(context.Background(), "m", 4096); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 || reqs[0].MaxTokens == nil || *reqs[0].MaxTokens > 8 || f.Chats() != 0 {
		t.Errorf("requests %+v", reqs)
	}
	if _, err := openai.New(f.URL, "", nil).WarmUp(context.Background(), "absent", 8); err == nil || !errors.Is(err, err) || !strings.Contains(err.Error(), "404") {
		t.Errorf("warm-up of a model the endpoint lacks: %v", err)
	}
}

// TestEndlessReply: a reply that never ends, streamed or whole, is cut
// at its bound in bytes (from max_tokens) and comes back at once as a
// *models.TooLongError, not retried: the client reads no more than the
// bound, whatever the endpoint sends.
func TestEndlessReply(t *testing.T) {
	for _, stream := range []bool{true, false} {
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return openaitest.Step{Endless: true} })
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second) // a guard against hanging only
		params := hello("m")
		params.MaxTokens = 2048
		r, err := openai.New(f.URL, "", nil).Chat(ctx, params, stream)
		cancel()
		if limit := models.ReplyLimit(2048); !models.IsTooLong(err) || r.Bytes > limit || r.Bytes < limit/2 || r.Attempts != 1 || f.Chats() != 1 {
			t.Errorf("stream %v: error %v after %d bytes read, %d attempts, %d requests; want a reply cut at %d bytes, not retried",
				stream, err, r.Bytes, r.Attempts, f.Chats(), limit)
		}
	}
}

// TestBackoffFloor: a 429 whose Retry-After asks for no wait at all is
// asked again after the backoff every retry has (250 ms, doubling up to
// 4 s), never at once; a longer Retry-After is waited in full.
func TestBackoffFloor(t *testing.T) {
	for _, c := range []struct {
		retryAfter string
		want       []time.Duration
	}{
		{"0", []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}},
		{"3", []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, 4 * time.Second, 4 * time.Second}},
	} {
		var n atomic.Int32
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
			if int(n.Add(1)) <= len(c.want) {
				return openaitest.Step{Status: 429, RetryAfter: c.retryAfter, ErrBody: "slow down"}
			}
			return openaitest.Step{Content: "fine"}
		})
		cl := openai.New(f.URL, "", nil)
		var waits []time.Duration
		openai.SetSleep(cl, func(_ context.Context, d time.Duration) bool {
			waits = append(waits, d)
			return true
		})
		r, err := cl.Chat(context.Background(), hello("m"), true)
		if err != nil || r.Attempts != len(c.want)+1 || len(waits) != len(c.want) {
			t.Fatalf("Retry-After %s: error %v, %d attempts, waits %v", c.retryAfter, err, r.Attempts, waits)
		}
		for i, w := range waits {
			if w < c.want[i] || w > c.want[i]*5/4 {
				t.Errorf("Retry-After %s: wait %d is %v, want %v (at most a quarter more)", c.retryAfter, i, w, c.want[i])
			}
		}
	}
}

// TestKeyRedacted: an endpoint whose error body echoes the request's
// Authorization header gets neither the key nor the header's value into
// any error the client returns.
func TestKeyRedacted(t *testing.T) {
	const key = "sk-granite-test-7f3a9c1e5b"
	for _, status := range []int{400, 401, 404} {
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
			return openaitest.Step{Status: status, EchoAuth: true, ErrBody: "refused"}
		})
		c := openai.New(f.URL, key, nil)
		_, chatErr := c.Chat(context.Background(), hello("m"), true)
		_, warmErr := c.WarmUp(context.Background(), "absent", 8) // the double's 404 does not echo; its 404 for a known model does
		for _, err := range []error{chatErr, warmErr} {
			if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "Bearer sk") {
				t.Errorf("%d: error %v; want one without the key", status, err)
			}
		}
		if !strings.Contains(chatErr.Error(), "Authorization: Bearer [redacted]") {
			t.Errorf("%d: error %q; want the echoed header shown redacted", status, chatErr)
		}
		var se *openai.StatusError
		if !errors.As(chatErr, &se) || se.StatusCode != status || strings.Contains(se.Msg, key) {
			t.Errorf("%d: error %T %v; want a *StatusError of that status, its message redacted", status, chatErr, chatErr)
		}
	}
}

// TestOllamaV1RepliesThatAreNoAnswer: on Ollama's /v1 a reply its repeat
// limit ended (no finish_reason, no [DONE]; not streamed, finish_reason
// null), a reply its tool parser emptied and a call its built-in parser
// could not read (a 500) are the model's failures, returned at once; a
// vLLM reply that is empty is an empty answer, nothing more.
func TestOllamaV1RepliesThatAreNoAnswer(t *testing.T) {
	req := hello("m")
	req.Tools = []sdk.Tool{{Type: sdk.ToolTypeFunction, Function: &sdk.FunctionDefinition{Name: "alpha_list"}}}
	cases := []struct {
		name string
		step openaitest.Step
		is   func(error) bool
	}{
		{"the repeat limit", openaitest.Step{Dialect: "ollama", Repeat: " again"}, models.IsRepeatLimit},
		{"a call the server dropped", openaitest.Step{Dialect: "ollama", Dropped: true}, models.IsDroppedCall},
		{"qwen3's parser failing", openaitest.Step{Dialect: "ollama", Status: 500, ErrBody: "failed to parse JSON: unexpected end of JSON input"}, openai.IsMalformed},
		{"an empty reply from vLLM", openaitest.Step{Dropped: true}, nil},
	}
	for _, c := range cases {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, stream %v", c.name, stream), func(t *testing.T) {
				f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return c.step })
				r, err := openai.New(f.URL, "", nil).Chat(context.Background(), req, stream)
				switch {
				case f.Chats() != 1:
					t.Errorf("%d requests, want 1 (error %v)", f.Chats(), err)
				case c.is == nil && (err != nil || r.Content != ""):
					t.Errorf("reply %+v, error %v; want an empty answer", r, err)
				case c.is != nil && (err == nil || !c.is(err)):
					t.Errorf("error %T %v", err, err)
				}
			})
		}
	}
}

// TestCleanCutsAreBounded: a stream that ends cleanly before a
// finish_reason, with no repeat Ollama stops at, is asked again, but a
// server that ends every reply so is given up after three.
func TestCleanCutsAreBounded(t *testing.T) {
	f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step {
		return openaitest.Step{Content: "The lamp is", NoFinish: true}
	})
	c := openai.New(f.URL, "", nil)
	openai.SetSleep(c, func(context.Context, time.Duration) bool { return true })
	r, err := c.Chat(context.Background(), hello("m"), true)
	if err == nil || !strings.Contains(err.Error(), "3 times in a row") || r.Attempts != 3 || f.Chats() != 3 {
		t.Errorf("%v after %d attempts, %d requests; want the cut given up after 3", err, r.Attempts, f.Chats())
	}
}
