//go:build !unix

package agent

// openFileLimit: no RLIMIT_NOFILE to read here, so nothing is checked.
func openFileLimit() (uint64, bool) { return 0, false }
