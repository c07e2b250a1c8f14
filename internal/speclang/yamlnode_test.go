package speclang

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/schemacheck"
)

// billionLaughs is the classic alias bomb: nine levels of nine aliases,
// 9^9 values from a few hundred bytes.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		alias := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(alias+", ", 9), ", "))
	}
	return b.String()
}

// aliasChain nests each anchor's value in the one before: no file line is
// deep, but the expanded value is n+1 levels deep.
func aliasChain(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	return b.String()
}

// blockMaps nests n block mappings, one column deeper each.
func blockMaps(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", i))
	}
	return b.String()
}

// hostileYAML are the attacks of issue 27 with the error each must get:
// position, then what was found and what was expected.
var hostileYAML = []struct {
	name, src, want string
}{
	{"self reference", "a: &a [*a]\n",
		"1:8: $.a[0]: found alias *a inside the value of its own anchor &a (1:4); expected an alias to a value complete before it (a value that contains itself has no JSON form)"},
	{"self reference through another anchor", "a: &a {b: &b [1, *a]}\n",
		"1:18: $.a.b[1]: found alias *a inside the value of its own anchor &a (1:4); expected an alias to a value complete before it (a value that contains itself has no JSON form)"},
	{"self reference over an earlier anchor", "a: &a [1]\nb: &a [*a]\n",
		"2:8: $.b[0]: found alias *a inside the value of its own anchor &a (2:4); expected an alias to a value complete before it (a value that contains itself has no JSON form)"},
	{"billion laughs", billionLaughs(),
		"6:10: $.l5[0]: found alias *l4 that, with the aliases before it, expands to more than 100000 values; expected aliases that repeat small parts of the file (each alias is expanded in full, so nested ones multiply)"},
	{"deep flow nesting", "a: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
		"1:103: found a mapping or sequence nested 101 levels deep; expected at most 100 levels"},
	{"deep flow mappings", "a: " + strings.Repeat("{b: ", 10000) + "1" + strings.Repeat("}", 10000) + "\n",
		"1:400: found a mapping or sequence nested 101 levels deep; expected at most 100 levels"},
	{"deep compact sequences", strings.Repeat("- ", 10000) + "x\n",
		"1:201: found a mapping or sequence nested 101 levels deep; expected at most 100 levels"},
	{"deep block mappings", blockMaps(1000),
		"101:101: found a mapping or sequence nested 101 levels deep; expected at most 100 levels"},
	{"deep through aliases", aliasChain(150),
		"100:12: $.a99[0]: found alias *a98 that expands to a mapping or sequence nested 101 levels deep; expected at most 100 levels"},
	{"large file", "a: 1\n" + strings.Repeat("# padding\n", 200_000),
		"1:1: found more than 1 MiB of YAML; expected at most 1 MiB (granite reads each spec, config and groups file whole; real ones are under 30 KB)"},
}

// loadPaths are the ways a YAML file reaches the reader: a domain spec, a
// scenario table beside a valid domain, and a Document (experiment
// configs, groups files, artifacts).
func loadPaths(t *testing.T) []struct {
	file string
	load func(src string) error
} {
	t.Helper()
	domain, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	anything, err := schemacheck.Compile("granite:any.json", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		file string
		load func(src string) error
	}{
		{"tiny/domain.yaml", func(src string) error {
			_, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": src}))
			return err
		}},
		{"tiny/scenarios.yaml", func(src string) error {
			_, err := LoadAll(specFS(t, map[string]string{"tiny/domain.yaml": string(domain), "tiny/scenarios.yaml": src}))
			return err
		}},
		{"config.yaml", func(src string) error {
			_, errs := ParseDocument("config.yaml", []byte(src), anything)
			return errs.Err()
		}},
	}
}

// loadsWithin runs f, failing the test if it has not returned in 20 s: before
// the bounds, these loads ran for minutes or forever.
func loadsWithin(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still loading after 20 s", what)
		return nil
	}
}

