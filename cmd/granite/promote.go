package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/specs"
)

// runPromote is granite synth promote: executed-grounded artifacts of a
// generated domain as scenarios granite verify checks.
func runPromote(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("synth promote", "FILE.jsonl --domain D [--first N] [--out FILE]",
		"Turns executed-grounded artifacts of a generated domain into scenarios in the\n"+
			"specs/<domain>/scenarios.yaml form (gold at L4, expectations read off the store the\n"+
			"calls leave), which granite verify can check. Says why each other artifact is left out.", stderr)
	domain := fset.String("domain", "", "the generated domain the artifacts ran on")
	first := fset.Int("first", 101, "number of the first promoted scenario id")
	out := fset.String("out", "", "output file (default: standard output)")
	file, args := leadingFile(args)
	if err := parse(fset, args); err != nil {
		return err
	}
	if file == "" || *domain == "" {
		return usagef("give the artifacts file and --domain")
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return err
	}
	d := spec.Domain(*domain)
	dom, ok := gen.Lookup(*domain)
	if d == nil || !ok {
		return usagef("unknown domain %q: want one of %s", *domain, domainNames())
	}
	arts, err := scenarios.ReadArtifacts(file)
	if err != nil {
		return err
	}
	promoted, skipped := scenarios.Promote(d, dom, arts, *first)
	for _, s := range skipped {
		fmt.Fprintf(stderr, "left out %s\n", oneline.Escape(s))
	}
	y, err := scenarios.PromotedYAML(d.Name, promoted)
	if err != nil {
		return err
	}
	if *out != "" {
		err = os.WriteFile(*out, y, 0o644)
	} else {
		_, err = stdout.Write(y)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "promoted %d of %d artifacts; add them to specs/%s/scenarios.yaml and run granite verify --domain %s\n", len(promoted), len(arts), d.Name, d.Name)
	return nil
}
