package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

func httpServer(t *testing.T, o serve.Options) (*httptest.Server, *serve.Handler) {
	t.Helper()
	h, err := serve.NewHandler(serve.DomainFactory(tiny.Domain, servetest.Level(t, tiny.Domain, level.L4)), o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		h.Close(context.Background())
	})
	return srv, h
}

// session opens a client speaking protocol 2025-11-25, which has
// sessions.
func session(t *testing.T, url string, headers map[string]string) *client.Client {
	return sessionAt(t, url, headers, mcp.ProtocolVersion20251125)
}

func sessionAt(t *testing.T, url string, headers map[string]string, version string) *client.Client {
	t.Helper()
	c, _, err := toolsrc.Connect(context.Background(), "", url, toolsrc.WithHeaders(headers), toolsrc.WithProtocolVersion(version))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSessionlessProtocolKeepsItsWrites: a 2026-07-28 client has no
// session, and its writes persist from call to call.
func TestSessionlessProtocolKeepsItsWrites(t *testing.T) {
	srv, h := httpServer(t, serve.Options{})
	c := sessionAt(t, srv.URL, nil, mcp.LATEST_PROTOCOL_VERSION)
	if c.GetSessionId() != "" || h.Sessions() != 0 {
		t.Fatalf("session %q, %d sessions", c.GetSessionId(), h.Sessions())
	}
	call(t, c, "set_lamp", `{"lamp_id":"LP02","level":33}`)
	if got, _ := call(t, c, "get_lamp", `{"lamp_id":"LP02"}`); !strings.Contains(got, `"level":33`) {
		t.Errorf("the write did not persist: %s", got)
	}
}

func call(t *testing.T, c *client.Client, tool, args string) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content[0].(mcp.TextContent).Text, res.IsError
}

// TestSessionsHaveTheirOwnStores: one client's writes are never visible
// to another; with a shared store they are.
func TestSessionsHaveTheirOwnStores(t *testing.T) {
	for _, shared := range []bool{false, true} {
		srv, _ := httpServer(t, serve.Options{SharedStore: shared})
		a, b := session(t, srv.URL, nil), session(t, srv.URL, nil)
		if _, isErr := call(t, a, "set_lamp", `{"lamp_id":"LP02","level":55,"on":true}`); isErr {
			t.Fatal("set_lamp failed")
		}
		got, _ := call(t, b, "get_lamp", `{"lamp_id":"LP02"}`)
		if sees := strings.Contains(got, `"level":55`); sees != shared {
			t.Errorf("shared=%v: the other session sees the write: %v (%s)", shared, sees, got)
		}
		a.Close()
		b.Close()
	}
}

