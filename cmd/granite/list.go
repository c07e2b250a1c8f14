package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/summary"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios/regroup"
	"github.com/mcpgranite/granite/specs"
)

// runList is granite list: the generated domains (summary.DomainSummary)
// or, with --interfaces, the interfaces of each domain or a server.
func runList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", "[--interfaces [--mcp-cmd CMD | --mcp-url URL | --tools FILE [--groups F]]] [--domain D] [--json]", "Lists every generated domain with its tool count per level (L4..L1),\nits scenarios per difficulty tier and the mean gold calls per level;\nwith --interfaces, each domain's standard interfaces (every level as\nwritten and each transform preset over it) with what their tools cost a\nmodel to read: schema tokens (cl100k_base), arguments, actions, nesting\ndepth, the share of constraints only the schema states, and the schema\nkeywords the default backend drops; with a server (--mcp-cmd, --mcp-url,\n--tools), its regrouped levels' interfaces instead.", stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	ifaces := fs.Bool("interfaces", false, "list each domain's standard interfaces and their metrics")
	only := fs.String("domain", "", "list only this domain")
	src := addExternalSource(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	if src.live() || *src.tools != "" {
		if !*ifaces || *only != "" {
			return usagef("a server (--mcp-cmd, --mcp-url, --tools) goes with --interfaces and without --domain")
		}
		return listServerInterfaces(ctx, src, *asJSON, stdout, stderr)
	}
	domains := gen.Domains
	if *only != "" {
		d, ok := gen.Lookup(*only)
		if !ok {
			return usagef("unknown domain %q: want one of %s", *only, domainNames())
		}
		domains = []*mcpdomain.Domain{d}
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return err
	}
	if *ifaces {
		return listInterfaces(spec, domains, *asJSON, stdout, stderr)
	}
	var rows []summary.DomainSummary
	for _, d := range domains {
		rows = append(rows, summary.SummariseDomain(d, spec.Domain(d.Name)))
	}
	converters := agent.Converters()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	header := "DOMAIN\tTOOLS L4/L3/L2/L1\tEASY\tMEDIUM\tHARD\tGOLD CALLS L4/L3/L2/L1\t"
	for _, b := range converters {
		header += strings.ToUpper(b.Name()) + " DROPS L4/L3/L2/L1\t"
	}
	fmt.Fprintln(tw, header+"TITLE")
	total := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d / %d / %d / %d\t%d\t%d\t%d\t%.1f / %.1f / %.1f / %.1f\t", r.Name,
			r.Tools[level.L4], r.Tools[level.L3], r.Tools[level.L2], r.Tools[level.L1],
			r.Scenarios[speclang.Easy], r.Scenarios[speclang.Medium], r.Scenarios[speclang.Hard],
			r.MeanCalls[level.L4], r.MeanCalls[level.L3], r.MeanCalls[level.L2], r.MeanCalls[level.L1])
		for _, b := range converters {
			fmt.Fprintf(tw, "%s\t", drops(r.DroppedByBackend[b.Name()]))
		}
		fmt.Fprintln(tw, r.Title)
		for k, n := range r.Scenarios {
			total[k] += n
		}
	}
	if err := tw.Flush(); err != nil {
		return exitStatus(1)
	}
	fmt.Fprintf(stdout, "%s, %d scenarios (%d easy, %d medium, %d hard)\n", count(len(rows), "domain"),
		total[speclang.Easy]+total[speclang.Medium]+total[speclang.Hard], total[speclang.Easy], total[speclang.Medium], total[speclang.Hard])
	fmt.Fprintln(stdout, "DROPS count schema keywords (minimum, maximum, pattern, format, ...) that a backend's tool types drop before")
	fmt.Fprintln(stdout, "a model sees a tool: Ollama's keep only a few keywords, OpenAI-compatible endpoints get the whole schema.")
	fmt.Fprintln(stdout, "The constraints are also stated in the descriptions. --json lists them per backend, level and tool.")
	notes := agent.ContextNotes()
	for _, b := range agent.Backends() {
		if n, ok := notes[b.Name()]; ok {
			fmt.Fprintf(stdout, "Context, %s: %s.\n", b.Label(), n)
		}
	}
	return nil
}

