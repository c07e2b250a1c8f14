package generator

import (
	"os"
	"testing"

	"github.com/mcpgranite/granite/internal/speclang"
)

// BenchmarkGenerateAll loads every repository spec (YAML, schema, IR) and
// renders all of gen/ (jennifer + gofmt), without the Go compile.
// Target: under 1 s.
func BenchmarkGenerateAll(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		renderRepo(b)
	}
}

// renderRepo loads the repository's specs and renders all of gen/.
func renderRepo(tb testing.TB) map[string][]byte {
	tb.Helper()
	spec, err := speclang.Load(os.DirFS("../specs"))
	if err != nil {
		tb.Fatal(err)
	}
	files, err := Render(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
