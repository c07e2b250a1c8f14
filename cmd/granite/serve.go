package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
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
	sourceLine := fs.Int("max-source-line", serve.MaxSourceLine, "with --mcp-cmd: longest line of the source's output in bytes; a longer answer fails its call")
	ext := addExternalSource(fs, false)
	scenario := fs.String("scenario", "", "http: serve this scenario's domain on one store all sessions share, and print its prompt to give the client")
	record := fs.String("record", "", "http, with --scenario: append every call of every session, as it is answered, and the store after it to this file, for granite score")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	// Zero or negative bounds are mistakes, not requests for the default.
	switch {
	case ho.MaxSessions < 1:
		return fail(stderr, "serve", 2, fmt.Errorf("--max-sessions %d: want at least 1", ho.MaxSessions))
	case ho.IdleTimeout <= 0:
		return fail(stderr, "serve", 2, fmt.Errorf("--idle %s: want a positive duration, like 10m", ho.IdleTimeout))
	case ho.MaxBody < 1:
		return fail(stderr, "serve", 2, fmt.Errorf("--max-body %d: want at least 1 byte", ho.MaxBody))
	case *drain <= 0:
		return fail(stderr, "serve", 2, fmt.Errorf("--drain %s: want a positive duration, like 10s", *drain))
	case *sourceLine < 1:
		return fail(stderr, "serve", 2, fmt.Errorf("--max-source-line %d: want at least 1 byte", *sourceLine))
	}
	serve.DrainTimeout, serve.MaxLine, serve.MaxSourceLine = *drain, ho.MaxBody, *sourceLine
	if ho.Token == "" {
		ho.Token = os.Getenv("GRANITE_TOKEN")
	}
	if *origins != "" {
		ho.AllowedOrigins = strings.Split(*origins, ",")
	}
	at := serve.Endpoint{Addr: *addr, Token: ho.Token, Origins: ho.AllowedOrigins}
	if *hosts != "" {
		at.Hosts = strings.Split(*hosts, ",")
		ho.AllowedHosts = at.Hosts
	}
	if ext.live() {
		// An external server regrouped at the level, instead of a domain.
		level, err := level.Parse(*levelFlag)
		if err != nil || *domain != "" || *scenario != "" {
			return fail(stderr, "serve", 2, errors.New("--mcp-cmd/--mcp-url take a --level and no --domain or --scenario"))
		}
		return serveRegrouped(ctx, ext, level, *transport, at, ho, stdout, stderr)
	}
	if *record != "" && *scenario == "" {
		return fail(stderr, "serve", 2, errors.New("--record needs --scenario: the recording is scored against it"))
	}
	if *scenario != "" {
		level, err := level.Parse(*levelFlag)
		if err != nil {
			return fail(stderr, "serve", 2, fmt.Errorf("--level: %v", err))
		}
		return serveRecorded(ctx, *scenario, *domain, *record, level, *transport, at, ho, stdout, stderr)
	}
	d, ok := gen.Lookup(*domain)
	if !ok {
		return fail(stderr, "serve", 2, fmt.Errorf("unknown domain %q: want one of %s", *domain, domainNames()))
	}
	level, err := level.Parse(*levelFlag)
	if err != nil {
		return fail(stderr, "serve", 2, fmt.Errorf("--level: %v", err))
	}
	switch *transport {
	case "stdio":
		in, restore := serve.Pollable(os.Stdin)
		defer restore()
		if err := serve.Stdio(ctx, d, level, in, stdout); err != nil && !errors.Is(err, context.Canceled) {
			return fail(stderr, "serve", 1, err)
		}
		return 0
	case "http":
		h, err := serve.NewHandler(d, level, ho)
		if err != nil {
			return fail(stderr, "serve", 1, err)
		}
		defer h.Close(context.Background())
		return serveHTTP(ctx, h, at, d.Name, level, stderr)
	default:
		return fail(stderr, "serve", 2, fmt.Errorf("unknown --transport %q: want stdio or http", *transport))
	}
}

// serveHTTP serves h on the endpoint until ctx ends, saying where.
func serveHTTP(ctx context.Context, h http.Handler, at serve.Endpoint, domain string, level level.Level, stderr io.Writer) int {
	ln, err := at.Listen("serve", stderr)
	if err != nil {
		return fail(stderr, "serve", 1, err)
	}
	fmt.Fprintf(stderr, "granite: serving %s at %s on http://%s/mcp\n", domain, level, ln.Addr())
	if err := at.ServeMCP(ctx, h, ln); err != nil {
		return fail(stderr, "serve", 1, err)
	}
	return 0
}

// domainNames lists the domains, in the registry's sorted order.
func domainNames() string {
	names := make([]string, len(gen.Domains))
	for i, d := range gen.Domains {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
