package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "(--domain D | --scenario ID [--record FILE] | --mcp-cmd CMD | --mcp-url URL [--groups F]) --level L4|L3|L2|L1 [--transport stdio|http] [--addr 127.0.0.1:8765]",
		"Serves one domain at one granularity level to any MCP client, on a fresh store; or one\n"+
			"scenario's domain on one store all sessions share, recording every call for granite\n"+
			"score; or any MCP server regrouped at a level (see granite regroup), each HTTP session\n"+
			"on a fresh connection to it (for a command, a fresh process).\n"+
			"stdio (the default) speaks MCP on standard input and output; http serves MCP\n"+
			"streamable HTTP at /mcp (and /healthz for probes), bound to loopback unless --addr\n"+
			"says otherwise: each session gets its own fresh store, browser origins other than\n"+
			"loopback are refused, and --token (or $GRANITE_TOKEN) requires a bearer token.", stderr)
	domain := fs.String("domain", "", "domain to serve (see granite list)")
	levelFlag := fs.String("level", "L4", "granularity level: L4, L3, L2 or L1")
	transport := fs.String("transport", "stdio", "stdio or http")
	addr := fs.String("addr", "127.0.0.1:8765", "listen address for --transport http")
	var ho serve.Options
	fs.IntVar(&ho.MaxSessions, "max-sessions", 256, "http: most live sessions, each on its own fresh store")
	fs.DurationVar(&ho.IdleTimeout, "idle", 10*time.Minute, "http: end sessions idle this long")
	fs.BoolVar(&ho.SharedStore, "shared-store", false, "http: one store for all sessions instead of one each")
	fs.StringVar(&ho.Token, "token", "", "http: bearer token every request must carry (default: $GRANITE_TOKEN)")
	origins := fs.String("allow-origin", "", "http: browser origins to allow besides loopback ones (comma-separated)")
	hosts := fs.String("allow-host", "", "http: host names to answer under besides loopback ones and the address dialled (comma-separated)")
	fs.Int64Var(&ho.MaxBody, "max-body", 1<<20, "largest request in bytes: an HTTP body, or a stdio line")
	drain := fs.Duration("drain", serve.DrainTimeout, "stdio: once the input ends, how long calls under way have to be answered")
	sourceLine := fs.Int("max-source-line", regroup.MaxSourceLine, "with --mcp-cmd: longest line of the source's output in bytes; a longer answer fails its call")
	ext := addExternalSource(fs, false)
	scenario := fs.String("scenario", "", "http: serve this scenario's domain on one store all sessions share, and print its prompt to give the client")
	record := fs.String("record", "", "http, with --scenario: append every call of every session, as it is answered, and the store after it to this file, for granite score")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	// Zero or negative bounds are mistakes, not requests for the default.
	switch {
	case ho.MaxSessions < 1:
		fmt.Fprintf(stderr, "granite serve: --max-sessions %d: want at least 1\n", ho.MaxSessions)
		return 2
	case ho.IdleTimeout <= 0:
		fmt.Fprintf(stderr, "granite serve: --idle %s: want a positive duration, like 10m\n", ho.IdleTimeout)
		return 2
	case ho.MaxBody < 1:
		fmt.Fprintf(stderr, "granite serve: --max-body %d: want at least 1 byte\n", ho.MaxBody)
		return 2
	case *drain <= 0:
		fmt.Fprintf(stderr, "granite serve: --drain %s: want a positive duration, like 10s\n", *drain)
		return 2
	case *sourceLine < 1:
		fmt.Fprintf(stderr, "granite serve: --max-source-line %d: want at least 1 byte\n", *sourceLine)
		return 2
	}
	serve.DrainTimeout, serve.MaxLine, regroup.MaxSourceLine = *drain, ho.MaxBody, *sourceLine
	if ho.Token == "" {
		ho.Token = os.Getenv("GRANITE_TOKEN")
	}
	if *origins != "" {
		ho.AllowedOrigins = strings.Split(*origins, ",")
	}
	at := listen{addr: *addr, token: ho.Token, origins: ho.AllowedOrigins}
	if *hosts != "" {
		at.hosts = strings.Split(*hosts, ",")
		ho.AllowedHosts = at.hosts
	}
	if ext.live() {
		// An external server regrouped at the level, instead of a domain.
		level, err := level.Parse(*levelFlag)
		if err != nil || *domain != "" || *scenario != "" {
			fmt.Fprintf(stderr, "granite serve: --mcp-cmd/--mcp-url take a --level and no --domain or --scenario\n")
			return 2
		}
		return serveRegrouped(ctx, ext, level, *transport, at, ho, stdout, stderr)
	}
	if *record != "" && *scenario == "" {
		fmt.Fprintln(stderr, "granite serve: --record needs --scenario: the recording is scored against it")
		return 2
	}
	if *scenario != "" {
		level, err := level.Parse(*levelFlag)
		if err != nil {
			fmt.Fprintf(stderr, "granite serve: --level: %v\n", err)
			return 2
		}
		return serveRecorded(ctx, *scenario, *domain, *record, level, *transport, at, ho, stdout, stderr)
	}
	d, ok := gen.Lookup(*domain)
	if !ok {
		fmt.Fprintf(stderr, "granite serve: unknown domain %q: want one of %s\n", *domain, domainNames())
		return 2
	}
	level, err := level.Parse(*levelFlag)
	if err != nil {
		fmt.Fprintf(stderr, "granite serve: --level: %v\n", err)
		return 2
	}
	switch *transport {
	case "stdio":
		in, restore := serve.Pollable(os.Stdin)
		defer restore()
		if err := serve.Stdio(ctx, d, level, in, stdout); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "granite serve: %v\n", err)
			return 1
		}
		return 0
	case "http":
		h, err := serve.NewHandler(d, level, ho)
		if err != nil {
			fmt.Fprintf(stderr, "granite serve: %v\n", err)
			return 1
		}
		defer h.Close(context.Background())
		return serveHTTP(ctx, h, at, d.Name, level, stderr)
	default:
		fmt.Fprintf(stderr, "granite serve: unknown --transport %q: want stdio or http\n", *transport)
		return 2
	}
}

