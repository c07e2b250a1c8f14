package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/serve"
)

// TestGuardRefusals: the safety defaults of granite serve, on a plain
// handler served on loopback.
func TestGuardRefusals(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "data") })
	srv := httptest.NewServer(serve.Guard(ok, serve.GuardOptions{Token: "s3cret", Cookie: "granite_token", AllowedOrigins: []string{"https://lab.example"}}))
	defer srv.Close()
	cases := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"a wrong bearer token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"the bearer token", map[string]string{"Authorization": "bearer s3cret"}, http.StatusOK},
		{"the token in the cookie", map[string]string{"Cookie": "granite_token=s3cret"}, http.StatusOK},
		{"a wrong cookie", map[string]string{"Cookie": "granite_token=s3cre"}, http.StatusUnauthorized},
		{"a rebound Host", map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example"}, http.StatusForbidden},
		{"localhost Host", map[string]string{"Authorization": "Bearer s3cret", "Host": "localhost:1"}, http.StatusOK},
		{"a foreign Origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"a loopback Origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://127.0.0.1:9"}, http.StatusOK},
		{"an allowed Origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://lab.example"}, http.StatusOK},
	}
	for _, c := range cases {
		resp, body := send(t, http.MethodGet, srv.URL, "", c.headers)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if (resp.StatusCode == http.StatusOK) != strings.Contains(string(body), "data") {
			t.Errorf("%s: %d with body %q", c.name, resp.StatusCode, body)
		}
	}
}

// TestGuardHost: a request passes the Host check only when its Host names
// the address it came in on, a loopback name or an allowed host, whatever
// the server is bound to; a DNS-rebinding page's own name never does.
func TestGuardHost(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "data") })
	h := serve.Guard(ok, serve.GuardOptions{AllowedHosts: []string{"lab.example", "granite.lan:7860"}})
	cases := []struct {
		name, local, host string
		want              int
	}{
		{"loopback by name", "127.0.0.1:7860", "localhost:7860", http.StatusOK},
		{"loopback by IP", "127.0.0.1:7860", "127.0.0.1:7860", http.StatusOK},
		{"loopback by the other family's IP", "127.0.0.1:7860", "[::1]:7860", http.StatusOK},
		{"a rebound name on loopback", "127.0.0.1:7860", "evil.example:7860", http.StatusForbidden},
		{"an allowed name on loopback (a local proxy)", "127.0.0.1:7860", "lab.example", http.StatusOK},
		{"a rebound name on the LAN address", "192.0.2.7:7860", "evil.example:7860", http.StatusForbidden},
		{"a rebound name without a port", "192.0.2.7:7860", "evil.example", http.StatusForbidden},
		{"the LAN address it came in on", "192.0.2.7:7860", "192.0.2.7:7860", http.StatusOK},
		{"another IP than the one it came in on", "192.0.2.7:7860", "192.0.2.8:7860", http.StatusForbidden},
		{"an IPv4-mapped local address", "[::ffff:192.0.2.7]:7860", "192.0.2.7:7860", http.StatusOK},
		{"the IPv6 address it came in on", "[2001:db8::1]:7860", "[2001:db8::1]:7860", http.StatusOK},
		{"an allowed name, in other case, with a dot", "192.0.2.7:7860", "LAB.Example.:7860", http.StatusOK},
		{"an allowed name given with a port", "192.0.2.7:7860", "granite.lan:7860", http.StatusOK},
		{"a name that only ends like an allowed one", "192.0.2.7:7860", "evillab.example", http.StatusForbidden},
		{"a loopback name on the LAN address", "192.0.2.7:7860", "localhost:7860", http.StatusOK},
		{"no Host", "192.0.2.7:7860", "", http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Host = c.host
			local, err := net.ResolveTCPAddr("tcp", c.local)
			if err != nil {
				t.Fatal(err)
			}
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("Host %q on %s: %d %s, want %d", c.host, c.local, rec.Code, rec.Body, c.want)
			}
			if rec.Code == http.StatusForbidden && !strings.Contains(rec.Body.String(), "--allow-host") {
				t.Errorf("refusal %q does not say how to allow the name", rec.Body)
			}
		})
	}
}

// TestGuardHostOnUnspecifiedBind serves on every address, as view --addr
// 0.0.0.0 does, and dials it on loopback and on this machine's first other
// address: a rebound name is refused on both, while the address dialled
// and loopback names pass.
func TestGuardHostOnUnspecifiedBind(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on every address: %v", err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "data") })
	srv := &http.Server{Handler: serve.Guard(ok, serve.GuardOptions{})}
	go srv.Serve(ln)
	defer srv.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ips := []string{"127.0.0.1"}
	if ip := lanIP(t); ip != "" {
		ips = append(ips, ip)
	}
	for _, ip := range ips {
		dial := net.JoinHostPort(ip, port)
		for _, c := range []struct {
			host string
			want int
		}{{dial, http.StatusOK}, {"localhost:" + port, http.StatusOK}, {"rebound.example:" + port, http.StatusForbidden}} {
			req, _ := http.NewRequest(http.MethodGet, "http://"+dial+"/", nil)
			req.Host = c.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("Host %s dialled at %s on a 0.0.0.0 bind: %d, want %d", c.host, dial, resp.StatusCode, c.want)
			}
		}
	}
}

// lanIP returns an IPv4 address of this machine other than loopback, or
// "" when it has none.
func lanIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Log("no address besides loopback: the 0.0.0.0 bind is dialled on loopback only")
	return ""
}

// TestGuardRefusalsAreJSONRPC: what Guard refuses, granite serve --transport
// http refuses before its handler sees the request, so each refusal has the
// shape of the handler's own: a JSON-RPC error object, served as JSON, that
// names what was refused and how to allow it.
func TestGuardRefusalsAreJSONRPC(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "data") })
	srv := httptest.NewServer(serve.Guard(ok, serve.GuardOptions{Token: "s3cret"}))
	defer srv.Close()
	cases := []struct {
		name    string
		headers map[string]string
		status  int
		says    []string
	}{
		{"a foreign Host", map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example:7860"}, http.StatusForbidden,
			[]string{`"evil.example:7860"`, "--allow-host evil.example"}},
		{"a foreign Origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, http.StatusForbidden,
			[]string{"origin not allowed", `"https://evil.example"`, "--allow-origin"}},
		{"no token", nil, http.StatusUnauthorized, []string{"missing or wrong token"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := send(t, http.MethodPost, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, c.headers)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil || string(msg.ID) != "null" {
				t.Fatalf("body %q is not a JSON-RPC error object (%v)", body, err)
			}
			if msg.Error.Code != -32000 {
				t.Errorf("error code %d, want -32000 like the handler's refusals", msg.Error.Code)
			}
			for _, s := range c.says {
				if !strings.Contains(msg.Error.Message, s) {
					t.Errorf("message %q does not say %s", msg.Error.Message, s)
				}
			}
		})
	}
}

// send makes one request with headers (Host sets the request's host) and
// returns the response with its body read.
func send(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, data
}
