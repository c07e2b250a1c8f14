package regroup_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// TestMain makes the test binary a fake source server when asked (see
// fakeSource), so that the relay is tested on a process speaking raw
// JSON-RPC lines, with answers no SDK would write.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GRANITE_FAKE_SOURCE"); mode != "" {
		fakeSource(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echoed is the fake source's answer to echo, byte for byte: keys in an
// order no encoder sorts them in, and a member no SDK type has.
const echoed = `{"x-extra": {"b":1,"a":2}, "content":[{"type":"text","text":%q}],"structuredContent":{"got":%s}}`

// fakeSource speaks MCP over stdio as a raw line loop. mode "die-at-init"
// exits before it answers initialize, "silent" never answers anything;
// otherwise its tools are: echo (the arguments it got, see echoed), fail
// (a JSON-RPC error), progress (a progress notification on the call's
// token first), ask (pings its client and asks it for sampling, and says
// what came back), flood (asks for sampling v times without reading),
// huge (a 2 MiB answer), endless (an answer with no end), wait (never
// answers), status (the cancellations it has seen) and die (exits with
// status 3).
func fakeSource(mode string) {
	if mode == "die-at-init" {
		os.Exit(3)
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	write := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	var cancelled []string
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		if mode == "silent" {
			continue
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Name      string
				Arguments json.RawMessage
				Meta      struct {
					ProgressToken json.RawMessage
				} `json:"_meta"`
				RequestID json.RawMessage
				Reason    string
			}
		}
		_ = json.Unmarshal(line, &m)
		result := func(r string) { write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, r)) }
		switch m.Method {
		case "initialize":
			result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "notifications/cancelled":
			cancelled = append(cancelled, fmt.Sprintf("%s (%s)", m.Params.RequestID, m.Params.Reason))
		case "tools/call":
			text := func(s string) { result(fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, s)) }
			switch m.Params.Name {
			case "echo":
				result(fmt.Sprintf(echoed, m.Params.Arguments, m.Params.Arguments))
			case "fail":
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32010,"message":"fake failure","data":{"why":"testing"}}}`, m.ID))
			case "progress":
				write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":2}}`, m.Params.Meta.ProgressToken))
				text("done")
			case "ask":
				write(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
				write(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
				a, _ := in.ReadBytes('\n')
				b, _ := in.ReadBytes('\n')
				text(strings.TrimSpace(string(a)) + " " + strings.TrimSpace(string(b)))
			case "flood":
				// Asks its client for sampling v times without reading
				// its input, then answers.
				var a struct{ V int }
				_ = json.Unmarshal(m.Params.Arguments, &a)
				for i := range a.V {
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`, i))
				}
				text(fmt.Sprintf("flooded %d", a.V))
			case "huge":
				// A 2 MiB answer, its id last as the TypeScript SDK
				// writes it.
				write(fmt.Sprintf(`{"result":{"content":[{"type":"text","text":%q}]},"jsonrpc":"2.0","id":%s}`, strings.Repeat("x", 2<<20), m.ID))
			case "endless":
				// An answer that never ends: 64 MiB and no newline.
				out.WriteString(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID))
				chunk := strings.Repeat("x", 1<<20)
				for range 64 {
					out.WriteString(chunk)
				}
				out.Flush()
				select {}
			case "wait":
			case "status":
				text("cancelled: " + strings.Join(cancelled, ", "))
			case "die":
				os.Exit(3)
			default:
				text("called " + m.Params.Name)
			}
		}
	}
}

// fakeTools are the fake source's tools; need takes a required integer.
func fakeTools() []toolsrc.Tool {
	var tools []toolsrc.Tool
	for _, n := range []string{"echo", "fail", "progress", "ask", "flood", "huge", "endless", "wait", "status", "die"} {
		tools = append(tools, toolsrc.Tool{Name: n, Description: "Fake " + n + ".", InputSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"integer"}}}`)})
	}
	return append(tools, toolsrc.Tool{Name: "need", Description: "Needs x.", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`)})
}

// fakeCmd is the command that starts this test binary as a fake source.
func fakeCmd(t *testing.T, mode string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "env GRANITE_FAKE_SOURCE=" + mode + " " + exe
}

// lines is a raw stdio client of a regrouped server served in-process.
type lines struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan string
	done chan error
}

// serveRelay serves iface at lv over stdio with calls relayed to a fresh
// source started by cmd.
func serveRelay(t *testing.T, iface *regroup.Grouping, lv level.Level, cmd string) (*lines, *serve.Relay) {
	t.Helper()
	return serveRelayTo(t, iface, lv, cmd, io.Discard)
}

// serveRelayTo is serveRelay with the relay's standard error on stderr.
func serveRelayTo(t *testing.T, iface *regroup.Grouping, lv level.Level, cmd string, stderr io.Writer) (*lines, *serve.Relay) {
	t.Helper()
	relay, err := iface.StartRelay(context.Background(), lv, cmd, "", stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	srv, err := iface.NewServer("fake", lv, relay)
	if err != nil {
		t.Fatal(err)
	}
	return startLines(t, func(in io.Reader, out io.Writer) error {
		return serve.Stdio(context.Background(), srv, in, out, relay)
	}), relay
}

// startLines runs a stdio server loop (serveLoop) on pipes and returns
// its raw client, initialised.
func startLines(t *testing.T, serveLoop func(in io.Reader, out io.Writer) error) *lines {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	l := &lines{t: t, in: inW, out: make(chan string, 16), done: make(chan error, 1)}
	go func() { l.done <- serveLoop(inR, outW) }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.out <- sc.Text()
		}
	}()
	l.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := l.next(); !strings.Contains(got, `"serverInfo"`) {
		t.Fatalf("initialize: %s", got)
	}
	l.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return l
}

func (l *lines) send(line string) {
	l.t.Helper()
	if _, err := io.WriteString(l.in, line+"\n"); err != nil {
		l.t.Fatal(err)
	}
}

func (l *lines) next() string {
	l.t.Helper()
	select {
	case s := <-l.out:
		return s
	case <-time.After(10 * time.Second):
		l.t.Fatal("no line from the server within 10 s")
		return ""
	}
}

// call sends a tools/call and returns the next line.
func (l *lines) call(id, tool, args string) string {
	l.t.Helper()
	l.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	return l.next()
}

// TestRelayPassesAnswersThrough: at L4 and L1, a relayed call's answer is
// the source's result or error byte for byte under the client's own id;
// a refused call never reaches the source; the source's progress reaches
// the client, its ping is answered and its sampling request refused; a
// client's cancellation reaches the source under the source's id.
func TestRelayPassesAnswersThrough(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range []level.Level{level.L4, level.L1} {
		t.Run(string(lv), func(t *testing.T) {
			l, relay := serveRelay(t, iface, lv, fakeCmd(t, "tools"))
			// args maps a source tool's arguments to the level's call.
			args := func(tool, a string) (string, string) {
				name, mapped, err := iface.MapCall(lv, tool, json.RawMessage(a))
				if err != nil {
					t.Fatal(err)
				}
				return name, string(mapped)
			}
			name, a := args("echo", `{"v":1}`)
			if got, want := l.call(`"abc"`, name, a), `{"jsonrpc":"2.0","id":"abc","result":`+fmt.Sprintf(echoed, `{"v":1}`, `{"v":1}`)+`}`; got != want {
				t.Errorf("echo:\n got %s\nwant %s", got, want)
			}
			name, a = args("fail", `{}`)
			if got, want := l.call(`7`, name, a), `{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"fake failure","data":{"why":"testing"}}}`; got != want {
				t.Errorf("fail:\n got %s\nwant %s", got, want)
			}
			sent := relay.Sent()
			name, a = args("need", `{}`)
			got := l.call(`8`, name, a)
			if lv == level.L4 {
				// The server as published judges its own arguments.
				if !strings.Contains(got, "called need") || relay.Sent() != sent+1 {
					t.Errorf("L4 need: %s; %d calls reached the source, want 1", got, relay.Sent()-sent)
				}
			} else if !strings.Contains(got, `invalid arguments for need: at /: missing property 'x'`) || !strings.Contains(got, `"isError":true`) || relay.Sent() != sent {
				t.Errorf("need without x: %s; %d calls reached the source, want a refusal and none", got, relay.Sent()-sent)
			}
			name, a = args("progress", `{}`)
			l.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":"tok"}}}`, name, a))
			if note, res := l.next(), l.next(); !strings.Contains(note, `"method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2}`) || !strings.Contains(res, `"id":10,"result"`) {
				t.Errorf("progress:\n%s\n%s", note, res)
			}
			name, a = args("ask", `{}`)
			if got := l.call(`11`, name, a); !strings.Contains(got, `{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"result\":{}}`) || !strings.Contains(got, `\"id\":\"s1\",\"error\":{\"code\":-32601`) {
				t.Errorf("ask: %s; want the ping answered and sampling refused", got)
			}
			name, a = args("wait", `{}`)
			l.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a))
			l.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"user stopped"}}`)
			name, a = args("status", `{}`)
			if got := l.call(`12`, name, a); !regexp.MustCompile(`cancelled: \d+ \(user stopped\)`).MatchString(got) {
				t.Errorf("status after cancelling wait: %s; want the source's own id for it", got)
			}
			// Input ends: the server returns at once, the cancelled call
			// no longer waited on.
			l.in.Close()
			select {
			case err := <-l.done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("the server did not return after its input ended")
			}
		})
	}
}

// TestRelaySourceEnds: a source that exits mid-call fails that call and
// every later one with how it ended; the Caller path says the same.
func TestRelaySourceEnds(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	l, relay := serveRelay(t, iface, level.L4, fakeCmd(t, "tools"))
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "echo", map[string]any{"v": 2}
	if res, err := relay.CallTool(context.Background(), req); err != nil || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `{"v":2}`) {
		t.Fatalf("CallTool echo: %v %+v", err, res)
	}
	req.Params.Name = "fail"
	if _, err := relay.CallTool(context.Background(), req); err == nil || err.Error() != "fake failure (error -32010 from the source server)" {
		t.Errorf("CallTool fail: %v", err)
	}
	if got := l.call(`1`, "die", `{}`); !strings.Contains(got, `"id":1,"error":{"code":-32603,"message":"the source server ended (exit status 3) before it answered"}`) {
		t.Errorf("die: %s", got)
	}
	if got := l.call(`2`, "echo", `{}`); !strings.Contains(got, `"id":2,"error":{"code":-32603,"message":"the source server ended (exit status 3)`) {
		t.Errorf("echo after the source ended: %s", got)
	}
	if _, err := relay.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("CallTool after the source ended: %v", err)
	}
}

// TestStartRelayFails: a source that exits before initialize, one that
// never answers, and a command that does not start each fail with a
// message saying which.
func TestStartRelayFails(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	old := toolsrc.InitTimeout
	toolsrc.InitTimeout = 300 * time.Millisecond
	defer func() { toolsrc.InitTimeout = old }()
	for _, c := range []struct{ cmd, want string }{
		{fakeCmd(t, "die-at-init"), "initialize: the source server ended (exit status 3)"},
		{fakeCmd(t, "silent"), "initialize: no answer within 300ms; is it an MCP server?"},
		{"/no/such/server --stdio", "start /no/such/server: "},
		{`server "unclosed`, "unclosed"},
	} {
		_, err := iface.StartRelay(context.Background(), level.L1, c.cmd, "", io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.cmd, err, c.want)
		}
	}
}
