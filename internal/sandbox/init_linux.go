package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

// initMain is the init, in two stages of one process. The first makes
// the mount namespace the program must see, drops every capability on
// its thread and starts this executable again in its place: the Go
// runtime's other threads, which keep the namespace's capabilities, end
// with the exec, and what starts holds none on any thread. The second
// starts the program and, as PID 1, reaps whatever is orphaned in the
// namespace until the program exits or goes over a limit. Its report
// goes to statusFD; its exit code mirrors the program's. When it exits,
// the kernel kills everything else in the namespace.
func initMain(spec string) int {
	runtime.LockOSThread() // capabilities are dropped for this thread, which starts the next stage
	// Not dumpable, first: the program runs as the init's user, and a
	// program that could open /proc/1/mem or attach to the init could
	// make it do anything. A process that is not dumpable is its own
	// user's no longer: its memory, its descriptors and ptrace are
	// refused to the program, which holds no capability to override that.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.NewFile(statusFD, "report"), "error make the init not dumpable: %v\n", err)
		return 125
	}
	rep := &reporter{f: os.NewFile(statusFD, "report")}
	syscall.CloseOnExec(statusFD)
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return rep.end(125, "error read the init's work: %v", err)
	}
	if !j.Reap {
		if err := setUp(j); err != nil {
			return rep.end(125, "error %v", err)
		}
		return rep.end(0, "ok") // a probe's view is as it must be
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, InitEnv+"=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+j.TmpDir) // the program's own, bounded
	firstToKill(0)                        // the program inherits it
	pid, err := syscall.ForkExec(j.Argv[0], j.Argv, &syscall.ProcAttr{Dir: j.Dir, Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		return rep.end(127, "error start %s: %v", j.Argv[0], err)
	}
	// The kernel's own bound on tasks, set on the program rather than on
	// the init, whose runtime must still start threads when the program
	// has used them all up.
	tasks := uint64(j.Limits.Tasks)
	_ = unix.Prlimit(pid, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: tasks, Max: tasks}, nil)
	go watch(j.Limits, func(over string) { os.Exit(rep.end(137, "limit %s", over)) })
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return rep.end(125, "error wait for %s: %v", j.Argv[0], err)
		}
		if got != pid {
			continue // an orphan, reaped
		}
		if ws.Signaled() {
			return rep.end(128+int(ws.Signal()), "signal %s", ws.Signal())
		}
		return rep.end(ws.ExitStatus(), "exit %d", ws.ExitStatus())
	}
}

// setUp is the init's first stage: it makes the program's view, drops
// every capability and starts the second stage in its place. It returns
// when something failed, or, for a probe, once the view is checked.
func setUp(j job) error {
	tmp, err := mountView(j)
	if err != nil {
		return err
	}
	if j.Probe {
		return checkView(j)
	}
	j.TmpDir = tmp
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	j.Reap = true
	next, err := json.Marshal(j)
	if err != nil {
		return err
	}
	env := []string{InitEnv + "=" + string(next)}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, InitEnv+"=") {
			env = append(env, kv)
		}
	}
	// The report goes on to the next stage.
	if _, err := unix.FcntlInt(statusFD, unix.F_SETFD, 0); err != nil {
		return fmt.Errorf("keep the report open: %w", err)
	}
	err = syscall.Exec("/proc/self/exe", []string{"granite-sandbox-init"}, env)
	return fmt.Errorf("start the init's second stage: %w", err)
}

// reporter writes the init's one report line, once: the program's end
// and the watchdog's verdict race, and the first to come is the one.
type reporter struct {
	once sync.Once
	f    *os.File
	code int
}

// end reports, when nothing was reported yet, and returns the exit code
// of what was reported first.
func (r *reporter) end(code int, format string, a ...any) int {
	r.once.Do(func() {
		fmt.Fprintf(r.f, format+"\n", a...)
		r.code = code
	})
	return r.code
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