// drops is one backend's dropped keywords per level, "L4 / L3 / L2 / L1".
func drops(byLevel map[level.Level]map[string][]string) string {
	return fmt.Sprintf("%d / %d / %d / %d", dropped(byLevel[level.L4]), dropped(byLevel[level.L3]), dropped(byLevel[level.L2]), dropped(byLevel[level.L1]))
}

// dropped counts the keywords a level's tools lose.
func dropped(byTool map[string][]string) int {
	n := 0
	for _, l := range byTool {
		n += len(l)
	}
	return n
}

// listInterfaces prints the standard catalogue of each domain and its
// atomic interfaces (summary.SummariseDomainInterfaces), measured, with
// their gold calls, as a table or as JSON.
func listInterfaces(spec *speclang.Spec, domains []*mcpdomain.Domain, asJSON bool, stdout, stderr io.Writer) error {
	rows := []summary.InterfaceSummary{}
	for _, d := range domains {
		sd := spec.Domain(d.Name)
		if sd == nil {
			return fmt.Errorf("domain %s: generated, but the specs have no such domain: run go generate ./...", d.Name)
		}
		r, err := summary.SummariseDomainInterfaces(sd, d)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	return printInterfaces(rows, count(len(domains), "domain"), asJSON, stdout, stderr)
}

// listServerInterfaces lists the catalogue of a server's regrouped
// levels.
func listServerInterfaces(ctx context.Context, src *externalSource, asJSON bool, stdout, stderr io.Writer) error {
	tools, name, g, _, err := src.forInterfaces(ctx, "list", stderr)
	if err != nil {
		return err
	}
	rg, err := regroup.Build(tools, g)
	if err != nil {
		return err
	}
	cat, err := rg.Catalogue(name)
	if err != nil {
		return err
	}
	return printInterfaces(summary.SummariseInterfaces(name, cat), "server "+name, asJSON, stdout, stderr)
}

// printInterfaces prints the rows of interfaces of what, as a table or
// JSON.
func printInterfaces(rows []summary.InterfaceSummary, what string, asJSON bool, stdout, stderr io.Writer) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tINTERFACE\tLEVEL\tTRANSFORMS\tTOOLS\tSCHEMA TOKENS\tARGS MAX\tACTIONS MAX\tDEPTH\tSCHEMA-ONLY SHARE\tDROPPED KEYWORDS\tGOLD CALLS")
	var noGold []string
	for _, r := range rows {
		transforms := strings.Join(r.Transforms, ",")
		if transforms == "" {
			transforms = "-"
		}
		m := r.Metrics
		gold := "-"
		if r.GoldCalls != nil {
			gold = fmt.Sprintf("%.1f", *r.GoldCalls)
		}
		if r.NoGold != "" {
			noGold = append(noGold, fmt.Sprintf("%s %s has no gold: %s", r.Domain, r.Interface, r.NoGold))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.2f\t%d\t%s\n", r.Domain, r.Interface, r.Level, transforms,
			m.Tools, m.SchemaTokens, m.ArgsMax, m.ActionsMax, m.Depth, m.SchemaOnly, m.Dropped, gold)
	}
	if err := tw.Flush(); err != nil {
		return exitStatus(1)
	}
	for _, n := range noGold {
		fmt.Fprintln(stdout, n)
	}
	fmt.Fprintf(stdout, "%s of %s. SCHEMA TOKENS counts the tool list as a model is sent it (cl100k_base);\n", count(len(rows), "interface"), what)
	fmt.Fprintf(stdout, "DROPPED KEYWORDS the schema keywords %s's tool types drop; GOLD CALLS the gold's calls per scenario\n", agent.Default().Label())
	fmt.Fprintln(stdout, "as the interface's composition makes them (atomic: composite calls expanded). --json gives every metric.")
	return nil
}
