package speclang

import (
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// The broken-spec cases are folders under testdata/errors, each with its
// expected stderr.txt: see TestErrorCases.

func TestFolderMustMatchDomain(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	_, err := Load(specFS(t, map[string]string{"small/domain.yaml": string(base)}))
	if err == nil || !strings.Contains(err.Error(), `found domain "tiny" in folder "small"`) {
		t.Fatalf("got %v", err)
	}
}

func TestLevelCountWarns(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	spec, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": string(base) + "  extra: {kind: get, entity: timer, description: Get a timer.}\n  more: {kind: list, entity: timer, description: List timers.}\n  most: {kind: delete, entity: lamp, description: Remove a lamp.}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0].Error(), "L4 has 11 tools besides its workflows; its definition has 8 to 10 (fine if deliberate)") {
		t.Fatalf("warnings: %v", spec.Warnings)
	}
}

// TestLoaderNeverPanics loads mutilated versions of a valid spec: whatever
// the input, the loader reports errors and does not panic.
func TestLoaderNeverPanics(t *testing.T) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	lines := strings.Split(string(base), "\n")
	for i := range lines {
		edits := []string{
			strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n"), // drop a line
			strings.Replace(string(base), lines[i], strings.ReplaceAll(lines[i], "2", "2.0"), 1),
			strings.Replace(string(base), lines[i], strings.ReplaceAll(lines[i], "lamp", "lump"), 1),
		}
		for _, e := range edits {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic on edit of line %d: %v\n%s", i+1, r, e)
					}
				}()
				_, _ = Load(specFS(t, map[string]string{"tiny/domain.yaml": e}))
			}()
		}
	}
}

// FuzzLoadDomain feeds arbitrary bytes as a domain spec: the loader must
// return a domain or errors, never panic.
//
//	go test ./generator -run '^$' -fuzz FuzzLoadDomain -fuzztime 30s
func FuzzLoadDomain(f *testing.F) {
	base, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	f.Add(string(base))
	f.Add("domain: x\n")
	f.Fuzz(func(t *testing.T, spec string) {
		_, _ = Load(specFS(t, map[string]string{"tiny/domain.yaml": spec}))
	})
}

// scalarValue finds "key: value" pairs with a scalar value, block or flow.
var scalarValue = regexp.MustCompile(`\b([a-z_]+: )([^,{}\[\]\n#]+)`)

// TestLoaderNeverPanicsOnWrongShapes puts a sequence, a mapping and a
// number where each scalar of the golden tiny domain and its scenarios
// stands: the loader checks a file that failed its schema too (to report
// every error at once), so no value of the wrong shape may crash it.
func TestLoaderNeverPanicsOnWrongShapes(t *testing.T) {
	domain, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	table, _ := os.ReadFile("../../generator/testdata/golden/tiny/scenarios.yaml")
	files := map[string]string{"tiny/domain.yaml": string(domain), "tiny/scenarios.yaml": string(table)}
	for name, base := range files {
		for _, m := range scalarValue.FindAllStringSubmatchIndex(base, -1) {
			for _, repl := range []string{"[1]", "{a: 1}", "7", "[]"} {
				edited := base[:m[4]] + repl + base[m[5]:]
				mutated := map[string]string{}
				for n, c := range files {
					mutated[n] = c
				}
				mutated[name] = edited
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("panic with %s at %s offset %d: %v\n%s", repl, name, m[4], r, debug.Stack())
						}
					}()
					_, _ = LoadAll(specFS(t, mutated))
				}()
			}
		}
	}
}

// TestYAMLSyntaxErrorsPointAtTheOpening: an unclosed bracket or quote is
// reported where it opens, not lines later where the parser gave up.
func TestYAMLSyntaxErrorsPointAtTheOpening(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a: [1, 2\nb: 3\n", `f.yaml:1:4: invalid YAML: found "[" that is never closed; expected "]" to close it before 2:1, where the parser stopped (',' or ']' must be specified)`},
		{"a: {x: 1\nb: 3\n", `f.yaml:1:4: invalid YAML: found "{" that is never closed; expected "}" to close it before 2:1, where the parser stopped (',' or '}' must be specified)`},
		{"a:\n  - [1, 2\n  - 3\n", `f.yaml:2:5: invalid YAML: found "[" that is never closed;`},
		{"a: {x: [1, 2}\n", `f.yaml:1:8: invalid YAML: found "[" that is never closed;`},
		{"a: {x: 1, y: [1, {z: 2]}\n", `f.yaml:1:18: invalid YAML: found "{" that is never closed;`},
		{"a: \"open\nb: 3\n", `f.yaml:1:4: invalid YAML: could not find end character of double-quoted text`},
		{"a: 'open\nb: 3\n", `f.yaml:1:4: invalid YAML: could not find end character of single-quoted text`},
		{"a: [1, 2\n", `f.yaml:1:4: invalid YAML: sequence end token ']' not found`},
	}
	for _, c := range cases {
		_, errs := parseYAML("f.yaml", []byte(c.src))
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, errs, c.want)
		}
	}
}
