package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDomainReadIsBounded: -domain on a file that never ends is refused
// after the YAML reader's bound, not read until memory runs out.
func TestDomainReadIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-specs", "../../specs", "-domain", "/dev/zero", "-out", t.TempDir()}, &stdout, &stderr)
	}()
	select {
	case rc := <-done:
		if want := "/dev/zero:1:1: found more than 1 MiB of YAML"; rc != 1 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("rc %d, stderr %q; want 1 and %s...", rc, stderr.String(), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still reading /dev/zero after 20 s")
	}
}
