package schemacheck

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefOutsideTheSchemaIsRefused: a schema that refers to a local file
// (a FIFO that blocked granite list, deaf to SIGTERM, in the red team's
// probe) is refused at once, without opening it; a $ref inside the schema
// still compiles.
func TestRefOutsideTheSchemaIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Compile("granite:tool.json", `{"type":"object","properties":{"a":{"$ref":"file://`+fifo+`"}}}`)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "outside the schema") {
			t.Errorf("got %v, want a refusal", err)
		}
	case <-time.After(10 * time.Second):
		os.WriteFile(fifo, nil, 0) // unblock the reader before failing
		t.Fatal("compiling opened the FIFO and blocked")
	}
	if _, err := Compile("granite:tool.json", `{"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`); err != nil {
		t.Errorf("a $ref inside the schema: %v", err)
	}
}
