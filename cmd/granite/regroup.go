package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// externalSource is an MCP server granite regroups: a live one (a
// command or a URL) or a tools/list file.
type externalSource struct {
	*serverFlags
	groups, name *string
}

func addExternalSource(fset *flag.FlagSet, withTools bool) *externalSource {
	return &externalSource{
		serverFlags: addServerFlags(fset, ", to regroup", withTools),
		groups:      fset.String("groups", "", "a groups file (specs/groups.schema.json; granite regroup --suggest writes one) saying which tools share a coarse tool (default: derived)"),
		name:        fset.String("name", "", "the server's short name, which derived tool names start with (default: from the server's own name)"),
	}
}

// load lists the source's tools and returns its short name; a live
// source's connection is returned open for the caller to use or close.
func (s *externalSource) load(ctx context.Context) (tools []toolsrc.Tool, name string, c *client.Client, err error) {
	opts, err := s.options()
	if err != nil {
		return nil, "", nil, err
	}
	switch {
	case *s.mcpCmd != "" && *s.mcpURL != "":
		return nil, "", nil, fmt.Errorf("give one of --mcp-cmd and --mcp-url")
	case s.live():
		var init *mcp.InitializeResult
		c, init, err = toolsrc.Connect(ctx, *s.mcpCmd, *s.mcpURL, opts...)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s%s: %w", *s.mcpCmd, *s.mcpURL, err)
		}
		if tools, err = toolsrc.ListTools(ctx, c); err != nil {
			c.Close()
			return nil, "", nil, err
		}
		name = init.ServerInfo.Name
	case *s.tools != "":
		if tools, err = toolsrc.LoadTools(*s.tools); err != nil {
			return nil, "", nil, err
		}
		name = strings.TrimSuffix(filepath.Base(*s.tools), filepath.Ext(*s.tools))
	default:
		return nil, "", nil, fmt.Errorf("give --mcp-cmd, --mcp-url or --tools")
	}
	if *s.name != "" {
		name = *s.name
	}
	return tools, regroup.ServerName(name), c, nil
}

// grouping reads the groups file, or derives the groups.
func (s *externalSource) grouping(name string, tools []toolsrc.Tool) (*regroup.Groups, error) {
	if *s.groups == "" {
		return regroup.Derive(name, tools), nil
	}
	return regroup.LoadGroups(*s.groups, tools)
}

// forInterfaces is load and grouping for a command that builds
// interfaces over the server (granite list --interfaces, granite
// advise): a tool whose name an interface cannot carry is skipped with a
// warning, as granite synth skips a tool no call fits, and taken out of
// the groups, instead of refusing the whole server.
func (s *externalSource) forInterfaces(ctx context.Context, cmd string, stderr io.Writer) (tools []toolsrc.Tool, name string, g *regroup.Groups, skipped []regroup.Skip, err error) {
	all, name, c, err := s.load(ctx)
	if err != nil {
		return nil, "", nil, nil, err
	}
	if c != nil {
		c.Close()
	}
	tools, skipped = regroup.Exposable(all)
	for _, sk := range skipped {
		fmt.Fprintf(stderr, "granite %s: warning: skipping tool %q: %s\n", cmd, sk.Tool, sk.Why)
	}
	if len(tools) == 0 {
		return nil, "", nil, nil, fmt.Errorf("none of the server's %d tools has a name an interface can carry; granite regroup and granite serve take them as they are", len(all))
	}
	if *s.groups == "" {
		return tools, name, regroup.Derive(name, tools), skipped, nil
	}
	// The file names the server's tools, the skipped ones among them.
	if g, err = regroup.LoadGroups(*s.groups, all); err != nil {
		return nil, "", nil, nil, err
	}
	return tools, name, g.Only(tools), skipped, nil
}

