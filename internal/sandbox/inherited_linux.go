package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// CloseInherited marks every descriptor above stderr close-on-exec. Go
// opens its own descriptors so and passes a child only what it names, but
// one granite inherited from its caller without the flag (a secret opened
// as fd 7) would otherwise stay open in every program granite starts, an
// agent included. granite's main calls it first.
func CloseInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
