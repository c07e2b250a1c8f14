package toolsrc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// TestInitializeTimeout: a command that never answers initialize fails
// after toolsrc.InitTimeout instead of blocking.
func TestInitializeTimeout(t *testing.T) {
	old := toolsrc.InitTimeout
	toolsrc.InitTimeout = 300 * time.Millisecond
	defer func() { toolsrc.InitTimeout = old }()
	start := time.Now()
	_, err := toolsrc.FromMCP(context.Background(), "sleep 60", "")
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestHeadersReachAURLSource: headers given toolsrc.WithHeaders arrive with every
// request to a URL source, so a server behind a bearer token lists its
// tools; without them the server refuses.
func TestHeadersReachAURLSource(t *testing.T) {
	d := tiny.Domain
	h, err := serve.NewHandler(serve.DomainFactory(d, servetest.Level(t, d, level.L3)), serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	tools, err := toolsrc.FromMCP(context.Background(), "", srv.URL, toolsrc.WithHeaders(map[string]string{"Authorization": "Bearer s3cret"}))
	if err != nil || len(tools) != len(d.Tools[level.L3]) {
		t.Fatalf("with the token: %d tools, %v; want %d", len(tools), err, len(d.Tools[level.L3]))
	}
	mu.Lock()
	for i, got := range seen {
		if got != "Bearer s3cret" {
			t.Errorf("request %d carried Authorization %q", i, got)
		}
	}
	mu.Unlock()
	if _, err := toolsrc.FromMCP(context.Background(), "", srv.URL); err == nil {
		t.Error("without the token: no error")
	}
}

func TestParseHeader(t *testing.T) {
	for _, c := range []struct{ in, name, value string }{
		{"Authorization: Bearer abc", "Authorization", "Bearer abc"},
		{"X-Api-Key:k:with:colons", "X-Api-Key", "k:with:colons"},
		{"  X-Empty:  ", "X-Empty", ""},
	} {
		name, value, err := toolsrc.ParseHeader(c.in)
		if err != nil || name != c.name || value != c.value {
			t.Errorf("%q: %q, %q, %v; want %q, %q", c.in, name, value, err, c.name, c.value)
		}
	}
	for _, bad := range []string{"Authorization", ": v", "Two Words: v"} {
		if _, _, err := toolsrc.ParseHeader(bad); err == nil || !strings.Contains(err.Error(), "Name: value") {
			t.Errorf("%q: %v; want an error showing Name: value", bad, err)
		}
	}
}
