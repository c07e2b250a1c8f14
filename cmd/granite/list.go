package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/generator/runtime"
)

// domainSummary is one row of `granite list --json`.
type domainSummary struct {
	Name       string                     `json:"name"`
	Title      string                     `json:"title"`
	Entities   []string                   `json:"entities"`
	Operations int                        `json:"operations"`
	Tools      map[runtime.Level]int      `json:"tools"`
	ToolNames  map[runtime.Level][]string `json:"tool_names"`
}

func runList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("list", "[--json]", "Lists every generated domain with its tool count per level (L4..L1).", stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	var rows []domainSummary
	for _, d := range gen.Domains {
		r := domainSummary{Name: d.Name, Title: d.Title, Entities: d.Entities, Operations: len(d.Operations),
			Tools: map[runtime.Level]int{}, ToolNames: map[runtime.Level][]string{}}
		for _, l := range runtime.Levels {
			r.Tools[l] = len(d.Tools[l])
			for _, t := range d.Tools[l] {
				r.ToolNames[l] = append(r.ToolNames[l], t.Name)
			}
		}
		rows = append(rows, r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tL4\tL3\tL2\tL1\tENTITIES\tTITLE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Name, r.Tools[runtime.L4], r.Tools[runtime.L3], r.Tools[runtime.L2], r.Tools[runtime.L1], len(r.Entities), r.Title)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	fmt.Fprintf(stdout, "%d domains\n", len(rows))
	return 0
}
