package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

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
