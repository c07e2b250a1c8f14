package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// pairWords are the words that, put into an exported name, made a second
// way of doing the same thing once a level became an interface:
// Open/OpenInterface, Stdio/StdioServer, NewHandler/NewFactoryHandler.
// A level is its identity interface, so one function takes both.
var pairWords = []string{"Interface", "Surface", "Server", "Factory", "Level", "Plain"}

// TestNoLevelInterfacePairs: no package exports two functions (or two
// methods of one type) whose names differ by one of pairWords.
func TestNoLevelInterfacePairs(t *testing.T) {
	names := map[string][]string{} // package folder, receiver → exported names
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel == "gen" || rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			key := filepath.Dir(rel) + "." + receiver(fn)
			names[key] = append(names[key], fn.Name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no exported function found")
	}
	for key, ns := range names {
		for _, a := range ns {
			for _, b := range ns {
				if w, ok := pairedBy(a, b); ok {
					t.Errorf("%s exports %s and %s, one thing two ways (they differ by %q): make one take what both take", key, a, b, w)
				}
			}
		}
	}
}

// receiver names a method's receiver type, "" for a function.
func receiver(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if g, ok := typ.(*ast.IndexExpr); ok {
		typ = g.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// pairedBy reports whether b is a with one of pairWords put in at a
// word boundary, and which.
func pairedBy(a, b string) (string, bool) {
	words := camelWords(a)
	for _, w := range pairWords {
		for i := 0; i <= len(words); i++ {
			if strings.Join(slices.Insert(slices.Clone(words), i, w), "") == b {
				return w, true
			}
		}
	}
	return "", false
}

// camelWords splits a CamelCase name into its words.
func camelWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

func TestPairedBy(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"Open", "OpenInterface", true},
		{"Stdio", "StdioServer", true},
		{"NewHandler", "NewFactoryHandler", true},
		{"Open", "Opened", false},
		{"DomainInterface", "DomainInterfaces", false},
		{"Build", "Rebuild", false},
	} {
		if _, got := pairedBy(c.a, c.b); got != c.want {
			t.Errorf("pairedBy(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
