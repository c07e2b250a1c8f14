package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestStdioAnswersInJSONTerms: over stdio as over HTTP, a number no
// float64 holds in a tool argument is a tool error naming the argument,
// and params of the wrong shape get a JSON-RPC error without Go types.
func TestStdioAnswersInJSONTerms(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	srv, _, err := serve.NewServer(tiny.Domain, servetest.Level(t, tiny.Domain, level.L4))
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- serve.Stdio(ctx, srv, inR, outW, nil) }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	ask := func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			replies.Scan()
			got <- replies.Text()
		}()
		select {
		case s := <-got:
			return s
		case <-time.After(5 * time.Second):
			t.Fatalf("no reply to %s", msg)
			return ""
		}
	}
	ask(initialize)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	cases := []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"set_lamp","arguments":{"lamp_id":"LP01","level":1e400}}}`, `argument \"level\": 1e400 is out of range`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}`, "params of tools/call must be an object, not an array"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`, "invalid tools/call request: params.name must be a string, not a number"},
		{`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, "batch requests are not supported"},
		// A line past MaxLine is not kept, however it goes on.
		{`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + strings.Repeat("x", int(serve.MaxLine)) + `"}}`, "a line over 1048576 bytes"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_lamp","arguments":{"lamp_id":"LP01"}}}`, `\"id\":\"LP01\"`},
	}
	for _, c := range cases {
		reply := ask(c.msg)
		if !strings.Contains(reply, c.want) || strings.Contains(reply, "Go struct") || !json.Valid([]byte(reply)) {
			t.Errorf("%s\n got %s\nwant %s", c.msg, reply, c.want)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stdio: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("stdio did not end with its input")
	}
}

// later is a Forwarder that takes calls of the tool "ext" and answers
// each from another goroutine, 50 ms later.
type later struct{ wg sync.WaitGroup }

func (l *later) Forward(_ context.Context, msg []byte, send func([]byte)) bool {
	var m struct {
		ID     json.RawMessage
		Params struct{ Name string }
	}
	if json.Unmarshal(msg, &m) != nil || m.Params.Name != "ext" {
		return false
	}
	l.wg.Go(func() {
		time.Sleep(50 * time.Millisecond)
		send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"from afar"}]}}` + "\n"))
	})
	return true
}

func (l *later) Drain() { l.wg.Wait() }

// TestStdioForwarder: what the forwarder takes it answers, even after the
// input has ended (the server returns only then); what it leaves goes to
// the server, vetted against mcp-go's types as without a forwarder.
func TestStdioForwarder(t *testing.T) {
	srv, err := tiny.Domain.NewServer(level.L4, tiny.Domain.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		initialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ext","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_lamp","arguments":{"lamp_id":"LP01"}}}`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := serve.Stdio(context.Background(), srv, strings.NewReader(in), &out, &later{}); err != nil {
		t.Fatal(err)
	}
	replies := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct{ ID json.RawMessage }
		_ = json.Unmarshal([]byte(line), &m)
		replies[string(m.ID)] = line
	}
	for id, want := range map[string]string{
		"2": `"text":"from afar"`,
		"3": "invalid tools/call request: params.name must be a string, not a number",
		"4": `\"id\":\"LP01\"`,
	} {
		if !strings.Contains(replies[id], want) {
			t.Errorf("reply %s: %q; want it to hold %s", id, replies[id], want)
		}
	}
}

// never is a Forwarder that takes calls of the tool "ext" and never
// answers them.
type never struct{ wg sync.WaitGroup }

func (n *never) Forward(_ context.Context, msg []byte, _ func([]byte)) bool {
	var m struct{ Params struct{ Name string } }
	if json.Unmarshal(msg, &m) != nil || m.Params.Name != "ext" {
		return false
	}
	n.wg.Add(1)
	return true
}

func (n *never) Drain() { n.wg.Wait() }

// TestStdioDrainIsBounded: once the input ends, a call that is never
// answered keeps the server no longer than DrainTimeout, and the error
// says what was given up.
func TestStdioDrainIsBounded(t *testing.T) {
	old := serve.DrainTimeout
	serve.DrainTimeout = 100 * time.Millisecond
	defer func() { serve.DrainTimeout = old }()
	srv, err := tiny.Domain.NewServer(level.L4, tiny.Domain.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	in := initialize + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ext","arguments":{}}}` + "\n"
	done := make(chan error, 1)
	go func() {
		done <- serve.Stdio(context.Background(), srv, strings.NewReader(in), io.Discard, &never{})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "still unanswered 100ms after the input ended") {
			t.Errorf("Stdio: %v; want the unanswered call given up", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Stdio still waits 15 s after its input ended")
	}
}
