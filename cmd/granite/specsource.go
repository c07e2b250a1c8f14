package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// specFiles matches the files specs.FS embeds (see specs/embed.go), so
// that a checkout's specs/ folder can be compared with the binary's copy.
var specFiles = []string{"*.schema.json", "*/domain.yaml", "*/scenarios.yaml", "experiments/*.yaml"}

// loadSpecs loads the specs of --specs dir, or the embedded ones when dir
// is empty, printing every error (and warning) with dir before each file
// name; the errors come back as one ErrorList, for exit to print. where
// names the source in summaries.
func loadSpecs(dir string, stderr io.Writer) (spec *speclang.Spec, where string, err error) {
	var src fs.FS = specs.FS
	where = "embedded specs"
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, "", usagef("--specs %s: not a folder", dir)
		}
		src, where = os.DirFS(dir), dir
	}
	spec, err = speclang.LoadAll(src)
	var list speclang.ErrorList
	if err != nil && !errors.As(err, &list) {
		return nil, "", err
	}
	var warns speclang.ErrorList
	if spec != nil {
		warns = spec.Warnings
	}
	if dir != "" {
		list, warns = speclang.WithDir(dir, list), speclang.WithDir(dir, warns)
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if len(list) > 0 {
		return nil, "", list
	}
	return spec, where, nil
}

// count says "1 error" or "3 errors".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkoutDrift says, in one line, when the working directory is a
// checkout whose specs/ folder differs from the specs built into this
// binary, so that a user who just edited a spec knows that the binary
// still checks the old one, and names exactly what to run; "" when there
// is no such folder or no difference that matters. validate reads what
// --specs names, so only a run without it drifts. verify reads scenarios
// from --specs but executes the generated code it was built with, so a
// changed domain.yaml needs go generate and a rebuild whatever --specs
// says, and changed scenarios only a run without --specs.
func checkoutDrift(cmd, specsDir string) string {
	st, err := os.Stat("specs")
	if err != nil || !st.IsDir() {
		return ""
	}
	diff := specsDiff(os.DirFS("specs"), specs.FS)
	var fix string
	switch {
	case len(diff) == 0:
		return ""
	case cmd == "verify" && slices.ContainsFunc(diff, func(d string) bool { return strings.Contains(d, "/domain.yaml ") }):
		fix = "verify executes the generated code built into this binary, so run go generate ./... and make build"
	case specsDir != "":
		return "" // the folder given is what is checked
	default:
		fix = "run make build to rebuild bin/granite, or pass --specs specs"
	}
	shown := diff
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("%d more", len(diff)-3))
	}
	return fmt.Sprintf("granite %s: ./specs differs from the specs built into this binary (%s); %s", cmd, strings.Join(shown, ", "), fix)
}

// specsDiff lists the embedded spec files that differ between two specs
// folders, each like "x/domain.yaml changed", "new" (only in dir) or
// "removed" (only in the binary), sorted by file.
func specsDiff(dir, embedded fs.FS) []string {
	files := func(fsys fs.FS) map[string][]byte {
		out := map[string][]byte{}
		for _, pat := range specFiles {
			names, _ := fs.Glob(fsys, pat)
			for _, n := range names {
				if data, err := fs.ReadFile(fsys, n); err == nil {
					out[n] = data
				}
			}
		}
		return out
	}
	here, built := files(dir), files(embedded)
	var out []string
	for n, data := range here {
		old, ok := built[n]
		switch {
		case !ok:
			out = append(out, n+" new")
		case !bytes.Equal(old, data):
			out = append(out, n+" changed")
		}
	}
	for n := range built {
		if _, ok := here[n]; !ok {
			out = append(out, n+" removed")
		}
	}
	sort.Strings(out)
	return out
}
