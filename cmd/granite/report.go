package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/internal/oneline"
)

func runReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("report", "--results DIR [--out DIR] [--seed N] [--baseline INTERFACE]",
		"Writes report.md, a CSV per table, trials.csv and plots (SVG and PNG) for a results\n"+
			"folder of granite run or merge, finished or not: the report says how many trials it covers.", stderr)
	results := fset.String("results", "", "results folder (holds run.json and trials.jsonl)")
	out := fset.String("out", "", "report folder (default: <results>/report)")
	seed := fset.Uint64("seed", report.Seed, "bootstrap seed")
	baseline := fset.String("baseline", "", "interface the by_interface table tests the others against (default: L4 when played, else the first)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if *results == "" {
		return withUsage(fset, errors.New("need --results DIR"))
	}
	if *out == "" {
		*out = filepath.Join(*results, "report")
	}
	res, err := report.Load(*results)
	if err != nil {
		return err
	}
	r := report.BuildWith(res, report.Options{Seed: *seed, Baseline: *baseline})
	files, err := r.Write(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report on %d of %d planned trials: %s (%d files)\n", r.Covered, r.Planned, filepath.Join(*out, "report.md"), len(files))
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "note: %s\n", oneline.Escape(n))
	}
	return nil
}
