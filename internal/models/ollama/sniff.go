package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/internal/models"
)

// The ollama client reports a reply it cannot decode (a model that wrote
// tool-call arguments that are not a JSON object) and an error line in the
// stream (a crashed runner) as equally plain errors. The first is the
// model's fault and must not be retried; the second is transient, unless
// its text is Ollama's report of a tool call it could not parse (see
// unparsedToolCall). A sniffing transport watches the NDJSON lines go by,
// leaving the client's work untouched, and remembers which lines would
// not decode. It also cuts the body at the reply's bound and remembers
// that it did: the client ends a stream whose reading failed as if it
// had ended well, so only the sniff can tell a cut reply from a whole one.

type sniffKey struct{}

// sniff is the verdict on one request's reply.
type sniff struct {
	// maxTokens is the request's num_predict (0: none), which bounds the
	// reply's bytes (models.ReplyLimit).
	maxTokens int64
	mu        sync.Mutex
	malformed error
	tooLong   error
	read      int64
	// status is the reply's HTTP status; readErr the first failed read
	// of its body other than its end, which ollama/api does not report.
	status  int
	readErr error
}

func (s *sniff) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.malformed
}

// cut returns the *models.TooLongError of a reply cut at its bound, or
// nil, and the bytes read.
func (s *sniff) cut() (error, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tooLong, s.read
}

// ended returns the reply's HTTP status (0 when no reply came) and the
// first error reading its body other than io.EOF.
func (s *sniff) ended() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status, s.readErr
}

// withSniff attaches a sniff to a request context.
func withSniff(ctx context.Context, maxTokens int64) (context.Context, *sniff) {
	s := &sniff{maxTokens: maxTokens}
	return context.WithValue(ctx, sniffKey{}, s), s
}

// sniffTransport wraps response bodies of requests that carry a sniff.
type sniffTransport struct{ base http.RoundTripper }

func (t sniffTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	s, ok := req.Context().Value(sniffKey{}).(*sniff)
	if !ok || err != nil {
		return resp, err
	}
	s.mu.Lock()
	s.status = resp.StatusCode
	s.mu.Unlock()
	resp.Body = &cutWatcher{ReadCloser: models.LimitBody(resp.Body, s.maxTokens, nil), s: s}
	if resp.StatusCode < 400 {
		resp.Body = &lineSniffer{ReadCloser: resp.Body, s: s}
	}
	return resp, err
}

// cutWatcher counts what a bounded body passes on and remembers when it
// was cut.
type cutWatcher struct {
	io.ReadCloser
	s *sniff
}

func (c *cutWatcher) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.s.mu.Lock()
	c.s.read += int64(n)
	switch {
	case models.IsTooLong(err):
		if c.s.tooLong == nil {
			c.s.tooLong = err
		}
	case err != nil && err != io.EOF && c.s.readErr == nil:
		c.s.readErr = err
	}
	c.s.mu.Unlock()
	return n, err
}

// lineSniffer checks each complete line it passes on.
type lineSniffer struct {
	io.ReadCloser
	s    *sniff
	line []byte
}

func (l *lineSniffer) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			l.line = append(l.line, data...)
			break
		}
		l.check(append(l.line, data[:i]...))
		l.line = l.line[:0]
		data = data[i+1:]
	}
	if err == io.EOF && len(bytes.TrimSpace(l.line)) > 0 {
		l.check(l.line)
	}
	return n, err
}

func (l *lineSniffer) check(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &e) == nil && e.Error != "" {
		return // an error line: the client reports it, Chat reads its text
	}
	var resp api.ChatResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		l.s.mu.Lock()
		if l.s.malformed == nil {
			l.s.malformed = err
		}
		l.s.mu.Unlock()
	}
}

// sniffingClient returns an HTTP client whose transport sniffs replies.
func sniffingClient(hc *http.Client) *http.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = sniffTransport{base: base}
	return &c
}
