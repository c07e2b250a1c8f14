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
	load, err := cl.WarmUp(context.Background(), "m", &api.Duration{Duration: time.Minute}, map[string]any{"num_ctx": 8192})
	if err != nil || load != 1500*time.Millisecond {
		t.Fatalf("load %v, %v", load, err)
	}
	if r := f.Requests()[0]; len(r.Messages) != 0 || r.Options["num_ctx"] != float64(8192) {
		t.Errorf("warm-up request %+v", r)
	}
	show, err := cl.Show(context.Background(), "m")
	if err != nil || show.Details.ParameterSize != "3.2B" {
		t.Fatalf("%+v, %v", show, err)
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
