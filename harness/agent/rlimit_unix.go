//go:build unix

package agent

import "syscall"

// openFileLimit is how many descriptors granite may have open: the soft
// RLIMIT_NOFILE, which Go has raised to the hard limit.
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}
