package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
)

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("verify", "[--specs DIR] [--domain D] [--json] [--mutants [--corpus DIR]]",
		"Executes every scenario's gold tool calls at every level through MCP tools/call on a\n"+
			"fresh store and checks that no call fails, the expectations hold, the four levels end\n"+
			"in identical stores, every alternative argument is equally right, and every tool and\n"+
			"action is used. Exits 1 on any failure, naming the scenario, level and step.\n"+
			"With --mutants it also proves the answer verdict by mutation (the score per operator).\n"+
			"Without --specs it verifies the specs built into this binary; with it, the specs of\n"+
			"DIR against this binary's generated code (it says when that code is stale).", stderr)
	dir := addSpecsFlag(fset)
	domain := fset.String("domain", "", "verify only this domain (default: all)")
	asJSON := fset.Bool("json", false, "print the report as JSON")
	mutants := fset.Bool("mutants", false, "also prove the answer verdict by mutation: derive wrong answers and right rewrites from the oracle's solution of every scenario at every level (and from --corpus recordings) and check each scores as it must")
	corpus := fset.String("corpus", "", "with --mutants: a folder of recordings, <domain>/<scenario>.<level>.record.json each with its .answer.txt, to derive variants from too")
	if err := parse(fset, args); err != nil {
		return err
	}
	if *corpus != "" && !*mutants {
		return usagef("--corpus needs --mutants")
	}
	// The generated code is always the binary's, so a checkout's specs/
	// newer than the binary matters here even with --specs.
	if msg := checkoutDrift("verify", *dir); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	spec, _, err := loadSpecs(*dir, stderr)
	if err != nil {
		return err
	}
	var only []string
	if *domain != "" {
		only = append(only, *domain)
	}
	rep, err := gold.Verify(ctx, spec, gen.Lookup, only...)
	if err != nil {
		return badUsage(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, f := range rep.Failures {
			fmt.Fprintln(stderr, f)
		}
		printCoverage(stdout, rep.Coverage)
		fmt.Fprintln(stdout, rep.Summary())
	}
	if !rep.OK() {
		return exitStatus(1) // the failures are printed
	}
	if *mutants {
		return verifyMutants(ctx, spec, only, *corpus, stdout, stderr)
	}
	return nil
}

// verifyMutants runs the mutation test of the answer verdict (see
// gold.Mutation and harness.MutateRecording) and prints the score per
// operator; it exits 1 when any variant scores otherwise than it must.
func verifyMutants(ctx context.Context, spec *speclang.Spec, only []string, corpus string, stdout, stderr io.Writer) error {
	ms, err := gold.Mutation(ctx, spec, gen.Lookup, only...)
	if err != nil {
		return badUsage(err)
	}
	if corpus != "" {
		entries, err := recorded.ReadCorpus(corpus)
		if err != nil {
			return usagef("--corpus: %w", err)
		}
		for _, e := range entries {
			if e.Wrong != "" || len(only) > 0 && !slices.Contains(only, e.Recording.Domain) {
				continue // a wrong solution is no base for variants
			}
			verdicts, err := harness.MutateRecording(ctx, spec, gen.Lookup, e.Recording, e.Answer)
			if err != nil {
				return usagef("%s: %w", e.Name, err)
			}
			ms.Add(e.Name, verdicts)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATOR\tMUST SCORE\tVARIANTS\tAS REQUIRED")
	failed := 0
	for _, o := range ms.Operators() {
		must := "TC 0"
		if o.Right {
			must = "TC 1"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", o.Operator, must, o.Made, o.AsRequired)
		for _, f := range o.Failures {
			fmt.Fprintln(stderr, f)
			failed++
		}
	}
	tw.Flush()
	if failed > 0 {
		fmt.Fprintf(stdout, "mutation: %d variants score otherwise than they must\n", failed)
		return exitStatus(1) // the failures are printed
	}
	fmt.Fprintln(stdout, "mutation: every wrong variant scores TC 0 and every right rewrite TC 1")
	return nil
}

// printCoverage prints one row per domain: tools (and actions) used per
// level.
func printCoverage(w io.Writer, cov []gold.Coverage) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tL4\tL3\tL2\tL1")
	byDomain := map[string]map[level.Level]gold.Coverage{}
	var order []string
	for _, c := range cov {
		if byDomain[c.Domain] == nil {
			byDomain[c.Domain] = map[level.Level]gold.Coverage{}
			order = append(order, c.Domain)
		}
		byDomain[c.Domain][c.Level] = c
	}
	for _, d := range order {
		cells := []string{d}
		for _, l := range level.Levels {
			c := byDomain[d][l]
			cell := fmt.Sprintf("%d/%d tools", c.ToolsUsed, c.Tools)
			if c.Actions > 0 {
				cell += fmt.Sprintf(", %d/%d actions", c.ActionsUsed, c.Actions)
			}
			cells = append(cells, cell)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}
