package serve_test

import (
	"io"
	"net/http"
	"net/http/httptest"
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
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		for k, v := range c.headers {
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
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if (resp.StatusCode == http.StatusOK) != strings.Contains(string(body), "data") {
			t.Errorf("%s: %d with body %q", c.name, resp.StatusCode, body)
		}
	}
}
