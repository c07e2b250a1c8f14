package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Endpoint is where one of granite's HTTP servers listens, and what its
// Guard checks besides the handler's own checks.
type Endpoint struct {
	Addr string
	// Token is the handler's token, which the guard leaves to it (so
	// that /healthz answers probes without one); without a token, a
	// listener beyond loopback is warned about.
	Token   string
	Hosts   []string
	Origins []string
}

// Listen listens on the address, and warns on warn, in the words of
// command, when it reaches beyond loopback without a token: every request
// is then answered to anyone who can reach the port (the Host check stops
// rebound names, not people on the network).
func (e Endpoint) Listen(command string, warn io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", e.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", e.Addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() && e.Token == "" {
		fmt.Fprintf(warn, "granite %s: warning: listening on %s, beyond loopback, without a token: anyone who can reach it is answered; pass --token (or set $GRANITE_TOKEN), or bind to 127.0.0.1\n", command, ln.Addr())
	}
	return ln, nil
}

// ServeMCP serves an MCP handler at /mcp, and /healthz for probes, on ln
// behind the endpoint's Guard, until the server fails or ctx ends (see
// UntilDone).
func (e Endpoint) ServeMCP(ctx context.Context, h http.Handler, ln net.Listener) error {
	// Shutdown waits for requests to finish, and a GET event stream never
	// does: streams end when shutdown begins, other requests may finish.
	closing, closeStreams := context.WithCancel(context.Background())
	defer closeStreams()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// A stream outlives any write timeout; it only carries
			// notifications, so a client that never reads holds little.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(closing, cancel)
			defer stop()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	// The write timeout frees a reply a client never reads.
	guarded := Guard(mux, GuardOptions{AllowedHosts: e.Hosts, AllowedOrigins: e.Origins})
	hs := &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	hs.RegisterOnShutdown(closeStreams)
	return UntilDone(ctx, hs, ln)
}

// UntilDone serves on ln until the server fails (its error) or ctx ends
// (Ctrl-C, SIGTERM), then shuts down within 5 s (nil, or what kept the
// shutdown from finishing).
func UntilDone(ctx context.Context, hs *http.Server, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		return nil
	}
}
