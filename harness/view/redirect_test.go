package view_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/view"
)

// TestTokenRedirectStaysLocal: an address carrying the token is sent on,
// without it, to a path of this server, never to one a browser reads as
// another site's (scheme-relative //host, or /\host, which browsers read
// the same way), so neither the page nor the fresh cookie leaves.
func TestTokenRedirectStaysLocal(t *testing.T) {
	v, err := view.New([]string{t.TempDir()}, view.Options{Token: "T"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ target, want string }{
		{"/trials?token=T&level=L1", "/trials?level=L1"},
		{"/?token=T", "/"},
		{"//evil.example/?token=T", "/"},
		{"//evil.example/trials?token=T&level=L1", "/?level=L1"},
		{`/\evil.example/?token=T`, "/"},
		{"///evil.example/?token=T", "/"},
		{"/%2F%2Fevil.example/?token=T", "/"},
		{"/%5Cevil.example/?token=T", "/"},
	}
	for _, c := range cases {
		// Read as the server reads a request line: the target is a path.
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + c.target + " HTTP/1.1\r\nHost: 127.0.0.1:7860\r\n\r\n")))
		if err != nil {
			t.Fatalf("%s: %v", c.target, err)
		}
		rec := httptest.NewRecorder()
		v.ServeHTTP(rec, req)
		loc := rec.Header().Get("Location")
		if rec.Code != http.StatusSeeOther || loc != c.want {
			t.Errorf("%s: %d to %q, want %d to %q", c.target, rec.Code, loc, http.StatusSeeOther, c.want)
		}
		if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, `/\`) || strings.Contains(loc, "token") {
			t.Errorf("%s: redirected to %q, which leaves the server or keeps the token", c.target, loc)
		}
		if !strings.Contains(rec.Header().Get("Set-Cookie"), "granite_view_token=T") {
			t.Errorf("%s: no cookie set: %q", c.target, rec.Header().Get("Set-Cookie"))
		}
	}
}
