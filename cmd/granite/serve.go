package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "(--domain D | --scenario ID [--record FILE] | --mcp-cmd CMD | --mcp-url URL [--groups F]) (--level L4|L3|L2|L1 | --interface NAME) [--faults name:rate[:kinds]] [--transport stdio|http] [--addr 127.0.0.1:8765]",
		"Serves one domain at one granularity level to any MCP client, on a fresh store, or at\n"+
			"an interface over a level (--interface L3-terse: the level's tools as transformed,\n"+
			"each call decoded onto the level's server; see granite list --interfaces); or one\n"+
			"scenario's domain on one store all sessions share, recording every call for granite\n"+
			"score; or any MCP server regrouped at a level (see granite regroup), each HTTP session\n"+
			"on a fresh connection to it (for a command, a fresh process).\n"+
			"stdio (the default) speaks MCP on standard input and output; http serves MCP\n"+
			"streamable HTTP at /mcp (and /healthz for probes), bound to loopback unless --addr\n"+
			"says otherwise: each session gets its own fresh store, browser origins other than\n"+
			"loopback are refused, and --token (or $GRANITE_TOKEN) requires a bearer token.", stderr)
	domain := fs.String("domain", "", "domain to serve (see granite list)")
	levelFlag := fs.String("level", "L4", "granularity level: L4, L3, L2 or L1")
	ifaceFlag := fs.String("interface", "", "with --domain: serve this interface instead of a level as written: a level and transform presets joined by -, like L3-terse or L2-nested-opaque (see granite list --interfaces)")
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
	faultsFlag := fs.String("faults", "", "inject faults, a setting as name:rate or name:rate:kind,kind (like flaky:0.2:transient,rate_limit; see docs/faults.md), drawn per session as for a trial: where a domain's server runs a call, or, with --mcp-cmd or --mcp-url, where the relay reaches the source's tool")
	var sched faults.Schedule
	fs.IntVar(&sched.Seed, "fault-seed", 42, "with --faults: the run seed the schedule is drawn under (an experiment's seed)")
	fs.StringVar(&sched.Scenario, "fault-scenario", "", "with --faults: the scenario (or artifact) the schedule is drawn for, to meet a trial's faults (default: --scenario, else the domain's or the source server's name)")
	fs.IntVar(&sched.Repetition, "fault-repetition", 1, "with --faults: the repetition the schedule is drawn for")
	if err := parse(fs, args); err != nil {
		return err
	}
	var opts []serve.Option
	var scheduled *faults.Schedule // nil: no faults
	if *faultsFlag != "" {
		setting, err := faults.ParseSetting(*faultsFlag)
		if err != nil {
			return usagef("--faults: %v", err)
		}
		sched.Setting = setting
		if sched.Scenario == "" {
			sched.Scenario = cmp.Or(*scenario, *domain)
		}
		scheduled = &sched
		opts = append(opts, serve.WithFaults(scheduled))
	}
	// Zero or negative bounds are mistakes, not requests for the default.
	switch {
	case ho.MaxSessions < 1:
		return usagef("--max-sessions %d: want at least 1", ho.MaxSessions)
	case ho.IdleTimeout <= 0:
		return usagef("--idle %s: want a positive duration, like 10m", ho.IdleTimeout)
	case ho.MaxBody < 1:
		return usagef("--max-body %d: want at least 1 byte", ho.MaxBody)
	case *drain <= 0:
		return usagef("--drain %s: want a positive duration, like 10s", *drain)
	case *sourceLine < 1:
		return usagef("--max-source-line %d: want at least 1 byte", *sourceLine)
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
	if *ifaceFlag != "" {
		levelGiven := false
		fs.Visit(func(f *flag.Flag) { levelGiven = levelGiven || f.Name == "level" })
		switch {
		case levelGiven:
			return usagef("--interface %s and --level %s exclude each other: an interface names its level (L3-terse is L3 with terse descriptions); give one of them", *ifaceFlag, *levelFlag)
		case ext.live() || *scenario != "":
			return usagef("--interface serves a generated domain: give it with --domain, not --scenario, --mcp-cmd or --mcp-url")
		}
		return serveInterface(ctx, *domain, *ifaceFlag, *transport, at, ho, stdout, stderr, opts...)
	}
	if ext.live() {
		// An external server regrouped at the level, instead of a domain.
		level, err := level.Parse(*levelFlag)
		if err != nil || *domain != "" || *scenario != "" {
			return usagef("--mcp-cmd/--mcp-url take a --level and no --domain or --scenario")
		}
		return serveRegrouped(ctx, ext, level, *transport, at, ho, stdout, stderr, scheduled)
	}
	if *record != "" && *scenario == "" {
		return usagef("--record needs --scenario: the recording is scored against it")
	}
	if *scenario != "" {
		level, err := level.Parse(*levelFlag)
		if err != nil {
			return usagef("--level: %v", err)
		}
		return serveRecorded(ctx, *scenario, *domain, *record, level, *transport, at, ho, stdout, stderr, scheduled)
	}
	d, ok := gen.Lookup(*domain)
	if !ok {
		return usagef("unknown domain %q: want one of %s", *domain, domainNames())
	}
	level, err := level.Parse(*levelFlag)
	if err != nil {
		return usagef("--level: %v", err)
	}
	iface, err := serve.Identity(d, level)
	if err != nil {
		return err
	}
	return serveDomain(ctx, d, iface, *transport, at, ho, stdout, stderr, opts...)
}

