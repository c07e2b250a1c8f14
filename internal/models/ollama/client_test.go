package ollama_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
)

// TestChatRetryPolicy: transport failures and 5xx are retried until a
// reply comes; the model's garbled tool calls and 4xx come back at once,
// the former as a *MalformedError; a deadline ends the retries.
func TestChatRetryPolicy(t *testing.T) {
	const garbled = `error parsing tool call: raw='{', err=unexpected end of JSON input`
	ok := ollamatest.Step{Content: "fine"}
	cases := []struct {
		name      string
		stream    bool
		first     ollamatest.Step
		requests  int // chat requests made
		malformed bool
		wantErr   string // "" when the reply comes
	}{
		{"a crashed runner", true, ollamatest.Step{Status: 500, ErrBody: "llama runner process has terminated"}, 2, false, ""},
		{"a 503 without streaming", false, ollamatest.Step{Status: 503}, 2, false, ""},
		{"an error line mid-stream", true, ollamatest.Step{Content: "I will", ErrLine: "model runner has unexpectedly stopped"}, 2, false, ""},
		{"a dropped connection", true, ollamatest.Step{Hangup: true}, 2, false, ""},
		{"a stream cut before its final chunk", true, ollamatest.Step{Content: "The lamp is", CutShort: true}, 2, false, ""},
		{"a parse error as a 500", true, ollamatest.Step{Status: 500, ErrBody: garbled}, 1, true, garbled},
		{"a parse error mid-stream", true, ollamatest.Step{Content: "Doing it.", ErrLine: garbled}, 1, true, garbled},
		{"arguments that are not an object", true, ollamatest.Step{Calls: []ollamatest.Call{{Name: "f", Args: `"x=1"`}}}, 1, true, "tool-call arguments must be an object"},
		{"a 400", true, ollamatest.Step{Status: 400, ErrBody: "bad request"}, 1, false, "bad request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step {
				if n.Add(1) == 1 {
					return c.first
				}
				return ok
			})
			cl, err := ollama.New(f.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}, Stream: &c.stream})
			var me *ollama.MalformedError
			switch {
			case f.Chats() != c.requests:
				t.Errorf("%d requests, want %d", f.Chats(), c.requests)
			case c.wantErr == "" && (err != nil || r.Message.Content != "fine" || r.DoneReason != "stop" || r.Metrics.EvalCount != 15):
				t.Errorf("reply %+v, error %v", r, err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want %q", err, c.wantErr)
			case c.wantErr != "" && errors.As(err, &me) != c.malformed:
				t.Errorf("error %T %v: malformed %v, want %v", err, err, !c.malformed, c.malformed)
			}
		})
	}
	t.Run("a 5xx that never ends", func(t *testing.T) {
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Status: 503} })
		cl, _ := ollama.New(f.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
		defer cancel()
		_, err := cl.Chat(ctx, &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}})
		if err == nil || f.Chats() < 2 || ollama.IsMalformed(err) {
			t.Errorf("error %v after %d requests; want a 503 retried until the deadline", err, f.Chats())
		}
	})
}

// TestStructuredSendsTheFormat: structured output asks for the schema as
// format, at temperature 0, without streaming, and is retried like Chat.
func TestStructuredSendsTheFormat(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"m"}, func(_ ollamatest.Request, n int) ollamatest.Step {
		if n == 0 {
			return ollamatest.Step{Status: 500}
		}
		return ollamatest.Step{Content: `{"a":1}`}
	})
	cl, _ := ollama.New(f.URL, nil)
	got, err := cl.Structured(context.Background(), "m", []api.Message{{Role: "user", Content: "hi"}}, []byte(`{"type":"object"}`))
	if err != nil || got != `{"a":1}` {
		t.Fatalf("%q, %v", got, err)
	}
	reqs := f.Requests()
	r := reqs[len(reqs)-1]
	if len(reqs) != 2 || string(r.Format) != `{"type":"object"}` || r.Stream == nil || *r.Stream || r.Options["temperature"] != float64(0) {
		t.Errorf("%d requests, last %+v", len(reqs), r)
	}
}

