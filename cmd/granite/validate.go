package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("validate", "[--specs DIR]",
		"Validates every <domain>/domain.yaml and <domain>/scenarios.yaml against their schemas\n"+
			"and the checks a schema cannot make (gold calls against the tools' input schemas,\n"+
			"expectations against the entities), and prints every error as\n"+
			"file:line:col: path: what was found and expected.\n"+
			"Without --specs it validates the specs built into this binary.", stderr)
	dir := fset.String("specs", "", "folder holding the schemas and <domain>/{domain,scenarios}.yaml (default: the embedded specs)")
	if code, ok := parse(fset, args); !ok {
		return code
	}
	var src fs.FS = specs.FS
	where := "embedded specs"
	if *dir != "" {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "granite validate: --specs %s: not a folder\n", *dir)
			return 2
		}
		src, where = os.DirFS(*dir), *dir
	}
	spec, err := speclang.LoadAll(src)
	if err != nil {
		var list speclang.ErrorList
		if errors.As(err, &list) && *dir != "" {
			err = speclang.WithDir(*dir, list)
		}
		fmt.Fprintln(stderr, err)
		if errors.As(err, &list) {
			fmt.Fprintf(stderr, "%d errors\n", len(list))
		}
		return 1
	}
	for _, w := range spec.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	ops, scenarios := 0, 0
	for _, d := range spec.Domains {
		ops += len(d.Operations)
		scenarios += len(d.Scenarios)
	}
	fmt.Fprintf(stdout, "%s: %d domains, %d operations, %d scenarios, all valid\n", where, len(spec.Domains), ops, scenarios)
	return 0
}
