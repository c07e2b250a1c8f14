package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultHost is Ollama's own address, where every granite command and
// config looks when neither a host nor $OLLAMA_HOST names one.
const DefaultHost = "http://127.0.0.1:11434"

// ResolveHost is the host to use when host is the one given (a flag, a
// config's ollama.host): host itself, else $OLLAMA_HOST, else
// DefaultHost; with http:// in front when it names no scheme, as Ollama
// reads $OLLAMA_HOST.
func ResolveHost(host string) string {
	if host == "" {
		host = os.Getenv("OLLAMA_HOST")
	}
	if host == "" {
		host = DefaultHost
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return host
}

// ErrNoServer marks Dial's errors that say no Ollama answers at the host
// (nothing listening, or a server that is not Ollama), which a caller
// may forgive by falling back to something else; a missing model is not
// one of them.
var ErrNoServer = errors.New("no Ollama")

// probeTimeout bounds Dial's probe and model check: an Ollama that is up
// answers /api/version and /api/tags at once.
const probeTimeout = 5 * time.Second

// Dial returns a client of host once the host has shown it is an Ollama
// holding the models, or an error in one line saying why not: nothing
// listening or a server that is not Ollama (ErrNoServer, with the host),
// or an Ollama without a model, with Check's hint (ollama pull M).
func Dial(ctx context.Context, host string, hc *http.Client, models ...string) (*Client, error) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := Probe(pctx, host, hc); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrNoServer, host, err)
	}
	c, err := New(host, hc)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %s", ErrNoServer, host, firstLine(err.Error()))
	}
	if err := c.Check(pctx, models); err != nil {
		return nil, err
	}
	return c, nil
}

// Probe asks host's /api/version, which every Ollama answers with
// {"version": ...}. A server that answers anything else is named by its
// status and content type, never by its page, which may be a whole HTML
// document; a transport error is said in one line.
func Probe(ctx context.Context, host string, hc *http.Client) error {
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/api/version", nil)
	if err != nil {
		return err
	}
	res, err := hc.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return errors.New(firstLine(err.Error()))
	}
	defer res.Body.Close()
	var v struct {
		Version string `json:"version"`
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Version == "" {
		ct := res.Header.Get("Content-Type")
		if ct == "" {
			ct = "no content type"
		}
		return fmt.Errorf("a server answered /api/version with HTTP %d (%s), not Ollama's {\"version\": ...}; is --ollama the right address?", res.StatusCode, ct)
	}
	return nil
}

// firstLine keeps the first line of a message, shortened to 160 bytes.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return strings.TrimSpace(s)
}