// TestWarmUpAndShow: a warm-up is a chat without messages that reports
// the load time; Show reads /api/show.
func TestWarmUpAndShow(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"m"}, nil)
	cl, _ := ollama.New(f.URL, nil)
	start := time.Now()
	load, err := cl.WarmUp(context.Background(), "m", &api.Duration{Duration: time.Minute}, map[string]any{"num_ctx": 8192})
	// Ollama's load reply carries no durations: the load is the
	// request's wall time.
	if err != nil || load <= 0 || load > time.Since(start) {
		t.Fatalf("load %v, %v; want the warm-up's wall time", load, err)
	}
	if r := f.Requests()[0]; len(r.Messages) != 0 || r.Options["num_ctx"] != float64(8192) {
		t.Errorf("warm-up request %+v", r)
	}
	show, err := cl.Show(context.Background(), "m")
	if err != nil || show.Details.ParameterSize != "3.2B" {
		t.Fatalf("%+v, %v", show, err)
	}
	if _, err := cl.Show(context.Background(), "absent"); err == nil || !strings.Contains(err.Error(), "model 'absent' not found") {
		t.Errorf("show of a model the host lacks: %v, want Ollama's 404", err)
	}
}

// TestShowIsRetried: an outage between a warm-up and the trials (a 503
// with an empty body, twice) does not end the run.
func TestShowIsRetried(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"m"}, nil)
	f.FailShows = 2
	cl, _ := ollama.New(f.URL, nil)
	if show, err := cl.Show(context.Background(), "m"); err != nil || show.Details.Family != "fake" {
		t.Fatalf("%+v, %v; want the third try's answer", show, err)
	}
}

// TestRepliesThatAreNoAnswer: a reply that ends without its final chunk,
// or that the server emptied, is never a finished answer; the model's
// failures come back at once, each as its own error, the transport's are
// retried.
func TestRepliesThatAreNoAnswer(t *testing.T) {
	tools := api.Tools{{Type: "function", Function: api.ToolFunction{Name: "f"}}}
	cases := []struct {
		name     string
		stream   bool
		first    ollamatest.Step
		requests int
		is       func(error) bool // nil: the second reply comes
	}{
		{"the repeat limit, streamed", true, ollamatest.Step{Repeat: "lamp "}, 1, models.IsRepeatLimit},
		{"the repeat limit, not streamed", false, ollamatest.Step{Repeat: "lamp "}, 1, models.IsRepeatLimit},
		{"a call the server dropped", true, ollamatest.Step{Dropped: true, Calls: []ollamatest.Call{{Name: "g", Args: `{}`}}}, 1, models.IsDroppedCall},
		{"a call the server dropped, not streamed", false, ollamatest.Step{Dropped: true}, 1, models.IsDroppedCall},
		{"a built-in parser's failure", true, ollamatest.Step{Status: 500, ErrBody: `failed to parse JSON: invalid character 'x' looking for beginning of value`}, 1, ollama.IsMalformed},
		{"a built-in parser's failure mid-stream", true, ollamatest.Step{Content: "x", ErrLine: `empty function name`}, 1, ollama.IsMalformed},
		{"a server gone mid-reply", true, ollamatest.Step{Content: "The lamp is", Die: true}, 2, nil},
		{"a 5xx with an empty body", true, ollamatest.Step{Status: 503, EmptyBody: true}, 2, nil},
		{"a 5xx with an empty body, not streamed", false, ollamatest.Step{Status: 502, EmptyBody: true}, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ollamatest.NewServer(t, []string{"m"}, func(_ ollamatest.Request, n int) ollamatest.Step {
				if n == 0 {
					return c.first
				}
				return ollamatest.Step{Content: "fine"}
			})
			cl, _ := ollama.New(f.URL, nil)
			r, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}, Tools: tools, Stream: &c.stream})
			switch {
			case f.Chats() != c.requests:
				t.Errorf("%d requests, want %d (error %v)", f.Chats(), c.requests, err)
			case c.is == nil && (err != nil || r.Message.Content != "fine"):
				t.Errorf("reply %+v, error %v; want the second reply", r.Message, err)
			case c.is != nil && (err == nil || !c.is(err)):
				t.Errorf("error %T %v", err, err)
			}
		})
	}
	t.Run("the repeat limit says what repeated and counts the chunks", func(t *testing.T) {
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Repeat: "lamp "} })
		cl, _ := ollama.New(f.URL, nil)
		r, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}})
		if err == nil || !strings.Contains(err.Error(), `repeated "lamp"`) || r.Metrics.EvalCount != ollamatest.RepeatLimit+1 {
			t.Errorf("error %v, %d tokens counted", err, r.Metrics.EvalCount)
		}
	})
	t.Run("a deadline mid-line", func(t *testing.T) {
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step {
			return ollamatest.Step{Content: "The lamp is", Stall: true}
		})
		cl, _ := ollama.New(f.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r, err := cl.Chat(ctx, &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}})
		if !errors.Is(err, context.DeadlineExceeded) || r.Metrics.EvalCount != 3 || r.Message.Content != "The lamp is" {
			t.Errorf("error %v, %d tokens, content %q; want the deadline, with the three words that came", err, r.Metrics.EvalCount, r.Message.Content)
		}
	})
	t.Run("a deadline mid-stream", func(t *testing.T) {
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Endless: true} })
		cl, _ := ollama.New(f.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r, err := cl.Chat(ctx, &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}, Options: map[string]any{"num_predict": 1 << 20}})
		if !errors.Is(err, context.DeadlineExceeded) || r.Metrics.EvalCount == 0 || r.Message.Content == "" {
			t.Errorf("error %v, %d tokens, content %d bytes; want the deadline, with what came counted", err, r.Metrics.EvalCount, len(r.Message.Content))
		}
	})
}

