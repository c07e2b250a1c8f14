package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/oneline"
)

// runMerge is granite merge: the shards of one run into one results folder.
func runMerge(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("merge", "--out DIR SHARD_DIR...",
		"Combines the output folders of the shards of one run into one trials.jsonl, in grid order.\n"+
			"Refuses folders of different configs, a shard given twice, a shard that did not finish\n"+
			"(resume it first) and overlapping trials.", stderr)
	out := fset.String("out", "", "folder for the merged run (must not hold trials.jsonl)")
	if err := fset.Parse(args); err != nil {
		return &usageError{} // -h too: merge has always exited 2 for it
	}
	if *out == "" || fset.NArg() == 0 {
		return withUsage(fset, errors.New("need --out DIR and at least one shard folder"))
	}
	sum, err := results.Merge(*out, fset.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged shards %s: %d of %d trials into %s/%s\n", oneline.Escape(strings.Join(sum.Shards, ", ")), sum.Records, sum.Grid, *out, results.TrialsFile)
	if sum.Missing > 0 {
		fmt.Fprintf(stdout, "warning: %d trials of the grid are in no shard; run the missing shards and merge again\n", sum.Missing)
	}
	return nil
}