func post(t *testing.T, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestHTTPRefusals: token, origin, body size, unknown and deleted
// sessions, and broken JSON-RPC each get their proper answer.
func TestHTTPRefusals(t *testing.T) {
	srv, _ := httpServer(t, serve.Options{Token: "s3cret", MaxBody: 4096, AllowedOrigins: []string{"https://inspector.example"}})
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		want    string
	}{
		{"no token", nil, initialize, 401, "missing or wrong bearer token"},
		{"wrong token", map[string]string{"Authorization": "Bearer guess"}, initialize, 401, "missing or wrong bearer token"},
		{"foreign origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, initialize, 403, "origin not allowed"},
		{"allowed origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://inspector.example"}, initialize, 200, `"serverInfo"`},
		{"loopback origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://localhost:6274"}, initialize, 200, `"serverInfo"`},
		{"oversized body", auth, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413, "request body over 4096 bytes"},
		{"unknown session", map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": "mcp-session-nope"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 404, "session not found"},
		{"malformed JSON", auth, `{"jsonrpc":"2.0","id":1,"method":`, 400, `"code":-32700`},
	}
	for _, c := range cases {
		status, body := post(t, srv.URL, c.headers, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d containing %q", c.name, status, body, c.status, c.want)
		}
		if strings.Contains(body, "goroutine") || strings.Contains(body, ".go:") {
			t.Errorf("%s: internals in the reply: %s", c.name, body)
		}
	}

	// A live session answers unknown methods with a JSON-RPC error and
	// survives; after DELETE its ID is refused.
	c := session(t, srv.URL, auth)
	id := c.GetSessionId()
	if id == "" {
		t.Fatal("no session ID")
	}
	hdr := map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": id, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	if status, body := post(t, srv.URL, hdr, `{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate"}`); !strings.Contains(body, `"code":-32601`) {
		t.Errorf("unknown method: %d %s", status, body)
	}
	if _, isErr := call(t, c, "get_lamp", `{"lamp_id":"LP01"}`); isErr {
		t.Error("session broken after an unknown method")
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, body := post(t, srv.URL, hdr, `{"jsonrpc":"2.0","id":8,"method":"ping"}`); status != 404 || !strings.Contains(body, "session not found") {
		t.Errorf("deleted session: %d %s", status, body)
	}
}

// TestManySessionsThenExpiry opens 200 concurrent sessions, uses each, and
// waits for idle expiry to end them all.
func TestManySessionsThenExpiry(t *testing.T) {
	srv, h := httpServer(t, serve.Options{IdleTimeout: 2 * time.Second, MaxSessions: 200})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	clients := make([]*client.Client, 200)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := toolsrc.Connect(context.Background(), "", srv.URL, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
			if err == nil {
				req := mcp.CallToolRequest{}
				req.Params.Name = "set_lamp"
				req.Params.Arguments = json.RawMessage(fmt.Sprintf(`{"lamp_id":"LP01","level":%d}`, i%100))
				var res *mcp.CallToolResult
				if res, err = c.CallTool(context.Background(), req); err == nil && res.IsError {
					err = fmt.Errorf("tool error")
				}
			}
			clients[i] = c
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := h.Sessions(); n != 200 {
		t.Fatalf("%d live sessions, want 200", n)
	}
	if status, body := post(t, srv.URL, nil, initialize); status != 503 || !strings.Contains(body, "too many sessions") {
		t.Errorf("session 201: %d %s", status, body)
	}
	deadline := time.Now().Add(8 * time.Second)
	for h.Sessions() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := h.Sessions(); n != 0 {
		t.Fatalf("%d sessions left after the idle timeout", n)
	}
	hdr := map[string]string{"Mcp-Session-Id": clients[0].GetSessionId()}
	if status, _ := post(t, srv.URL, hdr, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); status != 404 {
		t.Errorf("expired session: %d", status)
	}
}

func do(t *testing.T, method, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRefusedDeleteKeepsTheSession: a DELETE refused for its Host or its
// protocol version ends nothing; an accepted one ends the session.
func TestRefusedDeleteKeepsTheSession(t *testing.T) {
	srv, h := httpServer(t, serve.Options{})
	c := session(t, srv.URL, nil)
	hdr := map[string]string{"Mcp-Session-Id": c.GetSessionId(), "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range hdr {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	for _, refused := range []struct {
		headers map[string]string
		status  int
	}{
		{with("Host", "evil.example"), 403},
		{with("Mcp-Protocol-Version", "1999-01-01"), 400},
	} {
		if status, body := do(t, http.MethodDelete, srv.URL, refused.headers, ""); status != refused.status {
			t.Errorf("refused DELETE: %d %s, want %d", status, body, refused.status)
		}
		if h.Sessions() != 1 {
			t.Fatalf("a refused DELETE (%d) ended the session", refused.status)
		}
	}
	if _, isErr := call(t, c, "get_lamp", `{"lamp_id":"LP01"}`); isErr {
		t.Error("session broken after refused DELETEs")
	}
	if status, body := do(t, http.MethodDelete, srv.URL, hdr, ""); status != 200 || h.Sessions() != 0 {
		t.Errorf("accepted DELETE: %d %s, %d sessions left", status, body, h.Sessions())
	}
}

// TestErrorBodiesAreJSONRPC: every refusal, whoever makes it, is a JSON-RPC
// error object naming the problem without Go internals, and a request
// without a session ID after initialize is a 400.
func TestErrorBodiesAreJSONRPC(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) { testErrorBodies(t, shared) })
	}
}

func testErrorBodies(t *testing.T, shared bool) {
	srv, _ := httpServer(t, serve.Options{SharedStore: shared})
	c := session(t, srv.URL, nil)
	hdr := map[string]string{"Mcp-Session-Id": c.GetSessionId(), "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range hdr {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	cases := []struct {
		name    string
		method  string
		headers map[string]string
		body    string
		status  int
		want    string
	}{
		{"foreign host", http.MethodPost, with("Host", "evil.example"), ping, 403, "Host"},
		{"wrong content type", http.MethodPost, with("Content-Type", "text/plain"), ping, 400, "content type"},
		{"bad protocol version", http.MethodPost, with("Mcp-Protocol-Version", "1999-01-01"), ping, 400, "1999-01-01"},
		{"no session ID after initialize", http.MethodPost, with("Mcp-Session-Id", ""), ping, 400, "Mcp-Session-Id"},
		{"no session ID without a version", http.MethodPost, map[string]string{}, ping, 400, "Mcp-Session-Id"},
		{"GET without session ID", http.MethodGet, map[string]string{}, "", 400, "Mcp-Session-Id"},
		{"empty body", http.MethodPost, hdr, "", 400, "empty"},
		{"batch", http.MethodPost, hdr, "[" + ping + "]", 400, "batch"},
		{"params not an object", http.MethodPost, hdr, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1]}`, 200, "params"},
		{"number out of range in params", http.MethodPost, hdr, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":1e400}}`, 200, "out of range"},
		{"unknown session", http.MethodPost, with("Mcp-Session-Id", "mcp-session-nope"), ping, 404, "session not found"},
	}
	for _, c := range cases {
		status, body := do(t, c.method, srv.URL, c.headers, c.body)
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil {
			t.Errorf("%s: %d %q is not a JSON-RPC error", c.name, status, body)
			continue
		}
		if status != c.status || !strings.Contains(msg.Error.Message, c.want) {
			t.Errorf("%s: %d %s; want %d containing %q", c.name, status, body, c.status, c.want)
		}
		for _, internal := range []string{"Go struct", "float64", "json: ", "not valid json", "goroutine", ".go:"} {
			if strings.Contains(body, internal) {
				t.Errorf("%s: %q in the reply: %s", c.name, internal, body)
			}
		}
	}
}

