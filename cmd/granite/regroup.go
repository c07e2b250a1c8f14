package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

func runRegroup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	host := addOllamaFlag(fset)
	if err := parse(fset, args); err != nil {
		return err
	}
	if *model != "" && !*suggest {
		return usagef("--model needs --suggest")
	}
	tools, name, c, err := src.load(ctx)
	if err != nil {
		return err
	}
	if c != nil {
		c.Close()
	}
	var g *regroup.Groups
	how := "derived by granite: L2 by readOnlyHint (else the verb of the name), L3 by task category"
	if *model != "" {
		llm, err := scenarios.DialLLM(ctx, ollama.ResolveHost(*host), *model, nil)
		if err != nil {
			return err
		}
		if g, err = regroup.Suggest(ctx, llm, name, tools); err != nil {
			return err
		}
		how = "proposed by " + *model + " under constrained decoding, checked by granite"
	} else if g, err = src.grouping(name, tools); err != nil {
		return err
	}
	iface, err := regroup.Build(tools, g)
	if err != nil {
		return err
	}
	if *suggest {
		out, err := g.YAML([]string{
			fmt.Sprintf("granite groups file for %s (%d tools); %s.", name, len(tools), how),
			"Edit freely: at each level every tool must be in exactly one group. Schema: specs/groups.schema.json.",
			"Use it: granite serve --mcp-cmd CMD --level L2 --groups THIS_FILE",
		})
		if err != nil {
			return err
		}
		_, _ = stdout.Write(out)
		return nil
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
	return nil
}

// serveRegrouped serves an external server at a level over stdio (one
// source connection for the process) or HTTP (a fresh source connection
// per session: for a command, a fresh process), with serve's safety
// defaults.
func serveRegrouped(ctx context.Context, src *externalSource, lv level.Level, transport string, at serve.Endpoint, ho serve.Options, stdout, stderr io.Writer, sched *faults.Schedule) error {
	tools, name, c, err := src.load(ctx)
	if err != nil {
		return err
	}
	// The probe that listed the tools ends: every connection to the
	// source starts fresh.
	c.Close()
	g, err := src.grouping(name, tools)
	var iface *regroup.Grouping
	if err == nil {
		iface, err = regroup.Build(tools, g)
	}
	var p *serve.Proxy
	if err == nil {
		p, err = iface.Proxy(name, lv)
	}
	if err != nil {
		return err
	}
	opts, _ := src.options() // load checked them
	p.Source = serve.Source{Cmd: *src.mcpCmd, URL: *src.mcpURL, Options: opts}
	if sched != nil {
		if sched.Scenario == "" {
			sched.Scenario = name
		}
		p.Faults, p.SourceTools = sched, tools
	}
	switch transport {
	case "stdio":
		in, restore := serve.Pollable(os.Stdin)
		defer restore()
		if err := p.ServeStdio(ctx, in, stdout, stderr); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	case "http":
		h, err := p.Handler(ho, stderr)
		if err != nil {
			return err
		}
		defer h.Close(context.Background())
		return serveHTTP(ctx, h, at, served(name+" (regrouped)", surface.Identity(lv)), stderr)
	default:
		return usagef("unknown --transport %q: want stdio or http", transport)
	}
}
