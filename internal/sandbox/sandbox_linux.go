package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// job is the init's work, passed in InitEnv.
type job struct {
	Argv   []string `json:"argv,omitempty"`
	Dir    string   `json:"dir"`
	Hide   string   `json:"hide,omitempty"`
	Cover  []string `json:"cover,omitempty"`
	Limits Limits   `json:"limits"`
	// Remount: make mounts read-only one by one, as on a kernel without
	// mount_setattr(2) (forceRemount, for tests).
	Remount bool `json:"remount,omitempty"`
	// NoOverlay: lay no writable layer over HOME, /tmp and /var/tmp, as
	// on a kernel that refuses overlayfs in a user namespace
	// (forceNoOverlay, for tests).
	NoOverlay bool `json:"no_overlay,omitempty"`
	// TmpDir is the program's TMPDIR, from the first stage to the second.
	TmpDir string `json:"tmpdir,omitempty"`
	// Reap: the init's second stage, started in the first's place once
	// the view is made and every capability dropped: start the program
	// and reap.
	Reap bool `json:"reap,omitempty"`
	// Probe: set the namespace up, check it, report and exit.
	Probe bool `json:"probe,omitempty"`
}

// forceRemount makes inits take the way of kernels older than
// mount_setattr(2) (Linux 5.12, as on Jetson's 5.10), so that tests
// cover it.
var forceRemount = false

// forceNoOverlay makes inits take the way of kernels that refuse
// overlayfs in a user namespace (before Linux 5.11), so that tests cover
// it.
var forceNoOverlay = false

// statusFD is the init's report to granite: one line, "exit N",
// "signal NAME", "limit TEXT" (it ended the program for going over a
// limit), "ok" (a probe) or "error TEXT", written just before it exits.
const statusFD = 3

var probe struct {
	once sync.Once
	ok   bool
	why  string
}

// Available reports whether programs can run in namespaces here and, when
// they cannot, why. It starts one init, once per process, that sets a
// namespace up as a trial's would be and checks what it sees.
func Available() (bool, string) {
	probe.once.Do(func() {
		probe.ok, probe.why = tryNamespaces()
	})
	return probe.ok, probe.why
}

func tryNamespaces() (bool, string) {
	p, err := MkdirPrivate("probe-")
	if err != nil {
		return false, err.Error()
	}
	defer p.Remove()
	var errs strings.Builder
	res := run(context.Background(), Namespaces, Program{Dir: p.Dir, Hide: p.Hide}, io.Discard, &errs, time.Second, true)
	switch {
	case res.StartErr != nil:
		return false, res.StartErr.Error()
	case res.Err != nil:
		return false, res.Err.Error()
	case res.ExitCode != 0:
		return false, fmt.Sprintf("the namespace's init exited with status %d: %s", res.ExitCode, strings.TrimSpace(errs.String()))
	}
	return true, ""
}

// Run runs s to its end, contained as mode says, its standard output and
// error copied to stdout and stderr (standard input is empty). When ctx
// ends, the program and everything it started are killed. Once the
// program exits, whatever it started is killed too, and what its output
// pipes still hold is read for at most waitDelay: a helper that kept them
// open does not make a finished program's run fail.
//
// Run locks the calling goroutine to its thread while the program runs:
// the parent-death signal is tied to the thread that started it.
func Run(ctx context.Context, mode Mode, s Program, stdout, stderr io.Writer, waitDelay time.Duration) Result {
	return run(ctx, mode, s, stdout, stderr, waitDelay, false)
}

