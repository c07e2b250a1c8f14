package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// layered are the folders the program sees as they are and writes over:
// what it writes there goes to a tmpfs of the trial's own (HOME is
// layered too). fresh are the folders it gets empty, on a tmpfs of its
// own. Either where it exists.
var (
	layered = []string{"/tmp", "/var/tmp"}
	fresh   = []string{"/dev/shm"}
)

// mountView makes what the program sees: every mount read-only; HOME,
// /tmp and /var/tmp as they are, with what the program writes there kept
// in a bounded tmpfs that goes with it; a fresh /dev/shm; the trials'
// folder holding a copy of its own folder only, in a bounded tmpfs;
// Cover's folders empty; and a /proc of its PID namespace. It returns
// the program's TMPDIR: /tmp, or where /tmp could not be layered, a
// folder in its own.
func mountView(j job) (string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("make mounts private: %w", err)
	}
	// Held open: the trial's folder is copied from it once the folders
	// above it are covered.
	fd, err := unix.Open(j.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open the trial's folder: %w", err)
	}
	defer unix.Close(fd)
	if err := readOnly(j.Remount); err != nil {
		return "", err
	}
	size := strconv.FormatInt(j.Limits.Disk, 10)
	tmpLayered, err := layers(j, size)
	if err != nil {
		return "", err
	}
	for _, d := range fresh {
		if isDir(d) {
			if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+size); err != nil {
				return "", fmt.Errorf("mount a tmpfs of the trial's own on %s: %w", d, err)
			}
		}
	}
	if err := ownFolder(j, fd, size); err != nil {
		return "", err
	}
	tmp := "/tmp"
	if !tmpLayered {
		tmp = filepath.Join(j.Dir, ".tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return "", fmt.Errorf("make the trial's temporary folder: %w", err)
		}
	}
	for _, c := range j.Cover {
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue // not in the program's view
		}
		if err := unix.Mount("tmpfs", c, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0500,size=4k"); err != nil {
			return "", fmt.Errorf("cover %s: %w", c, err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "", fmt.Errorf("mount a /proc of the namespace's own: %w", err)
	}
	return tmp, nil
}

// isDir reports whether p is a folder, not a link to one.
func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// layers lays a writable layer over HOME, /tmp and /var/tmp: the program
// reads what is there (an agent's login and settings, a file it was
// given) and what it writes goes to one tmpfs of the trial's own, bounded
// in size and gone with the trial. The tmpfs is staged on the trial's
// folder, which ownFolder covers later, so the program never sees it.
// Where the kernel refuses an overlay (before Linux 5.11, or when asked
// by noOverlay), the folder stays read-only, and the program is told on
// its stderr. It reports whether /tmp was layered.
func layers(j job, size string) (tmpLayered bool, err error) {
	// HOME first: a layer over it would hide one over a folder in it.
	var dirs []string
	if home := os.Getenv("HOME"); filepath.IsAbs(home) && filepath.Clean(home) != "/" && !within(home, j.Dir) {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			dirs = append(dirs, home)
		}
	}
	for _, d := range layered {
		if isDir(d) {
			dirs = append(dirs, d)
		}
	}
	if err := unix.Mount("tmpfs", j.Dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size="+size); err != nil {
		return false, fmt.Errorf("stage the trial's layers: %w", err)
	}
	// The stage is reached through a handle: once /tmp is layered, its
	// path leads into the layer, not to the stage.
	stage, err := unix.Open(j.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("open the trial's stage: %w", err)
	}
	defer unix.Close(stage)
	for i, d := range dirs {
		var err error = unix.ENOTSUP
		if !j.NoOverlay {
			err = overlay(d, "/proc/self/fd/"+strconv.Itoa(stage)+"/"+strconv.Itoa(i))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "granite sandbox: %s is read-only in this trial (writing over it takes overlayfs in a user namespace, Linux 5.11): %v\n", d, err)
			continue
		}
		tmpLayered = tmpLayered || d == "/tmp"
	}
	return tmpLayered, nil
}

