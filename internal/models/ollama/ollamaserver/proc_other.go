//go:build !linux

package ollamaserver

import (
	"os"
	"syscall"
)

// procAttr leaves the process as it is: process groups are the Linux
// build's (scripts/ollama-build.sh and CI are Linux), so here a runner
// the server leaves behind may outlive the test.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup signals the server process alone; SIGTERM where the platform
// cannot deliver it falls back to killing.
func killGroup(p *os.Process, sig syscall.Signal) {
	if err := p.Signal(sig); err != nil {
		p.Kill()
	}
}