// run is Run; probeOnly runs no program: the init checks its namespace
// and reports.
func run(ctx context.Context, mode Mode, s Program, stdout, stderr io.Writer, waitDelay time.Duration, probeOnly bool) Result {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var res Result
	cmd, report, err := command(ctx, mode, s, probeOnly)
	if err != nil {
		res.StartErr = err
		return res
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		res.StartErr = err
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.StartErr = err
		return res
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	copied := make(chan struct{}, 2)
	copyOut := func(w io.Writer, r *os.File) {
		_, _ = io.Copy(w, r)
		copied <- struct{}{}
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if report != nil {
		report.w.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if report != nil {
			report.r.Close()
		}
		res.StartErr = err
		return res
	}
	res.Started = time.Now()
	if mode == None {
		// The init raises its own score before it starts the program
		// (see initMain); here the program's is raised as it runs.
		firstToKill(cmd.Process.Pid)
	}
	go copyOut(stdout, outR)
	go copyOut(stderr, errR)
	werr := cmd.Wait()
	res.Exited = time.Now()
	if mode == None {
		_ = killGroup(cmd.Process.Pid) // what the program left behind
	}
	// Read what the pipes hold, for a bounded time.
	deadline := time.Now().Add(waitDelay)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	<-copied
	<-copied
	outR.Close()
	errR.Close()
	res.Killed = ctx.Err() != nil
	res.Status = statusOf(cmd.ProcessState)
	if werr != nil && !errors.As(werr, new(*exec.ExitError)) && !res.Killed {
		res.Err = werr
	}
	if report != nil {
		line, _ := io.ReadAll(io.LimitReader(report.r, 4<<10))
		report.r.Close()
		if !res.Killed {
			st, over, err := parseReport(string(line))
			switch {
			case err != nil:
				res.StartErr = err
			case over != "":
				res.Status, res.OverLimit = st, over
			default:
				res.Status = st
			}
		}
	}
	return res
}

// firstToKill makes a process the kernel's first choice when memory runs
// out, and its children after it: an agent that touches gigabytes is
// killed, not granite (the red team's OOM killer chose granite and the
// run was lost). Raising a score needs no privilege.
func firstToKill(pid int) {
	path := "/proc/self/oom_score_adj"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/oom_score_adj"
	}
	_ = os.WriteFile(path, []byte("1000"), 0)
}

// pipe is the read and write ends of the init's report.
type pipe struct{ r, w *os.File }

// command makes the exec.Cmd for mode: the program itself in a process
// group of its own, or granite's init in new namespaces with the program
// as its work.
func command(ctx context.Context, mode Mode, s Program, probeOnly bool) (*exec.Cmd, *pipe, error) {
	if mode == None {
		cmd := exec.CommandContext(ctx, s.Argv[0], s.Argv[1:]...)
		cmd.Dir, cmd.Env = s.Dir, s.Env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
		return cmd, nil, nil
	}
	j := job{Dir: s.Dir, Hide: s.Hide, Cover: s.Cover, Limits: s.Limits.withDefaults(DefaultLimits), Remount: forceRemount, NoOverlay: forceNoOverlay, Probe: probeOnly}
	if !probeOnly {
		path := s.Argv[0]
		if !strings.Contains(path, "/") {
			lp, err := exec.LookPath(path)
			if err != nil {
				return nil, nil, err
			}
			path = lp
		}
		j.Argv = append([]string{path}, s.Argv[1:]...)
	}
	spec, err := json.Marshal(j)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{"granite-sandbox-init"}
	cmd.Dir = s.Dir
	cmd.Env = append(append([]string(nil), s.Env...), InitEnv+"="+string(spec))
	cmd.ExtraFiles = []*os.File{w}
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// The init keeps, across its exec, what it needs to mount and to
		// drop the program's capabilities; the program gets none.
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
		Pdeathsig:   syscall.SIGKILL,
	}
	// Killing the init kills the namespace.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	return cmd, &pipe{r, w}, nil
}

// statusOf reads a process's end.
func statusOf(ps *os.ProcessState) Status {
	st := Status{ExitCode: ps.ExitCode()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal = ws.Signal().String()
	}
	return st
}

// parseReport reads the init's report line: the program's end, or the
// limit it went over.
func parseReport(line string) (Status, string, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch kind {
	case "ok":
		return Status{}, "", nil
	case "exit":
		n, err := strconv.Atoi(rest)
		if err == nil {
			return Status{ExitCode: n}, "", nil
		}
	case "signal":
		return Status{ExitCode: -1, Signal: rest}, "", nil
	case "limit":
		return Status{ExitCode: -1, Signal: "killed"}, rest, nil
	case "error":
		return Status{}, "", errors.New(rest)
	case "":
		return Status{}, "", errors.New("the namespace's init ended without a word")
	}
	return Status{}, "", fmt.Errorf("the namespace's init said %q", line)
}

// killGroup kills a process group; a group already gone is no error.
func killGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