func runRegroup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("regroup", "(--mcp-cmd CMD | --mcp-url URL | --tools FILE) [--groups FILE] [--suggest [--model M]]",
		"Shows an MCP server's tools regrouped at L4 (as published), L3 (task tools), L2 (query and\n"+
			"control) and L1 (one tool). Without --groups the groups are derived: L2 by each tool's\n"+
			"readOnlyHint (else the verb of its name), L3 by the four task categories. --suggest writes\n"+
			"the groups as a groups file to edit (granite regroup --mcp-cmd ... --suggest > groups.yaml);\n"+
			"with --model an Ollama model proposes them under constrained decoding, every tool once.\n"+
			"Serve the result with granite serve --mcp-cmd CMD --level L2 [--groups groups.yaml].", stderr)
	src := addExternalSource(fset, true)
	suggest := fset.Bool("suggest", false, "write the groups as a groups file to standard output")
	model := fset.String("model", "", "with --suggest: an Ollama model proposes the groups")
	host := fset.String("ollama", "", "Ollama base URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
	if code, ok := parse(fset, args); !ok {
		return code
	}
	if *model != "" && !*suggest {
		return fail(stderr, "regroup", 2, errors.New("--model needs --suggest"))
	}
	tools, name, c, err := src.load(ctx)
	if err != nil {
		return fail(stderr, "regroup", 1, err)
	}
	if c != nil {
		c.Close()
	}
	var g *regroup.Groups
	how := "derived by granite: L2 by readOnlyHint (else the verb of the name), L3 by task category"
	if *model != "" {
		llm, err := connectLLM(ctx, *host, *model)
		if err != nil {
			return fail(stderr, "regroup", 1, err)
		}
		if g, err = regroup.Suggest(ctx, llm, name, tools); err != nil {
			return fail(stderr, "regroup", 1, err)
		}
		how = "proposed by " + *model + " under constrained decoding, checked by granite"
	} else if g, err = src.grouping(name, tools); err != nil {
		return fail(stderr, "regroup", 1, err)
	}
	iface, err := regroup.Build(tools, g)
	if err != nil {
		return fail(stderr, "regroup", 1, err)
	}
	if *suggest {
		out, err := g.YAML([]string{
			fmt.Sprintf("granite groups file for %s (%d tools); %s.", name, len(tools), how),
			"Edit freely: at each level every tool must be in exactly one group. Schema: specs/groups.schema.json.",
			"Use it: granite serve --mcp-cmd CMD --level L2 --groups THIS_FILE",
		})
		if err != nil {
			return fail(stderr, "regroup", 1, err)
		}
		_, _ = stdout.Write(out)
		return 0
	}
	// The names are the server's: escaped, so that one holding a line
	// break or a terminal escape stays on its line and moves nothing.
	for _, lv := range level.Levels {
		fmt.Fprintf(stdout, "%s (%s)\n", lv, count(len(iface.Levels[lv]), "tool"))
		for _, ct := range iface.Levels[lv] {
			switch names := ct.ActionNames(); {
			case ct.HasAction():
				fmt.Fprintf(stdout, "  %-32s action: %s\n", oneline.Escape(ct.Name), oneline.Escape(strings.Join(names, ", ")))
			case len(names) == 1 && names[0] != ct.Name: // a group of one: its tool under the group's name
				fmt.Fprintf(stdout, "  %-32s %s, as it is (a group of one takes no action)\n", oneline.Escape(ct.Name), oneline.Escape(names[0]))
			default:
				fmt.Fprintf(stdout, "  %s\n", oneline.Escape(ct.Name))
			}
		}
	}
	return 0
}

// serveRegrouped serves an external server at a level over stdio (one
// source connection for the process) or HTTP (a fresh source connection
// per session: for a command, a fresh process), with serve's safety
// defaults.
func serveRegrouped(ctx context.Context, src *externalSource, lv level.Level, transport string, at serve.Endpoint, ho serve.Options, stdout, stderr io.Writer) int {
	tools, name, c, err := src.load(ctx)
	if err != nil {
		return fail(stderr, "serve", 1, err)
	}
	// The probe that listed the tools ends: every connection to the
	// source starts fresh.
	c.Close()
	g, err := src.grouping(name, tools)
	var iface *regroup.Interface
	if err == nil {
		iface, err = regroup.Build(tools, g)
	}
	var p *serve.Proxy
	if err == nil {
		p, err = iface.Proxy(name, lv)
	}
	if err != nil {
		return fail(stderr, "serve", 1, err)
	}
	opts, _ := src.options() // load checked them
	p.Source = serve.Source{Cmd: *src.mcpCmd, URL: *src.mcpURL, Options: opts}
	switch transport {
	case "stdio":
		in, restore := serve.Pollable(os.Stdin)
		defer restore()
		if err := p.ServeStdio(ctx, in, stdout, stderr); err != nil && !errors.Is(err, context.Canceled) {
			return fail(stderr, "serve", 1, err)
		}
		return 0
	case "http":
		h, err := p.Handler(ho, stderr)
		if err != nil {
			return fail(stderr, "serve", 1, err)
		}
		defer h.Close(context.Background())
		return serveHTTP(ctx, h, at, name+" (regrouped)", lv, stderr)
	default:
		return fail(stderr, "serve", 2, fmt.Errorf("unknown --transport %q: want stdio or http", transport))
	}
}
