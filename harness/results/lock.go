package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// LockFile is the output folder's lock. A run holds it from its first look
// at the folder to its last write, so that two runs never append to one
// journal. The lock is the OS's (flock), which dies with its process; the
// PID written inside only tells a person who holds it.
const LockFile = ".lock"

// Lock is a held lock of an output folder.
type Lock struct {
	fl *flock.Flock
}

// LockOut creates dir if needed and locks it, or says which process
// holds it. It never waits: a second run on the same folder is a mistake
// to show at once, not a queue.
func LockOut(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The lock file is written and truncated: a link planted in its place
	// is refused, not written through.
	path := filepath.Join(dir, LockFile)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file (a link?); remove it or choose another --out", path)
	}
	fl := flock.New(path, flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w (granite needs a file system with file locks for its output)", path, err)
	}
	if !ok {
		holder := ""
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("%s is in use by another granite run%s; wait for it to finish or choose another --out", dir, holder)
	}
	// Best effort: the PID is for people, and a holder that could not
	// write it (Windows locks the byte it would go in) still holds the
	// lock. A PID left by a killed run names no holder: the next run
	// takes the lock and writes its own.
	_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return &Lock{fl: fl}, nil
}

// Release empties the PID, so that it cannot name an unrelated process
// later, and unlocks. The file stays: removing it would let a run that
// opened it just before lock a file no later run can see. Errors are
// dropped: a lock that fails to unlock is released when the process ends,
// which is soon after every caller's Release.
func (l *Lock) Release() {
	_ = os.Truncate(l.fl.Path(), 0)
	_ = l.fl.Unlock()
}
