package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/generator/runtime"
	"github.com/mcpgranite/granite/scenarios"
)

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("synth", "(--domain D --level L | --tools FILE | --mcp-cmd CMD | --mcp-url URL) [--count N] [--out FILE]",
		"Synthesizes evaluation scenarios from tool specifications with the offline backend: from\n"+
			"the schemas alone, calls with required and with all arguments and deliberately invalid\n"+
			"inputs an agent should refuse or repair, with structured assertions. Tools come from a\n"+
			"generated domain (whose calls are then executed on a fresh store), a tools/list JSON\n"+
			"file, or a live MCP server. Writes one artifact per line (specs/artifact.schema.json).", stderr)
	domain := fset.String("domain", "", "a generated domain")
	levelFlag := fset.String("level", "L4", "its granularity level")
	toolsFile := fset.String("tools", "", "a JSON file holding a tools/list result")
	mcpCmd := fset.String("mcp-cmd", "", "an MCP server command speaking stdio")
	mcpURL := fset.String("mcp-url", "", "an MCP streamable HTTP endpoint")
	count := fset.Int("count", 0, "scenarios to write (0: one round of every variant)")
	out := fset.String("out", "", "output file (default: standard output)")
	if code, ok := parse(fset, args); !ok {
		return code
	}
	var tools []scenarios.Tool
	var source string
	var err error
	switch {
	case *domain != "":
		d, ok := gen.Lookup(*domain)
		if !ok {
			fmt.Fprintf(stderr, "granite synth: unknown domain %q: want one of %s\n", *domain, domainNames())
			return 2
		}
		level, lerr := runtime.ParseLevel(*levelFlag)
		if lerr != nil {
			fmt.Fprintf(stderr, "granite synth: --level: %v\n", lerr)
			return 2
		}
		tools, source = scenarios.FromDomain(d, level), "domain:"+d.Name+"/"+string(level)
	case *toolsFile != "":
		tools, err = scenarios.LoadTools(*toolsFile)
		source = "tools:" + *toolsFile
	case *mcpCmd != "" || *mcpURL != "":
		tools, err = scenarios.FromMCP(ctx, *mcpCmd, *mcpURL)
		source = "mcp:" + *mcpCmd + *mcpURL
	default:
		fmt.Fprintln(stderr, "granite synth: give --domain, --tools, --mcp-cmd or --mcp-url")
		fset.Usage()
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "granite synth: %v\n", err)
		return 1
	}
	arts, err := scenarios.Offline(source, tools, *count)
	if err != nil {
		fmt.Fprintf(stderr, "granite synth: %v\n", err)
		return 1
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "granite synth: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	for _, a := range arts {
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(stderr, "granite synth: %v\n", err)
			return 1
		}
	}
	cov := scenarios.Measure(tools, arts)
	fmt.Fprintf(stderr, "%d scenarios from %s (offline backend): %d of %d tools used, %d of %d expected calls fit their tool's schema\n",
		len(arts), source, cov.Used, cov.Tools, cov.ValidCalls, cov.Calls)
	return 0
}
