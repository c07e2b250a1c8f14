package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/generator/runtime"
	"github.com/mcpgranite/granite/scenarios"
)

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("synth", "(--domain D --level L | --tools FILE | --mcp-cmd CMD | --mcp-url URL) [--count N] [--out FILE]",
		"Synthesizes evaluation scenarios from tool specifications. With --model, an Ollama model\n"+
			"writes them under constrained decoding (each call's tool must exist and its arguments fit\n"+
			"its schema; replies are validated, failures fed back, discarded after 3 retries). Without\n"+
			"it, or when no Ollama answers, the offline backend derives them from the schemas alone.\n"+
			"Tools come from a generated domain (calls are then executed on a fresh store), a\n"+
			"tools/list JSON file, or a live MCP server. Writes one artifact per line\n"+
			"(specs/artifact.schema.json).", stderr)
	domain := fset.String("domain", "", "a generated domain")
	levelFlag := fset.String("level", "L4", "its granularity level")
	toolsFile := fset.String("tools", "", "a JSON file holding a tools/list result")
	mcpCmd := fset.String("mcp-cmd", "", "an MCP server command speaking stdio")
	mcpURL := fset.String("mcp-url", "", "an MCP streamable HTTP endpoint")
	count := fset.Int("count", 0, "scenarios to write (offline, 0: one round of every variant; with --model, default 10)")
	model := fset.String("model", "", "an Ollama model for the LLM backend (default: the offline backend)")
	host := fset.String("ollama", "", "Ollama base URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
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
	var exec func([]scenarios.ExpectedCall) []scenarios.MockOutput
	if *domain != "" {
		d, _ := gen.Lookup(*domain)
		level, _ := runtime.ParseLevel(*levelFlag)
		exec = scenarios.Executor(d, level)
	}
	backend := "offline"
	var arts []scenarios.Artifact
	if *model != "" {
		if *host == "" {
			*host = os.Getenv("OLLAMA_HOST")
		}
		if *host == "" {
			*host = "http://127.0.0.1:11434"
		}
		if !strings.Contains(*host, "://") {
			*host = "http://" + *host
		}
		llm, lerr := scenarios.NewLLM(*host, *model, nil)
		if lerr == nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, lerr = llm.Client.List(pctx)
			cancel()
		}
		if lerr != nil {
			fmt.Fprintf(stderr, "granite synth: no Ollama at %s (%v); using the offline backend\n", *host, lerr)
		} else {
			n := *count
			if n <= 0 {
				n = 10
			}
			res, serr := llm.Synthesize(ctx, source, tools, n, exec)
			if serr != nil {
				fmt.Fprintf(stderr, "granite synth: %v\n", serr)
				return 1
			}
			arts, backend = res.Artifacts, "ollama "+*model
			fmt.Fprintf(stderr, "%d replies failed validation and were retried, %d scenarios discarded after %d retries\n", res.Retried, res.Discarded, scenarios.Retries)
		}
	}
	if arts == nil {
		if arts, err = scenarios.Offline(source, tools, *count); err != nil {
			fmt.Fprintf(stderr, "granite synth: %v\n", err)
			return 1
		}
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
	fmt.Fprintf(stderr, "%d scenarios from %s (%s backend): %d of %d tools used, %d of %d expected calls fit their tool's schema\n",
		len(arts), source, backend, cov.Used, cov.Tools, cov.ValidCalls, cov.Calls)
	return 0
}
