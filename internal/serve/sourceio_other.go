//go:build !unix

package serve

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// killGroup kills the source itself.
func killGroup(p *os.Process) error { return p.Kill() }

// writeNow leaves every write to the drain goroutine.
func writeNow(syscall.RawConn, []byte) (int, error) { return 0, nil }