// TestOutOfRangeArgumentIsAToolError: a number no float64 holds, in a tool's
// arguments, is the caller's mistake with that argument.
func TestOutOfRangeArgumentIsAToolError(t *testing.T) {
	srv, _ := httpServer(t, serve.Options{})
	c := session(t, srv.URL, nil)
	hdr := map[string]string{"Mcp-Session-Id": c.GetSessionId(), "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	status, body := do(t, http.MethodPost, srv.URL, hdr, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"set_lamp","arguments":{"lamp_id":"LP01","level":1e400}}}`)
	if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, `argument \"level\"`) || strings.Contains(body, "float64") {
		t.Errorf("1e400: %d %s", status, body)
	}
}

// TestSessionLimitIsExact: a burst of initializes opens at most
// MaxSessions sessions; the rest get 503.
func TestSessionLimitIsExact(t *testing.T) {
	const limit, burst = 5, 40
	srv, h := httpServer(t, serve.Options{MaxSessions: limit})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _ := do(t, http.MethodPost, srv.URL, nil, initialize)
			mu.Lock()
			codes[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != limit || codes[503] != burst-limit || h.Sessions() != limit {
		t.Errorf("statuses %v, %d sessions; want %d opened and %d refused", codes, h.Sessions(), limit, burst-limit)
	}
}

// TestReinitializeInASession is refused: the ID a second initialize would
// mint is never registered.
func TestReinitializeInASession(t *testing.T) {
	srv, h := httpServer(t, serve.Options{})
	c := session(t, srv.URL, nil)
	hdr := map[string]string{"Mcp-Session-Id": c.GetSessionId(), "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	if status, body := do(t, http.MethodPost, srv.URL, hdr, initialize); status != 400 || !strings.Contains(body, "already initialized") {
		t.Errorf("re-initialize: %d %s", status, body)
	}
	if h.Sessions() != 1 {
		t.Errorf("%d sessions, want 1", h.Sessions())
	}
	if _, isErr := call(t, c, "get_lamp", `{"lamp_id":"LP01"}`); isErr {
		t.Error("session broken after a refused re-initialize")
	}
}

// TestBearerSchemeIsCaseInsensitive, as RFC 9110 has every auth scheme;
// the token itself is matched exactly.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	srv, _ := httpServer(t, serve.Options{Token: "s3cret"})
	for auth, want := range map[string]int{"Bearer s3cret": 200, "bearer s3cret": 200, "BEARER  s3cret": 200, "Bearer S3CRET": 401, "Basic s3cret": 401} {
		if status, body := do(t, http.MethodPost, srv.URL, map[string]string{"Authorization": auth}, initialize); status != want {
			t.Errorf("%q: %d %s, want %d", auth, status, body, want)
		}
	}
}

