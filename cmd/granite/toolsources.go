package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// This file holds the flags that say where a command's tools come from,
// the same flags with the same meaning wherever they appear: an MCP
// server (serverFlags), a generated domain or a server (toolSource: synth
// and judge), and a server to regroup (externalSource: regroup, serve,
// list --interfaces, advise).

// serverFlags name the MCP server a subcommand reads tools from, the same
// flags with the same meaning wherever they appear: a tools/list file
// (--tools, where the subcommand reads one), a command speaking stdio
// (--mcp-cmd) or a streamable HTTP endpoint (--mcp-url), with headers
// for the endpoint (--mcp-header, repeatable).
type serverFlags struct {
	tools, mcpCmd, mcpURL *string
	headers               headerFlags
}

// addServerFlags defines the flags on fset; purpose ends each help line
// (", to regroup"), and withTools adds --tools.
func addServerFlags(fset *flag.FlagSet, purpose string, withTools bool) *serverFlags {
	s := &serverFlags{
		mcpCmd: fset.String("mcp-cmd", "", "an MCP server command speaking stdio"+purpose),
		mcpURL: fset.String("mcp-url", "", "an MCP streamable HTTP endpoint"+purpose),
	}
	fset.Var(&s.headers, "mcp-header", "a header sent to --mcp-url, as 'Name: value' (e.g. 'Authorization: Bearer TOKEN'); repeat it for more")
	if withTools {
		s.tools = fset.String("tools", "", "a JSON file holding a tools/list result"+purpose)
	} else {
		empty := ""
		s.tools = &empty
	}
	return s
}

func (s *serverFlags) live() bool { return *s.mcpCmd != "" || *s.mcpURL != "" }

// options are the connection options the flags give, or an error when
// headers were given without a URL to send them to.
func (s *serverFlags) options() ([]toolsrc.Option, error) {
	if len(s.headers) == 0 {
		return nil, nil
	}
	if *s.mcpURL == "" {
		return nil, fmt.Errorf("--mcp-header needs --mcp-url: a command speaking stdio has no headers")
	}
	return []toolsrc.Option{toolsrc.WithHeaders(s.headers)}, nil
}

// headerFlags collects repeated --mcp-header flags, each checked as it
// is given so that a malformed one fails with the other flag errors.
type headerFlags map[string]string

func (h headerFlags) String() string {
	var parts []string
	for k, v := range h {
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, ", ")
}

func (h *headerFlags) Set(s string) error {
	name, value, err := toolsrc.ParseHeader(s)
	if err != nil {
		return err
	}
	if *h == nil {
		*h = headerFlags{}
	}
	(*h)[name] = value
	return nil
}

// toolSource is where synth and judge take their tools from.
type toolSource struct {
	domain, level *string
	*serverFlags
}

// addToolSource defines --domain and --level beside the server flags.
func addToolSource(fset *flag.FlagSet) *toolSource {
	return &toolSource{
		domain:      fset.String("domain", "", "a generated domain"),
		level:       fset.String("level", "L4", "its granularity level"),
		serverFlags: addServerFlags(fset, "", true),
	}
}

// given reports whether any source was named.
func (s *toolSource) given() bool {
	return *s.domain != "" || *s.tools != "" || s.live()
}

// load lists the tools; for a generated domain it also returns an executor
// that grounds calls on a fresh store. Its errors about the flags are
// usageErrors.
func (s *toolSource) load(ctx context.Context) (tools []scenarios.Tool, source string, exec func([]scenarios.ExpectedCall) []scenarios.MockOutput, err error) {
	var listed []toolsrc.Tool
	opts, err := s.options()
	if err != nil {
		return nil, "", nil, badUsage(err)
	}
	switch {
	case *s.domain != "":
		d, ok := gen.Lookup(*s.domain)
		if !ok {
			return nil, "", nil, usagef("unknown domain %q: want one of %s", *s.domain, domainNames())
		}
		level, lerr := level.Parse(*s.level)
		if lerr != nil {
			return nil, "", nil, usagef("--level: %v", lerr)
		}
		return scenarios.FromDomain(d, level), "domain:" + d.Name + "/" + string(level), scenarios.Executor(d, level), nil
	case *s.tools != "":
		listed, err = toolsrc.LoadTools(*s.tools)
		source = "tools:" + *s.tools
	case s.live():
		listed, err = toolsrc.FromMCP(ctx, *s.mcpCmd, *s.mcpURL, opts...)
		source = "mcp:" + *s.mcpCmd + *s.mcpURL
	default:
		return nil, "", nil, usagef("give --domain, --tools, --mcp-cmd or --mcp-url")
	}
	if err != nil {
		return nil, "", nil, err
	}
	return scenarios.Listed(listed), source, nil, nil
}

// externalSource is an MCP server granite regroups: a live one (a
// command or a URL) or a tools/list file.
type externalSource struct {
	*serverFlags
	groups, name *string
}

// addExternalSource defines --groups and --name beside the server flags
// (--tools too when withTools).
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
