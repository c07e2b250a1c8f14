// Package serve serves a generated domain at one level over MCP streamable
// HTTP: per-session stores, bounded and expiring sessions, and the safety
// defaults of granite serve (loopback Origin and Host checks, an optional
// bearer token, bounded bodies). granite serve uses it, and so can any
// caller that must serve a domain to an MCP client over the network. It
// serves stdio too, answering malformed messages the same way; serves a
// proxy of routed tools in front of a live MCP server, over HTTP or over
// stdio through a relay to a source command (proxy.go, relay.go); and
// opens in-process sessions, on which a gold run or a trial plays through
// the same tools/call path. Every MCP server granite runs is served here.
package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
	// AllowedHosts are Host names answered besides loopback ones and the
	// address a request came in on (see Guard); other Hosts get 403, so
	// that a page whose name was rebound to this address reads nothing.
	AllowedHosts []string
	// MaxBody bounds a request body (default 1 MiB); larger gets 413.
	MaxBody int64
	// OnCall, when set, sees every authorised tools/call of every session
	// once it is answered (see Observed); calls may come concurrently.
	OnCall func(Observed)
	// MaxCalls, when set, admits that many tools/call requests; each one
	// after is answered with a JSON-RPC error without reaching a store,
	// and the first of them calls OnCallLimit. Only authorised requests
	// count: a client without the token cannot spend them.
	MaxCalls    int
	OnCallLimit func()
	// OnRequest, when set, sees every request that passed the Host check,
	// before it is served: one without the token, or one whose JSON-RPC
	// method is known (see Seen). A caller learns from it how a client
	// connected, which a client that never did shows only by absence.
	OnRequest func(Seen)
}

// Seen is one request as OnRequest sees it.
type Seen struct {
	// Refused is a request refused with 401 for want of the token, which
	// it came without (NoToken: no Authorization header at all) or with
	// a wrong one; nothing else of it is read. Some clients end a session
	// with a DELETE that carries none of their headers (mcp-go's does).
	Refused, NoToken bool
	// Method is an authorised POST's JSON-RPC method (initialize,
	// tools/list, tools/call...), once the message is vetted.
	Method string
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
	// newServer starts a session's server on fresh state; its close
	// function runs when the session ends.
	newServer Factory
	o         Options
	shared    *server.StreamableHTTPServer
	sharedEnd func()

	calls    atomic.Int64 // tools/call requests admitted, for MaxCalls
	limited  sync.Once
	mu       sync.Mutex
	sessions map[string]*httpSession
	// sessionless serves requests without a session ID other than
	// initialize (protocol revisions without sessions), once started.
	sessionless *starting
	// opening counts initializes under way, which hold a session slot.
	opening int
	stop    chan struct{}
	done    chan struct{}
}

// starting is a session whose server starts outside the handler's lock:
// a source process slow to start must not stall every other session.
type starting struct {
	ready chan struct{} // closed once s or err is set
	s     *httpSession
	err   error
}

type httpSession struct {
	h     *server.StreamableHTTPServer
	last  time.Time
	close func()
}

// Factory starts an MCP server on fresh state and returns it with what
// ends that state (a no-op when nothing needs ending).
type Factory func() (*server.MCPServer, func(), error)

// end shuts a session's server down and frees its state.
func (s *httpSession) end(ctx context.Context) error {
	err := s.h.Shutdown(ctx)
	if s.close != nil {
		s.close()
	}
	return err
}

// NewHandler serves MCP servers over streamable HTTP with granite's
// sessions and safety defaults: each session gets a server from f (with
// SharedStore, all sessions share one); Close stops it. A domain's is
// DomainFactory; a regrouped external server's fresh state is a fresh
// source process.
func NewHandler(f Factory, o Options) (*Handler, error) {
	o.defaults()
	h := &Handler{newServer: f, o: o, sessions: map[string]*httpSession{}, stop: make(chan struct{}), done: make(chan struct{})}
	if o.SharedStore {
		srv, end, err := f()
		if err != nil {
			return nil, err
		}
		h.shared = server.NewStreamableHTTPServer(srv, server.WithSessionIdleTTL(o.IdleTimeout), hostChecked)
		h.sharedEnd = end
		close(h.done)
		return h, nil
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
				_ = s.end(context.Background())
			}
		}
	}
}