// TestSlowSessionlessStartStallsNoSession: while the server of
// sessionless requests is slow to start (a source process that takes its
// time), another session's ping is answered.
func TestSlowSessionlessStartStallsNoSession(t *testing.T) {
	var slow atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	h, err := serve.NewHandler(func() (*server.MCPServer, func(), error) {
		if slow.Load() {
			close(entered)
			<-release
		}
		srv, err := tiny.Domain.NewServer(level.L4, tiny.Domain.NewStore())
		return srv, func() {}, err
	}, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer func() {
		srv.Close()
		h.Close(context.Background())
	}()
	c := session(t, srv.URL, nil)
	defer c.Close()
	slow.Store(true)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.LATEST_PROTOCOL_VERSION + `"}}}`
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	defer close(release)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the sessionless request never started its server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping of another session while the sessionless server starts: %v", err)
	}
}

// TestHostRuleOnTheHandler: the handler answers under loopback names, the
// address dialled and AllowedHosts, and refuses any other Host (a name
// an attacker rebound to this address), with or without Guard around it.
func TestHostRuleOnTheHandler(t *testing.T) {
	srv, _ := httpServer(t, serve.Options{AllowedHosts: []string{"granite.lan"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, c := range []struct {
		host   string
		status int
	}{{"localhost:" + port, 200}, {"127.0.0.1:" + port, 200}, {"granite.lan:" + port, 200}, {"GRANITE.LAN", 200},
		{"evil.example:" + port, 403}, {"granite.lan.evil.example", 403}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(initialize))
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("Host %s: %d %s; want %d", c.host, resp.StatusCode, b, c.status)
		}
	}
}

// TestCallCap: with MaxCalls 3 the fourth authorised tools/call is refused
// with a JSON-RPC error for its id, before any tool runs and unobserved;
// OnCallLimit runs once; requests without the token spend nothing.
func TestCallCap(t *testing.T) {
	over, observed := 0, 0
	srv, _ := httpServer(t, serve.Options{Token: "tok", MaxCalls: 3, OnCallLimit: func() { over++ }, SharedStore: true,
		OnCall: func(serve.Observed) { observed++ }})
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_lamp","arguments":{"lamp_id":"LP01"}}}`
	for range 5 {
		post(t, srv.URL, nil, msg)
		post(t, srv.URL, map[string]string{"Authorization": "Bearer wrong"}, msg)
	}
	auth := map[string]string{"Authorization": "Bearer tok"}
	c := session(t, srv.URL, auth)
	for range 3 {
		if _, isErr := call(t, c, "get_lamp", `{"lamp_id":"LP01"}`); isErr {
			t.Fatal("a call within the cap failed")
		}
	}
	hdr := map[string]string{"Authorization": "Bearer tok", "Mcp-Session-Id": c.GetSessionId(), "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	_, body := post(t, srv.URL, hdr, msg)
	post(t, srv.URL, hdr, msg)
	if over != 1 || observed != 3 || !strings.Contains(body, `"id":7`) || !strings.Contains(body, "cap of 3") {
		t.Errorf("over %d, observed %d, refusal %s; want over once, 3 calls observed, a JSON-RPC error for id 7", over, observed, body)
	}
}

// TestOnRequestSeesHowAClientConnected: a client without the token, then
// one that initializes, lists the tools and calls one, are each seen
// as they came, so that a caller can tell a client that never connected
// from one that chose to call nothing.
func TestOnRequestSeesHowAClientConnected(t *testing.T) {
	var mu sync.Mutex
	var seen []serve.Seen
	srv, _ := httpServer(t, serve.Options{Token: "s3cret", OnRequest: func(s serve.Seen) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s)
	}})
	if status, _ := post(t, srv.URL, map[string]string{"Authorization": "Bearer wrong"}, initialize); status != http.StatusUnauthorized {
		t.Fatalf("a wrong token got %d, want 401", status)
	}
	if status, _ := post(t, srv.URL, nil, initialize); status != http.StatusUnauthorized {
		t.Fatalf("no token got %d, want 401", status)
	}
	c := session(t, srv.URL, map[string]string{"Authorization": "Bearer s3cret"})
	defer c.Close()
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	call(t, c, "get_lamp", `{"lamp_id":"LP02"}`)
	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	for _, s := range seen {
		switch {
		case s.Refused && s.Method != "":
			t.Errorf("a refused request's method %q was read", s.Method)
		case s.Refused && s.NoToken:
			count["no token"]++
		case s.Refused:
			count["wrong token"]++
		default:
			count[s.Method]++
		}
	}
	want := map[string]int{"no token": 1, "wrong token": 1, "initialize": 1, "notifications/initialized": 1, "tools/list": 1, "tools/call": 1}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("seen %+v: %v; want %v", seen, count, want)
	}
}
