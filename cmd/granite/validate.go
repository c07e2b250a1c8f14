package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/specs"
)

func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("validate", "[--specs DIR]",
		"Validates every <domain>/domain.yaml against the spec schema and the checks a schema\n"+
			"cannot make, and prints every error as file:line:col: path: what was found and expected.\n"+
			"Without --specs it validates the specs built into this binary.", stderr)
	dir := fset.String("specs", "", "folder holding domain.schema.json and <domain>/domain.yaml (default: the embedded specs)")
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
	spec, err := generator.Load(src)
	if err != nil {
		var list generator.ErrorList
		if errors.As(err, &list) && *dir != "" {
			err = generator.WithDir(*dir, list)
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
	ops := 0
	for _, d := range spec.Domains {
		ops += len(d.Operations)
	}
	fmt.Fprintf(stdout, "%s: %d domains, %d operations, all valid\n", where, len(spec.Domains), ops)
	return 0
}
