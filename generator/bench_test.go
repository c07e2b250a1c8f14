package generator

import (
	"os"
	"testing"
)

// BenchmarkGenerateAll loads every repository spec (YAML, schema, IR) and
// renders all of gen/ (jennifer + gofmt), without the Go compile.
// Target: under 1 s.
func BenchmarkGenerateAll(b *testing.B) {
	fsys := os.DirFS("../specs")
	b.ReportAllocs()
	for b.Loop() {
		spec, err := Load(fsys)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(spec); err != nil {
			b.Fatal(err)
		}
	}
}