// TestHostileYAMLIsRefused: every attack is refused on every load path,
// with one positioned error.
func TestHostileYAMLIsRefused(t *testing.T) {
	for _, lp := range loadPaths(t) {
		for _, c := range hostileYAML {
			t.Run(lp.file+"/"+c.name, func(t *testing.T) {
				err := loadsWithin(t, c.name, func() error { return lp.load(c.src) })
				list, ok := err.(ErrorList)
				if !ok || len(list) != 1 {
					t.Fatalf("got %v (%T); want one error %s:%s", err, err, lp.file, c.want)
				}
				if got, want := list[0].Error(), lp.file+":"+c.want; got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			})
		}
	}
}

// TestYAMLWithinBoundsLoads: what is just inside each bound, and aliases
// used as intended, still load.
func TestYAMLWithinBoundsLoads(t *testing.T) {
	cases := []struct{ name, src string }{
		{"100 levels", "a: " + strings.Repeat("[", 99) + strings.Repeat("]", 99) + "\n"},
		{"100 block levels", blockMaps(100)},
		{"100 levels through aliases", aliasChain(98)},
		{"an alias used twice", "base: &b {kind: get, n: 1}\none: *b\ntwo: *b\n"},
		{"sibling anchors", "a: &a [1]\nb: &b [*a, *a]\nc: [*b, *a]\n"},
		{"a redefined anchor", "a: &a [1]\nb: &a [2]\nc: *a\n"},
		{"an anchor redefined inside itself", "a: &a [&a [1], *a]\n"},
		{"a sequence at its key's column", "a:\n- 1\n- 2\nb:\n- {c: [1]}\n"},
		{"1 MiB", "a: 1\n" + strings.Repeat("#", MaxYAMLBytes-6) + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var root *node
			var errs ErrorList
			loadsWithin(t, c.name, func() error { root, errs = parseYAML("f.yaml", []byte(c.src)); return nil })
			if len(errs) > 0 || root == nil {
				t.Fatalf("got %v", errs)
			}
		})
	}
	// An alias names the latest anchor of its name before it in the file,
	// wherever it is expanded.
	for src, want := range map[string]string{
		"a: &a [1]\nb: &a [2]\nc: *a\n":                "map[a:[1] b:[2] c:[2]]",
		"a: &a [&a [1], *a]\n":                         "map[a:[[1] [1]]]",
		"x: &x [&y [1], *y]\nz: &y [2]\nw: [*x, *y]\n": "map[w:[[[1] [1]] [2]] x:[[1] [1]] z:[2]]",
	} {
		root, errs := parseYAML("f.yaml", []byte(src))
		if len(errs) > 0 {
			t.Errorf("%q: %v", src, errs)
			continue
		}
		if got := fmt.Sprint(root.toAny()); got != want {
			t.Errorf("%q: got %s; want %s", src, got, want)
		}
	}
}

// TestRealYAMLIsWithinBounds: the specs and configs granite ships keep a
// wide margin below every bound, so the bounds never refuse real work.
func TestRealYAMLIsWithinBounds(t *testing.T) {
	files, err := os.ReadDir("../../specs")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		if f.IsDir() {
			for _, name := range []string{"domain.yaml", "scenarios.yaml"} {
				paths = append(paths, "../../specs/"+f.Name()+"/"+name)
			}
		}
	}
	exps, _ := os.ReadDir("../../specs/experiments")
	for _, e := range exps {
		paths = append(paths, "../../specs/experiments/"+e.Name())
	}
	checked := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		root, errs := parseYAML(p, data)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", p, errs)
		}
		if len(data) > MaxYAMLBytes/8 || depth(root) > MaxYAMLDepth/5 {
			t.Errorf("%s: %d bytes, %d levels deep: within a fifth of the bounds (%d bytes, %d levels)?", p, len(data), depth(root), MaxYAMLBytes, MaxYAMLDepth)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked %d files; expected every domain's and experiment's", checked)
	}
}

