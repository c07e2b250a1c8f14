package serve_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/serve"
)

// TestConnLimitRefuses: within the cap connections are handed on; the one
// past it is closed at once (its client reads an end, not a wait), and a
// closed connection frees its place for the next.
func TestConnLimitRefuses(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := serve.LimitConns(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first := <-accepted
	dial()
	<-accepted
	if got := ln.Open(); got != 2 {
		t.Fatalf("open %d after two connections; want 2", got)
	}
	// The third is refused, and counted before its client hears of it:
	// its dial fails with a reset, or its read ends (reset or EOF) well
	// before the deadline, which only keeps a broken test from hanging.
	if over, err := net.Dial("tcp", inner.Addr().String()); err == nil {
		defer over.Close()
		_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := over.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read on a connection past the cap: %v; want it closed by the server", err)
		}
	}
	if got, refused := ln.Open(), ln.Refused(); got != 2 || refused != 1 {
		t.Fatalf("open %d, refused %d past the cap; want 2 and 1", got, refused)
	}
	// Closing twice gives one place back.
	first.Close()
	first.Close()
	if got := ln.Open(); got != 1 {
		t.Fatalf("open %d after one closed; want 1", got)
	}
	dial()
	<-accepted
	if got, refused := ln.Open(), ln.Refused(); got != 2 || refused != 1 {
		t.Fatalf("open %d, refused %d after a place was freed; want 2 and 1", got, refused)
	}
}
