package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Private is a trial's private folder, Dir, in the folder that holds
// every trial's, Hide. While it is in use its process holds a lock on
// it, which the kernel lets go when the process dies, however it dies: a
// folder nobody holds is a dead run's, and the next run removes it.
type Private struct {
	Dir, Hide string
	lock      *os.File
}

// staleAge is how old an unheld folder must be before it is taken for a
// dead run's: a live run holds its folder microseconds after making it.
const staleAge = time.Minute

var sweep sync.Once

// MkdirPrivate makes a new private folder for one trial, named pattern
// with a random suffix, in <temp>/granite-trials-<uid> (mode 0700,
// refused when it is a link or another user's), and holds it. Run hides
// the trials' folder's other folders from the trial. The first call of
// a process removes the folders that dead runs left behind (a granite
// killed by kill -9 leaves its trials' folders, client configurations
// and tokens included).
func MkdirPrivate(pattern string) (*Private, error) {
	hide := filepath.Join(os.TempDir(), "granite-trials-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(hide, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make the trials' folder: %w", err)
	}
	fi, err := os.Lstat(hide)
	if err != nil {
		return nil, fmt.Errorf("the trials' folder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the trials' folder %s is not a folder of this user's with mode 0700 (found %v); remove it and run again", hide, fi.Mode())
	}
	sweep.Do(func() { removeStale(hide, staleAge) })
	dir, err := os.MkdirTemp(hide, pattern)
	if err != nil {
		return nil, fmt.Errorf("make a trial's folder: %w", err)
	}
	lock, err := hold(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("hold the trial's folder: %w", err)
	}
	return &Private{Dir: dir, Hide: hide, lock: lock}, nil
}

// Remove removes the folder and lets it go.
func (p *Private) Remove() {
	os.RemoveAll(p.Dir)
	p.lock.Close()
}

// hold locks a folder for as long as the file it returns is open.
func hold(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// removeStale removes the folders of hide that no process holds and
// that are older than age.
func removeStale(hide string, age time.Duration) {
	ents, err := os.ReadDir(hide)
	if err != nil {
		return
	}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(info.ModTime()) < age {
			continue
		}
		dir := filepath.Join(hide, e.Name())
		if f, err := hold(dir); err == nil { // nobody holds it
			os.RemoveAll(dir)
			f.Close()
		}
	}
}
