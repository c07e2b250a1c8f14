package speclang

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the stderr.txt files under testdata/errors/")

// domainKey finds the domain a broken spec names, so that its files can sit
// in the folder the loader expects for it, even when the YAML is broken.
var domainKey = regexp.MustCompile(`(?m)^domain:\s*([a-z][a-z0-9]*)\s*$`)

// TestErrorCases loads each testdata/errors/<case>/domain.yaml, with the
// case's scenarios.yaml when it has one, and compares the whole error list
// with the case's stderr.txt, positions relative to the case folder (as in
// sqlc's internal/endtoend). Run with -update to rewrite stderr.txt after an
// intended change of wording, and read the diff.
func TestErrorCases(t *testing.T) {
	cases, err := filepath.Glob("testdata/errors/*/domain.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no error cases: %v", err)
	}
	for _, c := range cases {
		dir := filepath.Dir(c)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			domain, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			name := "x"
			if m := domainKey.FindSubmatch(domain); m != nil {
				name = string(m[1])
			}
			files := map[string]string{name + "/domain.yaml": string(domain)}
			if table, err := os.ReadFile(filepath.Join(dir, "scenarios.yaml")); err == nil {
				files[name+"/scenarios.yaml"] = string(table)
			}
			_, err = LoadAll(specFS(t, files))
			if err == nil {
				t.Fatal("loaded without error; a case under testdata/errors must fail")
			}
			got := err.Error() + "\n"
			var list ErrorList
			if errors.As(err, &list) {
				got = caseRelative(name, list).Error() + "\n"
			}
			stderr := filepath.Join(dir, "stderr.txt")
			if *update {
				if err := os.WriteFile(stderr, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(stderr)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/speclang -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("errors differ from %s (-want +got):\n%s", stderr, diff)
			}
		})
	}
}

// caseRelative drops the domain folder from each position, so stderr.txt
// names the files of the case folder itself.
func caseRelative(domain string, l ErrorList) ErrorList {
	out := make(ErrorList, len(l))
	for i, e := range l {
		c := *e
		c.Pos.File = strings.TrimPrefix(c.Pos.File, domain+"/")
		out[i] = &c
	}
	return out
}
