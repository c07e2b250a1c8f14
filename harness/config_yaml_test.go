package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigRefusesHostileYAML: an experiment config goes through the
// bounded YAML reader, from reading the file to expanding its aliases.
func TestConfigRefusesHostileYAML(t *testing.T) {
	spec := loadSpec(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("domains: [smarthome]\n"+strings.Repeat("# padding\n", 200_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, "self.yaml")
	if err := os.WriteFile(self, []byte("domains: &d [*d]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{big, big + ":1:1: found more than 1 MiB of YAML; expected at most 1 MiB"},
		{self, self + ":1:14: $.domains[0]: found alias *d inside the value of its own anchor &d (1:10)"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		// Endless: read whole, it fills memory.
		cases = append(cases, struct{ path, want string }{"/dev/zero", "/dev/zero:1:1: found more than 1 MiB of YAML"})
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := LoadConfig(c.path, spec); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("%s: got %v\nwant %s...", c.path, err, c.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still loading after 20 s", c.path)
		}
	}
}