// listen is where an HTTP server of granite listens, and what its Guard
// checks besides the handler's own checks.
type listen struct {
	addr string
	// token is the handler's token, which the guard leaves to it (so
	// that /healthz answers probes without one); without a token, a
	// listener beyond loopback is warned about.
	token   string
	hosts   []string
	origins []string
}

// open listens on the address, and warns when it reaches beyond loopback
// without a token: every request is then answered to anyone who can reach
// the port (the Host check stops rebound names, not people on the network).
func (l listen) open(command string, stderr io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", l.addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() && l.token == "" {
		fmt.Fprintf(stderr, "granite %s: warning: listening on %s, beyond loopback, without a token: anyone who can reach it is answered; pass --token (or set $GRANITE_TOKEN), or bind to 127.0.0.1\n", command, ln.Addr())
	}
	return ln, nil
}

func serveHTTP(ctx context.Context, h http.Handler, at listen, domain string, level level.Level, stderr io.Writer) int {
	ln, err := at.open("serve", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "granite serve: %v\n", err)
		return 1
	}
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
	guarded := serve.Guard(mux, serve.GuardOptions{AllowedHosts: at.hosts, AllowedOrigins: at.origins})
	hs := &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	hs.RegisterOnShutdown(closeStreams)
	fmt.Fprintf(stderr, "granite: serving %s at %s on http://%s/mcp\n", domain, level, ln.Addr())
	return serveUntilDone(ctx, hs, ln, "serve", stderr)
}

// serveUntilDone serves on ln until the server fails (exit 1) or ctx ends
// (Ctrl-C, SIGTERM), then shuts down within 5 s (exit 0).
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, command string, stderr io.Writer) int {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "granite %s: %v\n", command, err)
		return 1
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil {
			fmt.Fprintf(stderr, "granite %s: shutdown: %v\n", command, err)
			return 1
		}
		return 0
	}
}

// domainNames lists the domains, in the registry's sorted order.
func domainNames() string {
	names := make([]string, len(gen.Domains))
	for i, d := range gen.Domains {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