// Close ends every session.
func (h *Handler) Close(ctx context.Context) error {
	if h.shared != nil {
		err := h.shared.Shutdown(ctx)
		h.sharedEnd()
		return err
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
		errs = append(errs, s.end(ctx))
	}
	if sl != nil {
		<-sl.ready
		if sl.s != nil {
			errs = append(errs, sl.s.end(ctx))
		}
	}
	return errors.Join(errs...)
}

// httpError answers with a JSON-RPC error object and no internals.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(rpcError(nil, -32000, msg))
}

// allowedOrigin accepts requests without an Origin (non-browser clients),
// loopback origins, and the configured ones.
func (h *Handler) allowedOrigin(origin string) bool {
	return originAllowed(origin, h.o.AllowedOrigins)
}

// hostChecked turns off mcp-go's own DNS-rebinding check, which admits
// only loopback names on a loopback bind: the Handler checks Host itself,
// by Guard's rule, which also admits AllowedHosts and the address dialled.
var hostChecked = server.WithDisableLocalhostProtection(true)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hostAllowed(r, h.o.AllowedHosts) {
		httpError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's address, loopback, or an allowed host", r.Host))
		return
	}
	if h.o.Token != "" {
		// The scheme is case-insensitive (RFC 9110 section 11.1); the token is not.
		scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		got = strings.TrimSpace(got)
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(got), []byte(h.o.Token)) != 1 {
			if h.o.OnRequest != nil {
				h.o.OnRequest(Seen{Refused: true, NoToken: r.Header.Get("Authorization") == ""})
			}
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
	refuse := w // a refused call is answered here, and observed by no one
	w, r, observed := h.observing(w, r, body)
	capped := false
	defer func() {
		if !capped {
			observed()
		}
	}()
	var p post
	if r.Method == http.MethodPost {
		var ok bool
		if p, ok = h.vet(w, r, body); !ok {
			return
		}
		if h.o.OnRequest != nil {
			h.o.OnRequest(Seen{Method: p.method})
		}
		if h.o.MaxCalls > 0 && p.method == string(mcp.MethodToolsCall) && h.calls.Add(1) > int64(h.o.MaxCalls) {
			if h.o.OnCallLimit != nil {
				h.limited.Do(h.o.OnCallLimit)
			}
			capped = true
			refuse.Header().Set("Content-Type", "application/json")
			_, _ = refuse.Write(rpcError(p.id, -32000, fmt.Sprintf("the cap of %d tool calls is reached; no more calls are made", h.o.MaxCalls)))
			return
		}
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	opens := p.method == string(mcp.MethodInitialize)
	if id == "" && !opens && !p.modern {
		// Sessions began at initialize; the specification answers a later
		// request without the ID with 400.
		httpError(w, http.StatusBadRequest, "missing Mcp-Session-Id header: send the ID the initialize reply gave, or initialize a session with POST first")
		return
	}
	rw := &replyWriter{ResponseWriter: w}
	if h.shared != nil {
		h.shared.ServeHTTP(rw, r)
		rw.finish()
		return
	}
	if id == "" {
		if opens {
			h.open(rw, r)
		} else if sl, err := h.stateless(r.Context()); err != nil {
			httpError(w, http.StatusInternalServerError, "cannot start the server")
			return
		} else {
			sl.ServeHTTP(rw, r)
		}
		rw.finish()
		return
	}
	if opens {
		// A new initialize would mint an ID no one registers: a second
		// session starts without the header.
		httpError(w, http.StatusBadRequest, "this session is already initialized: to start another, POST initialize without an Mcp-Session-Id header")
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
	s.h.ServeHTTP(rw, r)
	rw.finish()
	// Only a DELETE the session's server accepted ends the session; one
	// refused for its Host or protocol version changes nothing.
	if r.Method == http.MethodDelete && rw.status/100 == 2 {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		_ = s.end(context.Background())
	}
}

// stateless returns the server of sessionless requests, started on first
// use with its own store. The start happens outside h.mu, which every
// session's requests take: only sessionless requests wait for it. One
// that fails is tried again by the next request.
func (h *Handler) stateless(ctx context.Context) (*server.StreamableHTTPServer, error) {
	h.mu.Lock()
	st := h.sessionless
	first := st == nil
	if first {
		st = &starting{ready: make(chan struct{})}
		h.sessionless = st
	}
	h.mu.Unlock()
	if first {
		srv, end, err := h.newServer()
		if err != nil {
			h.mu.Lock()
			h.sessionless = nil
			h.mu.Unlock()
			st.err = err
		} else {
			st.s = &httpSession{h: server.NewStreamableHTTPServer(srv, hostChecked), close: end}
		}
		close(st.ready)
	}
	select {
	case <-st.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if st.err != nil {
		return nil, st.err
	}
	return st.s.h, nil
}

// open starts a session on a fresh store: the request must be an
// initialize, and the session exists once the reply carries its ID.
func (h *Handler) open(w *replyWriter, r *http.Request) {
	// The slot is held from here, so a burst of initializes cannot pass
	// the check together and exceed the bound.
	h.mu.Lock()
	full := len(h.sessions)+h.opening >= h.o.MaxSessions
	if !full {
		h.opening++
	}
	h.mu.Unlock()
	if full {
		httpError(w.ResponseWriter, http.StatusServiceUnavailable, fmt.Sprintf("too many sessions (%d); end one or retry later", h.o.MaxSessions))
		return
	}
	registered := false
	defer func() {
		if !registered {
			h.mu.Lock()
			h.opening--
			h.mu.Unlock()
		}
	}()
	srv, end, err := h.newServer()
	if err != nil {
		httpError(w.ResponseWriter, http.StatusInternalServerError, "cannot start a session")
		return
	}
	sh := server.NewStreamableHTTPServer(srv, hostChecked)
	// Register the session before its ID reaches the client, which may
	// send its next request the moment it reads the reply.
	w.onID = func(id string) {
		h.mu.Lock()
		h.opening--
		registered = true
		h.sessions[id] = &httpSession{h: sh, last: time.Now(), close: end}
		h.mu.Unlock()
	}
	sh.ServeHTTP(w, r)
	if !registered {
		_ = sh.Shutdown(context.Background())
		end()
	}
}

// replyWriter notes the status of a reply, registers the session ID an
// initialize reply assigns as its header goes out, and turns the plain-text
// refusals of mcp-go (Host, Content-Type, protocol version, session) into
// JSON-RPC error objects like every other error granite answers with.
type replyWriter struct {
	http.ResponseWriter
	onID   func(string)
	status int
	// plain buffers a plain-text error body until finish rewrites it.
	plain *bytes.Buffer
}

func (c *replyWriter) WriteHeader(code int) {
	if c.status != 0 {
		return
	}
	c.status = code
	if c.onID != nil {
		if id := c.Header().Get(server.HeaderKeySessionID); id != "" {
			c.onID(id)
		}
	}
	if code >= 400 && !strings.HasPrefix(c.Header().Get("Content-Type"), "application/json") {
		c.plain = &bytes.Buffer{}
		return
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *replyWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.plain != nil {
		if c.plain.Len() < 512 {
			c.plain.Write(b)
		}
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}

func (c *replyWriter) Flush() {
	if c.plain != nil {
		return
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (c *replyWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// finish sends a buffered plain-text refusal as a JSON-RPC error.
func (c *replyWriter) finish() {
	if c.plain == nil {
		return
	}
	msg := strings.TrimSpace(c.plain.String())
	if c.status == http.StatusNotFound && strings.Contains(msg, "session") {
		msg = "session not found: it was deleted or expired; initialize a new one"
	}
	c.Header().Del("X-Content-Type-Options")
	httpError(c.ResponseWriter, c.status, msg)
}
