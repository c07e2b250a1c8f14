package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
)

// fakeOllamaWithout answers as an Ollama does that has pulled only other
// models: /api/version and /api/tags, and 404 with Ollama's body for a
// chat with the model it lacks.
func fakeOllamaWithout(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"version": "0.17.4"})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"models": []map[string]any{{"name": "other:1b", "model": "other:1b"}}})
	})
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"model \"absent:3b\" not found, try pulling it first"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMissingModelStopsWithTheHint: judge, synth (even with --fallback
// offline, which is for no Ollama at all) and regroup --suggest stop on a
// model that is not pulled, with the hint run gives, instead of counting
// failed requests as failed validations or blaming the grouping.
func TestMissingModelStopsWithTheHint(t *testing.T) {
	host := fakeOllamaWithout(t)
	first := gen.Domains[0].Name
	dir := t.TempDir()
	arts := filepath.Join(dir, "a.jsonl")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"synth", "--domain", first, "--count", "3", "--out", arts}, &out, &errb); code != 0 {
		t.Fatalf("offline synth: exit %d: %s", code, errb.String())
	}
	hint := "has no model \"absent:3b\": run `ollama pull absent:3b` there"
	for _, args := range [][]string{
		{"judge", arts, "--domain", first, "--model", "absent:3b", "--ollama", host},
		{"synth", "--domain", first, "--model", "absent:3b", "--ollama", host, "--count", "2"},
		{"synth", "--domain", first, "--model", "absent:3b", "--ollama", host, "--count", "2", "--fallback", "offline"},
		{"regroup", "--tools", filepath.Join(dir, "a.tools.json"), "--suggest", "--model", "absent:3b", "--ollama", host},
	} {
		out.Reset()
		errb.Reset()
		code := run(context.Background(), args, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), hint) || strings.Contains(errb.String(), "failed validation") {
			t.Errorf("granite %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, errb.String(), hint)
		}
	}
}
