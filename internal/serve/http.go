// Package serve serves a generated domain at one level over MCP streamable
// HTTP: per-session stores, bounded and expiring sessions, and the safety
// defaults of granite serve (loopback Origin and Host checks, an optional
// bearer token, bounded bodies). granite serve uses it, and so can any
// caller that must serve a domain to an MCP client over the network.
package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Options shape a domain's MCP streamable HTTP endpoint.
type Options struct {
	// MaxSessions bounds the live sessions (default 256); an initialize
	// beyond it is refused with 503.
	MaxSessions int
	// IdleTimeout ends a session unused for that long (default 10 min).
	IdleTimeout time.Duration
	// SharedStore gives every session the same store; by default each
	// session has its own fresh store, so no client sees another's writes.
	SharedStore bool
	// Token, when set, is the bearer token every request must carry.
	Token string
	// AllowedOrigins are browser origins allowed besides loopback ones
	// (e.g. "https://inspector.example"); other Origin headers get 403.
	AllowedOrigins []string
	// MaxBody bounds a request body (default 1 MiB); larger gets 413.
	MaxBody int64
}

func (o *Options) defaults() {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 256
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
}

// Handler serves one domain at one level over MCP streamable HTTP,
// stateful as the session lifecycle of the protocol revisions up to
// 2025-11-25 describes: every session has its own server and store,
// sessions are bounded and expire when idle, and a deleted or expired
// session ID is refused with 404. Revision 2026-07-28 has no sessions: its
// requests carry no session ID and share one sessionless store, so a
// client's writes persist from call to call.
type Handler struct {
	d      *mcpdomain.Domain
	level  mcpdomain.Level
	o      Options
	shared *server.StreamableHTTPServer

	mu       sync.Mutex
	sessions map[string]*httpSession
	// sessionless serves requests without a session ID other than
	// initialize (protocol revisions without sessions).
	sessionless *server.StreamableHTTPServer
	stop        chan struct{}
	done        chan struct{}
}

type httpSession struct {
	h    *server.StreamableHTTPServer
	last time.Time
}

// NewHandler returns a handler serving d at level; Close stops it.
func NewHandler(d *mcpdomain.Domain, level mcpdomain.Level, o Options) (*Handler, error) {
	o.defaults()
	h := &Handler{d: d, level: level, o: o, sessions: map[string]*httpSession{}, stop: make(chan struct{}), done: make(chan struct{})}
	if o.SharedStore {
		srv, err := d.NewServer(level, d.NewStore())
		if err != nil {
			return nil, err
		}
		h.shared = server.NewStreamableHTTPServer(srv, server.WithSessionIdleTTL(o.IdleTimeout))
		close(h.done)
		return h, nil
	}
	if _, err := d.NewServer(level, d.NewStore()); err != nil {
		return nil, err
	}
	go h.expire()
	return h, nil
}

// Sessions is the number of live sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// expire ends idle sessions.
func (h *Handler) expire() {
	defer close(h.done)
	tick := time.NewTicker(max(h.o.IdleTimeout/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-tick.C:
			h.mu.Lock()
			var old []*httpSession
			for id, s := range h.sessions {
				if now.Sub(s.last) > h.o.IdleTimeout {
					old = append(old, s)
					delete(h.sessions, id)
				}
			}
			h.mu.Unlock()
			for _, s := range old {
				_ = s.h.Shutdown(context.Background())
			}
		}
	}
}

// Close ends every session.
func (h *Handler) Close(ctx context.Context) error {
	if h.shared != nil {
		return h.shared.Shutdown(ctx)
	}
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
	h.mu.Lock()
	all := h.sessions
	h.sessions = map[string]*httpSession{}
	sl := h.sessionless
	h.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.h.Shutdown(ctx))
	}
	if sl != nil {
		errs = append(errs, sl.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// httpError answers with a JSON-RPC error object and no internals.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%q}}`+"\n", msg)
}

// allowedOrigin accepts requests without an Origin (non-browser clients),
// loopback origins, and the configured ones.
func (h *Handler) allowedOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range h.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return u.Scheme == "http" || u.Scheme == "https"
	}
	return false
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.o.Token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.o.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="granite"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
	}
	if !h.allowedOrigin(r.Header.Get("Origin")) {
		httpError(w, http.StatusForbidden, "origin not allowed")
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBody))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", h.o.MaxBody))
			return
		case err != nil:
			httpError(w, http.StatusBadRequest, "unreadable request body")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if h.shared != nil {
		h.shared.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		switch {
		case r.Method != http.MethodPost:
			httpError(w, http.StatusBadRequest, "missing Mcp-Session-Id: initialize a session with POST first")
		case isInitialize(body):
			h.open(w, r)
		default:
			h.stateless().ServeHTTP(w, r)
		}
		return
	}
	h.mu.Lock()
	s, ok := h.sessions[id]
	if ok {
		s.last = time.Now()
	}
	h.mu.Unlock()
	if !ok {
		httpError(w, http.StatusNotFound, "session not found: it was deleted or expired; initialize a new one")
		return
	}
	s.h.ServeHTTP(w, r)
	if r.Method == http.MethodDelete {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		_ = s.h.Shutdown(context.Background())
	}
}

// isInitialize reports whether a POST body is an initialize request.
func isInitialize(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "initialize"
}

// stateless returns the server of sessionless requests, started on first
// use with its own store.
func (h *Handler) stateless() *server.StreamableHTTPServer {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessionless == nil {
		srv, err := h.d.NewServer(h.level, h.d.NewStore())
		if err != nil {
			panic(err) // NewHandler built one already
		}
		h.sessionless = server.NewStreamableHTTPServer(srv)
	}
	return h.sessionless
}

// open starts a session on a fresh store: the request must be an
// initialize, and the session exists once the reply carries its ID.
func (h *Handler) open(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	full := len(h.sessions) >= h.o.MaxSessions
	h.mu.Unlock()
	if full {
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many sessions (%d); end one or retry later", h.o.MaxSessions))
		return
	}
	srv, err := h.d.NewServer(h.level, h.d.NewStore())
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot start a session")
		return
	}
	sh := server.NewStreamableHTTPServer(srv)
	// Register the session before its ID reaches the client, which may
	// send its next request the moment it reads the reply.
	rec := &sessionCapture{ResponseWriter: w, onID: func(id string) {
		h.mu.Lock()
		h.sessions[id] = &httpSession{h: sh, last: time.Now()}
		h.mu.Unlock()
	}}
	sh.ServeHTTP(rec, r)
	if !rec.seen {
		_ = sh.Shutdown(context.Background())
	}
}

// sessionCapture registers the session ID a reply assigns as its header
// goes out.
type sessionCapture struct {
	http.ResponseWriter
	onID func(string)
	seen bool
	sent bool
}

func (c *sessionCapture) note() {
	if c.sent {
		return
	}
	c.sent = true
	if id := c.Header().Get(server.HeaderKeySessionID); id != "" {
		c.seen = true
		c.onID(id)
	}
}

func (c *sessionCapture) WriteHeader(code int) {
	c.note()
	c.ResponseWriter.WriteHeader(code)
}

func (c *sessionCapture) Write(b []byte) (int, error) {
	c.note()
	return c.ResponseWriter.Write(b)
}

func (c *sessionCapture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
