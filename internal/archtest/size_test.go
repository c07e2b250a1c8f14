package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines bounds a hand-written Go file: past it, a file holds more
// than one thing a reader looks for, and it is split along its seams
// (harness/advise/race.go became race, engine, kn, sign and recommend).
// Generated code (gen/, internal/testdomain/) and tests are not held to it.
const maxFileLines = 900

// TestNoFileOver900Lines: no hand-written Go file of the module is longer
// than maxFileLines.
func TestNoFileOver900Lines(t *testing.T) {
	var checked int
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			switch rel {
			case "gen", "internal/testdomain", "testdata", "node_modules", "dist", "bin", "results":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if n := bytes.Count(data, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines; split it along its seams into files of at most %d, each named for what a reader finds in it", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go file found under the module's root")
	}
}

// maxRunnerLines bounds the root harness package, the runner every verb
// goes through: what grows there is usually a concern of its own
// (recordings went to harness/recorded, live metrics to harness/live, the energy share to the meter).
const maxRunnerLines = 2500

// TestRunnerPackageUnder2500Lines: the root harness package's hand-written
// Go is at most maxRunnerLines lines.
func TestRunnerPackageUnder2500Lines(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "harness", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(data, []byte("\n"))
	}
	if total == 0 || total > maxRunnerLines {
		t.Errorf("the root harness package has %d lines of Go; want 1 to %d: move a concern of its own into a package", total, maxRunnerLines)
	}
}
