//go:build unix

package serve

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that what it
// starts (the real server behind sh, npx or uvx) can be ended with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills every process of the source's group. The group keeps
// its id while any member lives, so this reaches the members left once
// the source itself has exited and been reaped.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// writeNow writes what the pipe takes of b without waiting: the source's
// input is non-blocking, so a full pipe returns at once.
func writeNow(raw syscall.RawConn, b []byte) (n int, err error) {
	rerr := raw.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := syscall.Write(int(fd), b[n:])
			if m > 0 {
				n += m
			}
			switch e {
			case nil:
			case syscall.EINTR:
			case syscall.EAGAIN:
				return true
			default:
				err = e
				return true
			}
		}
		return true
	})
	if err == nil {
		err = rerr
	}
	return n, err
}
