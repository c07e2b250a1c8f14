package integration

import (
	"bytes"
	"crypto/sha256"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// repoRoot is the module root, two levels up from this package.
const repoRoot = "../.."

// skipDir reports folders that are not the module's own Go source.
func skipDir(rel string) bool {
	base := filepath.Base(rel)
	return rel == "gen" || rel == "bin" || rel == "results" || base == "testdata" || base == "node_modules" || strings.HasPrefix(base, ".") && rel != "."
}

// TestNoGoNamesADomain keeps adding a domain spec-only: no Go file outside
// gen/ may name a domain of specs/ — no import of its generated package, no
// string literal equal to its name, no scenario ID of it, and no string
// naming one of its tools or operations. (Identifiers are free: code can
// only reach a domain's generated package through an import, and a
// variable called energy is about joules.)
func TestNoGoNamesADomain(t *testing.T) {
	spec, err := speclang.Load(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	domains := map[string]bool{}
	tools := map[string]string{} // snake_case tool or operation name -> domain
	for _, d := range spec.Domains {
		domains[d.Name] = true
		for _, o := range d.Operations {
			tools[o.Name] = d.Name
		}
		for _, lv := range d.Levels {
			for _, tl := range lv.Tools {
				if strings.Contains(tl.Name, "_") {
					tools[tl.Name] = d.Name
				}
			}
		}
	}
	token_ := regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)
	check := func(pos token.Position, s, what string) {
		switch {
		case domains[s]:
			t.Errorf("%s: %s %q names domain %s", pos, what, s, s)
		case strings.Contains(s, "/gen/"):
			for d := range domains {
				if strings.HasSuffix(s, "/gen/"+d) {
					t.Errorf("%s: %s imports the generated package of domain %s", pos, what, d)
				}
			}
		}
		for d := range domains {
			if strings.HasPrefix(s, d+"-") {
				t.Errorf("%s: %s %q names a scenario of domain %s", pos, what, s, d)
			}
		}
		for _, w := range token_.FindAllString(s, -1) {
			if d, ok := tools[w]; ok {
				t.Errorf("%s: %s %q names %s, a tool of domain %s", pos, what, s, w, d)
			}
		}
	}
	files := 0
	err = filepath.WalkDir(repoRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		if e.IsDir() {
			if skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					if s, err := strconv.Unquote(x.Value); err == nil {
						check(fset.Position(x.Pos()), s, "string")
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("checked only %d Go files; is the walk rooted at the module?", files)
	}
}

// TestNewDomainIsSpecOnly adds a domain to a copy of the module as two
// spec files, runs the generator, builds, and verifies its scenarios with
// the granite binary: nothing else needs to change, and no Go file outside
// gen/ does.
func TestNewDomainIsSpecOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the module")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	tmp := t.TempDir()
	before := map[string][32]byte{}
	err = filepath.WalkDir(repoRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		if e.IsDir() {
			if rel != "gen" && skipDir(rel) && filepath.Base(rel) != "testdata" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(rel, "gen"+string(filepath.Separator)) {
			before[rel] = sha256.Sum256(data)
		}
		return os.WriteFile(filepath.Join(tmp, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"domain.yaml", "scenarios.yaml"} {
		data, err := os.ReadFile(filepath.Join("../testdata/golden/tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, "specs", "tiny")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	run("generate", "./...")
	run("build", "./...")
	out := run("run", "./cmd/granite", "verify", "--domain", "tiny", "--mutants")
	if !strings.Contains(out, "1 domain, 4 scenarios, 16 scenario×level executions") || !strings.Contains(out, "; 0 failures") ||
		!strings.Contains(out, "every wrong variant scores TC 0") {
		t.Errorf("verify of the new domain:\n%s", out)
	}
	// The corpus and mutation tests pass with a domain that has no
	// recordings, and name it.
	out = run("test", "-count=1", "-v", "-run", "TestCorpusScores|TestMutation", "./harness/score/")
	if !strings.Contains(out, "warning: domain tiny has no corpus recordings") {
		t.Errorf("the corpus test does not name the new domain:\n%s", out)
	}
	if out := run("run", "./cmd/granite", "list"); !strings.Contains(out, "\ntiny ") {
		t.Errorf("list lacks the new domain:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "gen", "tiny", "server_gen.go")); err != nil {
		t.Errorf("no generated package for the new domain: %v", err)
	}
	for rel, sum := range before {
		data, err := os.ReadFile(filepath.Join(tmp, rel))
		if err != nil || sha256.Sum256(data) != sum {
			t.Errorf("%s changed outside gen/ (%v)", rel, err)
		}
	}
}
