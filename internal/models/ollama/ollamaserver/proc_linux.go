package ollamaserver

import (
	"os"
	"syscall"
)

// procAttr puts `ollama serve` in a process group of its own, which its
// runners join, and has the kernel kill it if the test binary dies first
// (a panic or go test's -timeout), so that no server outlives its test.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends sig to p's process group: the server and its runners.
func killGroup(p *os.Process, sig syscall.Signal) {
	syscall.Kill(-p.Pid, sig)
}
