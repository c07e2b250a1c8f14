package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestResolveHost(t *testing.T) {
	for _, c := range []struct {
		name, given, env, want string
	}{
		{"the flag wins", "http://gpu:11434", "other:1", "http://gpu:11434"},
		{"then $OLLAMA_HOST", "", "http://env:11434", "http://env:11434"},
		{"$OLLAMA_HOST without a scheme, as Ollama reads it", "", "0.0.0.0:11434", "http://0.0.0.0:11434"},
		{"a flag without a scheme", "gpu:11434", "", "http://gpu:11434"},
		{"else Ollama's own address", "", "", DefaultHost},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OLLAMA_HOST", c.env)
			if got := ResolveHost(c.given); got != c.want {
				t.Errorf("ResolveHost(%q) with OLLAMA_HOST=%q = %q; want %q", c.given, c.env, got, c.want)
			}
		})
	}
}

// fakeHost serves /api/version with version (a page that is not
// Ollama's when version is "") and /api/tags listing model.
func fakeHost(t *testing.T, version, model string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		if version == "" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>\n<body>a web server</body>\n</html>"))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"version": version})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"models": []map[string]any{{"name": model, "model": model}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProbe(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, c := range []struct {
		name, host string
		want       string // in the error; "" for none
	}{
		{"an Ollama", fakeHost(t, "0.17.4", "m:1b"), ""},
		{"a web server, named by status and type, not its page", fakeHost(t, "", ""), "with HTTP 200 (text/html), not Ollama's"},
		{"nothing listening", closed.URL, "refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Probe(context.Background(), c.host, nil)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Probe: %v; want none", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Probe: %v; want an error saying %q", err, c.want)
			case err != nil && (strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "<html>")):
				t.Fatalf("Probe: %q; want one line without the page", err)
			}
		})
	}
}

// TestDial: no Ollama at the host is ErrNoServer, which a caller may
// forgive; a missing model is not, and says how to pull it.
func TestDial(t *testing.T) {
	ctx := context.Background()
	c, err := Dial(ctx, fakeHost(t, "0.17.4", "m:1b"), nil, "m:1b")
	if err != nil || c == nil {
		t.Fatalf("Dial of an Ollama with the model: %v", err)
	}
	host := fakeHost(t, "", "")
	if _, err := Dial(ctx, host, nil, "m:1b"); !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "no Ollama at "+host+": ") {
		t.Errorf("Dial of a web server: %v; want ErrNoServer naming the host", err)
	}
	_, err = Dial(ctx, fakeHost(t, "0.17.4", "other:1b"), nil, "m:1b")
	if err == nil || errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "run `ollama pull m:1b` there") {
		t.Errorf("Dial of an Ollama without the model: %v; want the pull hint, not ErrNoServer", err)
	}
}
