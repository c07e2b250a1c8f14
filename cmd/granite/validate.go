package main

import (
	"context"
	"fmt"
	"io"
)

func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("validate", "[--specs DIR]",
		"Validates every <domain>/domain.yaml and <domain>/scenarios.yaml against their schemas\n"+
			"and the checks a schema cannot make (gold calls against the tools' input schemas,\n"+
			"expectations against the entities), and prints every error as\n"+
			"file:line:col: path: what was found and expected.\n"+
			"Without --specs it validates the specs built into this binary.", stderr)
	dir := addSpecsFlag(fset)
	if err := parse(fset, args); err != nil {
		return err
	}
	if msg := checkoutDrift("validate", *dir); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	spec, where, err := loadSpecs(*dir, stderr)
	if err != nil {
		return err
	}
	ops, scenarios := 0, 0
	for _, d := range spec.Domains {
		ops += len(d.Operations)
		scenarios += len(d.Scenarios)
	}
	fmt.Fprintf(stdout, "%s: %s, %s, %s, all valid\n", where, count(len(spec.Domains), "domain"), count(ops, "operation"), count(scenarios, "scenario"))
	return nil
}