// depth is how many mappings and sequences nest at n's deepest point.
func depth(n *node) int {
	d := 0
	for _, c := range append(append([]*node{}, n.vals...), n.items...) {
		d = max(d, depth(c))
	}
	if n.isMap || n.isSeq {
		d++
	}
	return d
}

// count is how many nodes n holds, keys included.
func count(n *node) int {
	c := 1 + len(n.keys)
	for _, v := range append(append([]*node{}, n.vals...), n.items...) {
		c += count(v)
	}
	return c
}

// FuzzReadYAML feeds arbitrary bytes to the YAML reader: it returns
// nodes or positioned errors, never panics, and what it returns is within
// the bounds.
//
//	go test ./internal/speclang -run '^$' -fuzz FuzzReadYAML -fuzztime 30s
func FuzzReadYAML(f *testing.F) {
	domain, _ := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	f.Add(string(domain))
	// Small seeds only: the fuzzer minimizes what it finds, and a 20 KB
	// nesting takes it a long while.
	for _, c := range hostileYAML {
		if len(c.src) < 4<<10 {
			f.Add(c.src)
		}
	}
	f.Add("a: " + strings.Repeat("[", MaxYAMLDepth) + strings.Repeat("]", MaxYAMLDepth) + "\n")
	f.Add(strings.Repeat("- ", MaxYAMLDepth+1) + "x\n")
	f.Add(blockMaps(MaxYAMLDepth + 1))
	f.Add(aliasChain(98))
	f.Add("a: &a {b: &b [*a]}\nc: *b\n")
	f.Add("- &x [- *x]\n")
	f.Fuzz(func(t *testing.T, src string) {
		root, errs := parseYAML("f.yaml", []byte(src))
		for _, e := range errs {
			if e.Pos.File != "f.yaml" || e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
				t.Fatalf("error without a position or message: %#v", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		if root == nil {
			t.Fatal("no nodes and no errors")
		}
		if d := depth(root); d > MaxYAMLDepth {
			t.Fatalf("loaded %d levels deep; the bound is %d", d, MaxYAMLDepth)
		}
		if n := count(root); n > 2*len(src)+2+MaxYAMLAliasNodes {
			t.Fatalf("loaded %d nodes from %d bytes; aliases may add at most %d", n, len(src), MaxYAMLAliasNodes)
		}
	})
}

// BenchmarkReadHostileYAML shows each attack refused in milliseconds
// (before the bounds: minutes, or never), beside a real domain spec.
func BenchmarkReadHostileYAML(b *testing.B) {
	domain, err := os.ReadFile("../../specs/healthcare/domain.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cases := append([]struct{ name, src, want string }{{"real domain spec", string(domain), ""}}, hostileYAML...)
	for _, c := range cases {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			data := []byte(c.src)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				_, errs := parseYAML("f.yaml", data)
				if (len(errs) > 0) != (c.want != "") {
					b.Fatalf("errors: %v", errs)
				}
			}
		})
	}
}

// endless is a file that never ends, like /dev/zero.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}
func (endless) Close() error               { return nil }
func (endless) Stat() (fs.FileInfo, error) { return nil, errors.New("no stat") }

// endlessFS serves name as an endless file, the rest from fsys.
type endlessFS struct {
	fs.FS
	name string
}

func (e endlessFS) Open(name string) (fs.File, error) {
	if name == e.name {
		return endless{}, nil
	}
	return e.FS.Open(name)
}

// TestSpecFolderReadsAreBounded: a domain spec or scenario table that
// never ends is refused after MaxYAMLBytes, not read until memory runs
// out.
func TestSpecFolderReadsAreBounded(t *testing.T) {
	domain, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tiny/domain.yaml", "tiny/scenarios.yaml"} {
		fsys := endlessFS{FS: specFS(t, map[string]string{"tiny/domain.yaml": string(domain), "tiny/scenarios.yaml": "domain: tiny\n"}), name: name}
		err := loadsWithin(t, name, func() error { _, err := LoadAll(fsys); return err })
		if want := name + ":1:1: found more than 1 MiB of YAML"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v\nwant %s...", err, want)
		}
	}
}
