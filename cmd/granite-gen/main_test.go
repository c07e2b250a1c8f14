package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainWritesOnePackage checks -domain: one domain package, no
// registry, errors positioned at the file given.
func TestDomainWritesOnePackage(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-specs", "../../specs", "-domain", "../../generator/testdata/golden/tiny/domain.yaml", "-out", out, "-root", "example.com/fixtures"}, &stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "granite-gen: 1 domain, ") {
		t.Errorf("stdout %q; want it to count 1 domain", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "registry.go")); !os.IsNotExist(err) {
		t.Errorf("registry.go written with -domain: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "tiny", "server_gen.go")); err != nil {
		t.Error(err)
	}

	bad := filepath.Join(t.TempDir(), "tiny", "domain.yaml")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("domain: tiny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if rc := run([]string{"-specs", "../../specs", "-domain", bad, "-out", t.TempDir()}, &stdout, &stderr); rc != 1 {
		t.Fatalf("rc %d for a broken spec", rc)
	}
	if !strings.HasPrefix(stderr.String(), bad+":1:") {
		t.Errorf("error not positioned at %s: %s", bad, stderr.String())
	}
}
