package speclang

import (
	"os"
	"testing"
	"testing/fstest"
)

// specFS returns an FS holding the real spec schemas and the given domain
// files (path -> content).
func specFS(t testing.TB, files map[string]string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, name := range []string{SchemaFile, ScenarioSchemaFile} {
		schema, err := os.ReadFile("../../specs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: schema}
	}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return fsys
}