// serveInterface serves domain at the interface named name over
// transport (serveDomain).
func serveInterface(ctx context.Context, domain, name, transport string, at serve.Endpoint, ho serve.Options, stdout, stderr io.Writer, opts ...serve.Option) error {
	d, ok := gen.Lookup(domain)
	if !ok {
		return usagef("unknown domain %q: want one of %s", domain, domainNames())
	}
	spec, err := surface.Parse(name)
	if err != nil {
		return usagef("--interface: %w", err)
	}
	iface, err := serve.DomainInterface(d, spec)
	if err != nil {
		return err
	}
	return serveDomain(ctx, d, iface, transport, at, ho, stdout, stderr, opts...)
}

// serveDomain serves d behind iface (a level is its identity interface)
// over transport: over stdio one session on a fresh store, over HTTP one
// per session (or one for all with SharedStore). Behind an interface
// other than a level's, each session is the level's server on its own
// store with the interface's proxy in front, so every call is decoded
// onto the level's call before it runs. opts add faults, drawn afresh for
// each session.
func serveDomain(ctx context.Context, d *mcpdomain.Domain, iface *surface.Interface, transport string, at serve.Endpoint, ho serve.Options, stdout, stderr io.Writer, opts ...serve.Option) error {
	switch transport {
	case "stdio":
		srv, _, err := serve.NewServer(d, iface, opts...)
		if err != nil {
			return err
		}
		in, restore := serve.Pollable(os.Stdin)
		defer restore()
		if err := serve.Stdio(ctx, srv, in, stdout, nil); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	case "http":
		// Sessions share the interface: it is only read once built.
		h, err := serve.NewHandler(serve.DomainFactory(d, iface, opts...), ho)
		if err != nil {
			return err
		}
		defer h.Close(context.Background())
		return serveHTTP(ctx, h, at, served(d.Name, iface.Spec), stderr)
	default:
		return usagef("unknown --transport %q: want stdio or http", transport)
	}
}

// serveHTTP serves h on the endpoint until ctx ends, saying what it
// serves (served) and where.
func serveHTTP(ctx context.Context, h http.Handler, at serve.Endpoint, what string, stderr io.Writer) error {
	ln, err := at.Listen("serve", stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "granite: serving %s on http://%s/mcp\n", what, ln.Addr())
	return at.ServeMCP(ctx, h, ln)
}

// served says what a server serves: "smarthome at L3" for a level as
// written, "smarthome at interface L3-terse" for any other interface.
func served(server string, spec surface.Spec) string {
	if spec.IsIdentity() {
		return server + " at " + string(spec.Level)
	}
	return server + " at interface " + spec.Name
}

// domainNames lists the domains, in the registry's sorted order.
func domainNames() string {
	names := make([]string, len(gen.Domains))
	for i, d := range gen.Domains {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
