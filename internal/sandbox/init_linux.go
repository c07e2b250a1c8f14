package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A start of this executable with InitEnv set is granite's init in a new
// namespace: it does its work and exits before any other package's code
// (main or a test binary's tests) runs.
func init() {
	if spec, ok := os.LookupEnv(InitEnv); ok {
		os.Exit(initMain(spec))
	}
}

// initMain is the init: it makes the mount namespace the program must
// see, drops every capability, starts the program and, as PID 1, reaps
// whatever is orphaned in the namespace until the program exits. Its
// report goes to statusFD; its exit code mirrors the program's. When it
// exits, the kernel kills everything else in the namespace.
func initMain(spec string) int {
	runtime.LockOSThread() // capabilities are dropped for this thread, which starts the program
	// Not dumpable, first: the program runs as the init's user, and the
	// init's other threads keep the namespace's capabilities, so a
	// program that could open /proc/1/mem or attach to the init could
	// make one of them undo the mounts that hide the host. A process
	// that is not dumpable is its own user's no longer: its memory, its
	// descriptors and ptrace are refused to the program, which holds no
	// capability to override that.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.NewFile(statusFD, "report"), "error make the init not dumpable: %v\n", err)
		return 125
	}
	report := os.NewFile(statusFD, "report")
	syscall.CloseOnExec(statusFD)
	say := func(format string, a ...any) {
		fmt.Fprintf(report, format+"\n", a...)
	}
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		say("error read the init's work: %v", err)
		return 125
	}
	if err := mountView(j); err != nil {
		say("error %v", err)
		return 125
	}
	if j.Probe {
		if err := checkView(j); err != nil {
			say("error %v", err)
			return 125
		}
		say("ok")
		return 0
	}
	if err := dropCapabilities(); err != nil {
		say("error drop capabilities: %v", err)
		return 125
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, InitEnv+"=") {
			env = append(env, kv)
		}
	}
	firstToKill(0) // the program inherits it
	pid, err := syscall.ForkExec(j.Argv[0], j.Argv, &syscall.ProcAttr{Dir: j.Dir, Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		say("error start %s: %v", j.Argv[0], err)
		return 127
	}
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			say("error wait for %s: %v", j.Argv[0], err)
			return 125
		}
		if got != pid {
			continue // an orphan, reaped
		}
		if ws.Signaled() {
			say("signal %s", ws.Signal())
			return 128 + int(ws.Signal())
		}
		say("exit %d", ws.ExitStatus())
		return ws.ExitStatus()
	}
}

// mountView makes what the program sees: mounts of its own, the trials'
// folder empty but for its own, and a /proc of its own PID namespace.
func mountView(j job) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if j.Hide != "" && filepath.Dir(j.Dir) == filepath.Clean(j.Hide) {
		// Hold the trial's folder open, cover the trials' folder with an
		// empty tmpfs, and bind the folder back through the handle.
		fd, err := unix.Open(j.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open the trial's folder: %w", err)
		}
		defer unix.Close(fd)
		if err := unix.Mount("tmpfs", j.Hide, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=1m"); err != nil {
			return fmt.Errorf("cover the trials' folder %s: %w", j.Hide, err)
		}
		if err := os.Mkdir(j.Dir, 0o700); err != nil {
			return fmt.Errorf("make the trial's folder's mount point: %w", err)
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), j.Dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind the trial's folder: %w", err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a /proc of the namespace's own: %w", err)
	}
	return nil
}

// checkView checks what a probe's namespace shows: its init as the only
// process and, in the trials' folder, its own folder only.
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
	return nil
}

// dropCapabilities leaves this thread, and so the program it starts, no
// capability and no way to gain one: the ambient, inheritable, permitted
// and effective sets are emptied, the bounding set too, and no_new_privs
// stops set-user-ID and file capabilities.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// lastCap is the highest capability the kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
}
