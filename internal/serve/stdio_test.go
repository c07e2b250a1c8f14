package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
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
	go func() { done <- serve.Stdio(ctx, tiny.Domain, mcpdomain.L4, inR, outW) }()
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
