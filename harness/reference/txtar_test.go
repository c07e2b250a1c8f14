package reference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unpack writes the files of a txtar archive (a comment, then each file
// after a "-- name --" line) into a new folder and returns it. The run
// fixtures are archives because the reference names traces after models
// ("finch:7b"), and no file of a Go module may hold a ":".
func unpack(t testing.TB, archive string) string {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var name string
	var body strings.Builder
	flush := func() {
		if name == "" {
			return
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "-- "); ok && strings.HasSuffix(n, " --") {
			flush()
			name = strings.TrimSuffix(n, " --")
			continue
		}
		if name != "" {
			body.WriteString(line)
		}
	}
	flush()
	return dir
}