// overlay mounts over dir an overlay of dir itself and a writable layer
// in the folder stage.
func overlay(dir, stage string) error {
	upper, work := filepath.Join(stage, "upper"), filepath.Join(stage, "work")
	for _, d := range []string{stage, upper, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	opts := "lowerdir=" + overlayPath(dir) + ",upperdir=" + overlayPath(upper) + ",workdir=" + overlayPath(work)
	err := unix.Mount("overlay", dir, "overlay", 0, opts+",userxattr")
	if errors.Is(err, unix.EINVAL) { // a kernel before userxattr (5.11)
		err = unix.Mount("overlay", dir, "overlay", 0, opts)
	}
	if err != nil {
		return fmt.Errorf("lay a writable layer over it: %w", err)
	}
	return nil
}

// ownFolder shows the program its trial's folder, writable: in the
// trials' folder, covered by a bounded tmpfs, a copy of what granite put
// in it (its client configuration, an empty home); a folder elsewhere is
// bound back as it is, writable but unbounded.
func ownFolder(j job, fd int, size string) error {
	from := "/proc/self/fd/" + strconv.Itoa(fd)
	if j.Hide == "" || filepath.Dir(j.Dir) != filepath.Clean(j.Hide) {
		if err := os.MkdirAll(j.Dir, 0o700); err != nil {
			return fmt.Errorf("make the trial's folder's mount point: %w", err)
		}
		if err := unix.Mount(from, j.Dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind the trial's folder: %w", err)
		}
		return writable(j.Dir)
	}
	// The trials' folder may be missing from view, under a fresh /tmp.
	if err := os.MkdirAll(j.Hide, 0o700); err != nil {
		return fmt.Errorf("make the trials' folder's mount point: %w", err)
	}
	if err := unix.Mount("tmpfs", j.Hide, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size="+size); err != nil {
		return fmt.Errorf("cover the trials' folder %s: %w", j.Hide, err)
	}
	if err := os.CopyFS(j.Dir, os.DirFS(from)); err != nil {
		return fmt.Errorf("copy the trial's folder: %w", err)
	}
	return nil
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// overlayPath escapes what overlayfs's options read as separators.
func overlayPath(p string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(p)
}

// readOnly makes every mount of the namespace read-only, at once where
// the kernel has mount_setattr(2) (Linux 5.12), else (or when remount
// asks) mount by mount.
func readOnly(remount bool) error {
	var err error = unix.ENOSYS
	if !remount {
		err = unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	}
	if !errors.Is(err, unix.ENOSYS) {
		if err != nil {
			return fmt.Errorf("make the file systems read-only: %w", err)
		}
		return nil
	}
	return remountReadOnly()
}

// writable clears a mount's read-only flag.
func writable(path string) error {
	err := unix.MountSetattr(unix.AT_FDCWD, path, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
	if errors.Is(err, unix.ENOSYS) {
		var st unix.Statfs_t
		if err = unix.Statfs(path, &st); err == nil {
			err = unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|mountFlags(st.Flags)&^unix.MS_RDONLY, "")
		}
	}
	if err != nil {
		return fmt.Errorf("make %s writable: %w", path, err)
	}
	return nil
}

// remountReadOnly makes each mount read-only, keeping the flags the
// namespace may not change (nosuid, nodev, noexec, the atime ones).
// Mounts under /proc and /sys are left: /proc is replaced, and /sys
// holds nothing a program of this user may write that matters here.
func remountReadOnly() error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("list mounts: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			points = append(points, unescapeMountPath(fields[4]))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("list mounts: %w", err)
	}
	for _, p := range points {
		if within(p, "/proc") || within(p, "/sys") {
			continue
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
				continue // shadowed by a later mount, or out of reach
			}
			return fmt.Errorf("read-only %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|mountFlags(st.Flags), ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// mountFlags turns statfs(2)'s flags into the mount(2) flags of the same
// meaning.
func mountFlags(f int64) uintptr {
	var out uintptr
	for _, m := range []struct {
		st int64
		ms uintptr
	}{{unix.ST_RDONLY, unix.MS_RDONLY}, {unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME}} {
		if f&m.st != 0 {
			out |= m.ms
		}
	}
	return out
}

// unescapeMountPath reads mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkView checks what a probe's namespace shows: its init as the only
// process, in the trials' folder its own folder only, the root read-only
// and its own folder writable.
func checkView(j job) error {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n != os.Getpid() {
			return fmt.Errorf("/proc shows process %d besides the init", n)
		}
	}
	if j.Hide != "" {
		ents, err := os.ReadDir(j.Hide)
		if err != nil {
			return err
		}
		if len(ents) != 1 || ents[0].Name() != filepath.Base(j.Dir) {
			return fmt.Errorf("the trials' folder shows %d entries; expected the trial's own only", len(ents))
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		return err
	}
	if st.Flags&unix.ST_RDONLY == 0 {
		return errors.New("the root is writable; expected it read-only")
	}
	probe := filepath.Join(j.Dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return fmt.Errorf("the trial's folder is not writable: %w", err)
	}
	return os.Remove(probe)
}
