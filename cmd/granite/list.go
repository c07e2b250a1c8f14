package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/generator/runtime"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/specs"
)

// domainSummary is one row of `granite list --json`.
type domainSummary struct {
	Name       string                     `json:"name"`
	Title      string                     `json:"title"`
	Entities   []string                   `json:"entities"`
	Operations int                        `json:"operations"`
	Tools      map[runtime.Level]int      `json:"tools"`
	ToolNames  map[runtime.Level][]string `json:"tool_names"`
	// Scenarios counts scenarios per difficulty tier; MeanCalls is the
	// mean number of gold calls per level.
	Scenarios map[string]int            `json:"scenarios"`
	MeanCalls map[runtime.Level]float64 `json:"mean_gold_calls"`
	// Dropped lists, per level and tool, the schema keywords Ollama's tool
	// types drop before a model sees them (their constraints must be said
	// in the descriptions too).
	Dropped map[runtime.Level]map[string][]string `json:"dropped_by_ollama"`
}

func runList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("list", "[--json]", "Lists every generated domain with its tool count per level (L4..L1),\nits scenarios per difficulty tier and the mean gold calls per level.", stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	spec, err := generator.LoadAll(specs.FS)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var rows []domainSummary
	for _, d := range gen.Domains {
		r := domainSummary{Name: d.Name, Title: d.Title, Entities: d.Entities, Operations: len(d.Operations),
			Tools: map[runtime.Level]int{}, ToolNames: map[runtime.Level][]string{},
			Scenarios: map[string]int{}, MeanCalls: map[runtime.Level]float64{}, Dropped: map[runtime.Level]map[string][]string{}}
		for _, l := range runtime.Levels {
			r.Tools[l] = len(d.Tools[l])
			r.Dropped[l] = harness.ToolLoss(d.Tools[l])
			for _, t := range d.Tools[l] {
				r.ToolNames[l] = append(r.ToolNames[l], t.Name)
			}
		}
		if sd := spec.Domain(d.Name); sd != nil {
			for _, s := range sd.Scenarios {
				r.Scenarios[s.Difficulty]++
				for _, l := range runtime.Levels {
					r.MeanCalls[l] += float64(len(s.Gold[l])) / float64(len(sd.Scenarios))
				}
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
	fmt.Fprintln(tw, "DOMAIN\tTOOLS L4/L3/L2/L1\tEASY\tMEDIUM\tHARD\tGOLD CALLS L4/L3/L2/L1\tOLLAMA DROPS L4/L3/L2/L1\tTITLE")
	total := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d / %d / %d / %d\t%d\t%d\t%d\t%.1f / %.1f / %.1f / %.1f\t%d / %d / %d / %d\t%s\n", r.Name,
			r.Tools[runtime.L4], r.Tools[runtime.L3], r.Tools[runtime.L2], r.Tools[runtime.L1],
			r.Scenarios[generator.Easy], r.Scenarios[generator.Medium], r.Scenarios[generator.Hard],
			r.MeanCalls[runtime.L4], r.MeanCalls[runtime.L3], r.MeanCalls[runtime.L2], r.MeanCalls[runtime.L1],
			dropped(r.Dropped[runtime.L4]), dropped(r.Dropped[runtime.L3]), dropped(r.Dropped[runtime.L2]), dropped(r.Dropped[runtime.L1]), r.Title)
		for k, n := range r.Scenarios {
			total[k] += n
		}
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	fmt.Fprintf(stdout, "%d domains, %d scenarios (%d easy, %d medium, %d hard)\n", len(rows),
		total[generator.Easy]+total[generator.Medium]+total[generator.Hard], total[generator.Easy], total[generator.Medium], total[generator.Hard])
	fmt.Fprintln(stdout, "OLLAMA DROPS counts schema keywords (minimum, maximum, pattern, format, ...) that Ollama's tool types")
	fmt.Fprintln(stdout, "drop before a model sees a tool; their constraints are also stated in the descriptions. --json lists them.")
	return 0
}

// dropped counts the keywords a level's tools lose.
func dropped(byTool map[string][]string) int {
	n := 0
	for _, l := range byTool {
		n += len(l)
	}
	return n
}
