// Command testsum reads `go test -json` on stdin and prints what a plain
// `go test` prints (a line per package, the output of failed tests), then
// every skipped test with the reason it gave: without it, a user whose
// machine lacks npm or chromium sees only ok lines and never learns what
// did not run. It exits 1 when a test or a build failed.
//
//	go test -json ./... | go run ./internal/testsum
package main

import (
	"fmt"
	"os"
)

func main() {
	s, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if s.failed {
		os.Exit(1)
	}
}
