package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/oneline"
)

// runImport is granite import: granite import scenarios or runs.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "scenarios":
			return inSubcommand("import scenarios", runImportScenarios(args[1:], stdout, stderr))
		case "runs":
			return inSubcommand("import runs", runImportRuns(ctx, args[1:], stdout, stderr))
		}
	}
	fset := newFlags("import", "scenarios DIR --out FILE.jsonl | runs DIR --scenarios SCENDIR --out OUTDIR",
		"Imports what the paper's reference implementation wrote (see docs/import.md):\n"+
			"  scenarios  its scenario files, each level's gold one artifact\n"+
			"  runs       a run folder (results.jsonl, traces/) as a results folder that granite\n"+
			"             report and granite view read, every condition re-scored\n"+
			"Run 'granite import scenarios -h' or 'granite import runs -h' for their flags.", stderr)
	if err := fset.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return &usageError{}
	}
	if fset.NArg() == 0 {
		return withUsage(fset, errors.New("need a subcommand: scenarios or runs"))
	}
	return withUsage(fset, fmt.Errorf("unknown subcommand %q: want scenarios or runs", fset.Arg(0)))
}

// folderArg takes the one folder a subcommand is given, before its flags
// or after them.
func folderArg(fset *flag.FlagSet, args []string, what string) (string, error) {
	dir, rest := leadingFile(args)
	if err := fset.Parse(rest); err != nil {
		if err == flag.ErrHelp {
			return "", err
		}
		return "", &usageError{}
	}
	switch {
	case dir == "" && fset.NArg() == 1:
		dir = fset.Arg(0)
	case fset.NArg() > 0:
		return "", withUsage(fset, fmt.Errorf("unexpected argument %q", fset.Arg(fset.NArg()-1)))
	case dir == "":
		return "", withUsage(fset, fmt.Errorf("need %s", what))
	}
	return dir, nil
}

// runImportScenarios is granite import scenarios.
func runImportScenarios(args []string, stdout, stderr io.Writer) error {
	fset := newFlags("import scenarios", "DIR --out FILE.jsonl [--force]",
		"Reads the reference implementation's scenario files (DIR/<domain>/<name>.yaml, or a folder\n"+
			"of .yaml files) and writes each scenario's gold at each level it has as one artifact\n"+
			"(<id>@<level>), for granite run --artifacts on a live server of that level. Every problem\n"+
			"of every file is reported at once, with its position, and then nothing is written.", stderr)
	out := fset.String("out", "", "artifacts file to write (one JSON object a line)")
	force := fset.Bool("force", false, "replace --out when it exists")
	dir, err := folderArg(fset, args, "the reference's scenarios folder (DIR)")
	if err != nil {
		return err
	}
	if *out == "" {
		return withUsage(fset, errors.New("need --out FILE.jsonl"))
	}
	scens, err := reference.ReadScenarios(dir)
	if err != nil {
		return err
	}
	arts, skipped := reference.Artifacts(scens)
	for _, s := range skipped {
		fmt.Fprintf(stderr, "granite import scenarios: warning: left out %s\n", oneline.Escape(s))
	}
	if len(arts) == 0 {
		return fmt.Errorf("%s: no scenario has a level with a required gold call; nothing to write", dir)
	}
	if err := reference.WriteArtifactsFile(*out, arts, *force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %d scenarios as %d artifacts (one per scenario and level) into %s\n", len(scens), len(arts), *out)
	return nil
}

// runImportRuns is granite import runs.
func runImportRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("import runs", "DIR --scenarios SCENDIR --out OUTDIR",
		"Turns the reference implementation's run folder (DIR/results.jsonl, DIR/traces/) into a\n"+
			"granite results folder (trials.jsonl, run.json) that granite report and granite view read.\n"+
			"Each condition is re-scored from its trace against its scenario in SCENDIR: by the\n"+
			"reference's metrics (metrics.paper, which must reproduce what results.jsonl recorded; the\n"+
			"import says which do not) and granite's call metrics. A condition without a trace keeps\n"+
			"its recorded metrics. Every problem is reported at once, and then nothing is written;\n"+
			"OUTDIR must be new or empty.", stderr)
	scenDir := fset.String("scenarios", "", "the reference's scenarios folder the run was made from")
	out := fset.String("out", "", "results folder to write (new, or empty)")
	dir, err := folderArg(fset, args, "the reference's run folder (DIR)")
	if err != nil {
		return err
	}
	switch {
	case *scenDir == "":
		return withUsage(fset, errors.New("need --scenarios SCENDIR: the scenarios the run was made from"))
	case *out == "":
		return withUsage(fset, errors.New("need --out OUTDIR"))
	}
	scens, err := reference.ReadScenarios(*scenDir)
	if err != nil {
		return err
	}
	build := harness.BuildInfo()
	sum, err := reference.ImportRun(ctx, dir, scens, *out, reference.Options{Build: &build})
	if err != nil {
		return err
	}
	printImport(stdout, sum)
	return nil
}

// printImport says what an import wrote and how much of the reference's
// scoring it reproduced.
func printImport(w io.Writer, sum *reference.Summary) {
	fmt.Fprintf(w, "imported %d conditions into %s: %d re-scored from their traces, %d from %s alone\n",
		sum.Conditions, filepath.Join(sum.Out, results.TrialsFile), sum.Traced, len(sum.Untraced), reference.ResultsFile)
	const shown = 10
	for i, id := range sum.Untraced {
		if i == shown {
			fmt.Fprintf(w, "  ... and %d more without a trace\n", len(sum.Untraced)-shown)
			break
		}
		fmt.Fprintf(w, "  no trace: %s (its metrics are the recorded ones)\n", oneline.Escape(id))
	}
	compared := sum.Traced - sum.Unrecorded
	fmt.Fprintf(w, "reproduced the recorded metrics of %d of %d traced conditions exactly (every metric within %g)\n", sum.Reproduced, compared, reference.Tolerance)
	if sum.Unrecorded > 0 {
		fmt.Fprintf(w, "  %d traced conditions recorded no metrics to compare\n", sum.Unrecorded)
	}
	for _, m := range sum.Mismatches {
		fmt.Fprintf(w, "  does not reproduce: %s\n", oneline.Escape(m.String()))
	}
	fmt.Fprintf(w, "granite report --results %s writes its report; granite view --results %s shows its trials\n", sum.Out, sum.Out)
}