// TestContextLength: a prompt longer than the context is refused, once,
// as a *ContextLengthError when the request says "truncate": false; Ollama
// cuts it silently otherwise.
func TestContextLength(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Content: "fine"} })
	f.NumCtx = 16
	cl, _ := ollama.New(f.URL, nil)
	long := []api.Message{{Role: "user", Content: strings.Repeat("a long prompt ", 20)}}
	no := false
	if _, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: long, Truncate: &no}); !ollama.IsContextLength(err) || f.Chats() != 1 {
		t.Errorf("error %v after %d requests; want a *ContextLengthError at once", err, f.Chats())
	}
	r, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: long})
	if err != nil || r.Metrics.PromptEvalCount != 16 {
		t.Errorf("%+v, %v; want the prompt cut to the context", r.Metrics, err)
	}
}

// TestCheckHosts: every down host and missing model is named, with the
// command that fixes it.
func TestCheckHosts(t *testing.T) {
	f := ollamatest.NewServer(t, []string{"have", "tagged:latest"}, nil)
	err := ollama.CheckHosts(context.Background(), []string{f.URL, "http://127.0.0.1:1"}, []string{"have", "tagged", "absent"}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"ollama at " + f.URL + ` has no model "absent": run ` + "`ollama pull absent`" + " there",
		"ollama at http://127.0.0.1:1 refused the connection: start it with `ollama serve`",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), `"tagged"`) || strings.Contains(err.Error(), `"have"`) {
		t.Errorf("%q names a model the host has", err)
	}
	if err := ollama.CheckHosts(context.Background(), []string{f.URL}, []string{"have"}, nil); err != nil {
		t.Errorf("a host with the model: %v", err)
	}
}

// TestEndlessReply: a reply that never ends, streamed or not, is cut at
// its bound in bytes (from num_predict) and comes back at once as a
// *models.TooLongError, not retried, having read no more than the bound.
func TestEndlessReply(t *testing.T) {
	for _, stream := range []bool{true, false} {
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return ollamatest.Step{Endless: true} })
		cl, _ := ollama.New(f.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second) // a guard against hanging only
		r, err := cl.Chat(ctx, &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}, Stream: &stream,
			Options: map[string]any{"num_predict": 2048}})
		cancel()
		if limit := models.ReplyLimit(2048); !models.IsTooLong(err) || r.Bytes > limit || r.Bytes < limit/2 || f.Chats() != 1 {
			t.Errorf("stream %v: error %v after %d bytes read, %d requests; want a reply cut at %d bytes, not retried", stream, err, r.Bytes, f.Chats(), limit)
		}
	}
}

// TestCredentialsRedacted: a host's error that quotes an Authorization
// header reaches the caller without its value.
func TestCredentialsRedacted(t *testing.T) {
	const token = "c2lnbmVkLWNoYWxsZW5nZS10b2tlbg"
	f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step {
		return ollamatest.Step{Status: 400, ErrBody: "refused request with Authorization: Bearer " + token}
	})
	cl, _ := ollama.New(f.URL, nil)
	_, err := cl.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}})
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "Authorization: Bearer [redacted]") {
		t.Errorf("error %v; want the header's value redacted", err)
	}
}

// TestStructuredFormatRefused: a format Ollama cannot use comes back at
// once as a *FormatError, not retried as the 500 it is sent as.
func TestStructuredFormatRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		format string
		step   ollamatest.Step
	}{
		{"a schema llama.cpp cannot make a grammar of", `{"type":"object"}`, ollamatest.Step{FormatRejected: true}},
		{"a format that is no schema", `["type"]`, ollamatest.Step{Content: "never sent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return c.step })
			cl, _ := ollama.New(f.URL, nil)
			_, err := cl.Structured(context.Background(), "m", []api.Message{{Role: "user", Content: "hi"}}, []byte(c.format))
			if !ollama.IsFormat(err) || f.Chats() != 1 {
				t.Errorf("error %T %v after %d requests; want a *FormatError at once", err, err, f.Chats())
			}
		})
	}
}
