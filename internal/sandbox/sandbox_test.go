//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes a start of the test binary a granite stand-in that runs
// a program in a namespace and is then killed (TestNamespaceDiesWithGranite).
const parentEnv = "GRANITE_SANDBOX_TEST_PARENT"

func TestMain(m *testing.M) {
	if marker := os.Getenv(parentEnv); marker != "" {
		dir, hide, err := MkdirPrivate("parent-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		Run(context.Background(), Namespaces, Spec{Argv: []string{"sh", "-c", "setsid sleep " + marker + " & echo started; wait"},
			Env: os.Environ(), Dir: dir, Hide: hide}, os.Stdout, os.Stderr, time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// needNamespaces skips a test of the namespaced mode where the kernel
// refuses unprivileged namespaces, saying why.
func needNamespaces(t *testing.T) {
	t.Helper()
	if ok, why := Available(); !ok {
		t.Skipf("namespaces are unavailable here (%s): granite runs agent commands with isolation none", why)
	}
}

// run runs a shell script in a trial folder of its own.
func runScript(t *testing.T, ctx context.Context, mode Mode, script string, env ...string) (Result, string, string) {
	t.Helper()
	dir, hide, err := MkdirPrivate("test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var out, errs bytes.Buffer
	res := Run(ctx, mode, Spec{Argv: []string{"sh", "-c", script}, Env: append(os.Environ(), env...), Dir: dir, Hide: hide},
		&out, &errs, 2*time.Second)
	return res, out.String(), errs.String()
}

// alive reports whether a process whose command line holds marker runs.
func alive(t *testing.T, marker string) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if !bytes.Contains(st, []byte(") Z ")) { // a zombie is dead
				return true
			}
		}
	}
	return false
}

// gone waits for a process to be gone, as killed ones take a moment to be
// reaped.
func gone(t *testing.T, marker string) bool {
	t.Helper()
	for range 200 {
		if !alive(t, marker) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// marker is a sleep length no other process uses, to find the sleeper by.
func marker() string {
	return fmt.Sprintf("%d.%03d", 3000+os.Getpid()%1000, time.Now().Nanosecond()%1000)
}

func TestStatusIsTheProgramsOwn(t *testing.T) {
	for _, mode := range []Mode{Namespaces, None} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Namespaces {
				needNamespaces(t)
			}
			res, out, _ := runScript(t, context.Background(), mode, "echo answer; exit 3")
			if res.StartErr != nil || res.Err != nil || res.ExitCode != 3 || out != "answer\n" {
				t.Errorf("got %+v, stdout %q; want exit 3 and stdout answer", res, out)
			}
			res, _, _ = runScript(t, context.Background(), mode, "kill -TERM $$")
			if res.Signal != "terminated" || res.ExitCode != -1 {
				t.Errorf("a program that ends by SIGTERM: got %+v; want signal terminated", res)
			}
			res, _, _ = runScript(t, context.Background(), mode, "exit 0")
			if res.StartErr != nil || res.ExitCode != 0 || res.Started.IsZero() || res.Exited.Before(res.Started) {
				t.Errorf("got %+v; want a clean exit with its times", res)
			}
		})
	}
}

func TestMissingProgramIsAStartError(t *testing.T) {
	for _, mode := range []Mode{Namespaces, None} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Namespaces {
				needNamespaces(t)
			}
			dir := t.TempDir()
			res := Run(context.Background(), mode, Spec{Argv: []string{"no-such-agent-program"}, Dir: dir}, &bytes.Buffer{}, &bytes.Buffer{}, time.Second)
			if res.StartErr == nil || !strings.Contains(res.StartErr.Error(), "no-such-agent-program") {
				t.Errorf("start error %v; want one naming the program", res.StartErr)
			}
		})
	}
}

// TestProgramSeesOnlyItsOwn: the program sees its own processes, not
// another's environment, and no other trial's folder.
func TestProgramSeesOnlyItsOwn(t *testing.T) {
	needNamespaces(t)
	secret := "GRANITE_TEST_SECRET=" + marker()
	outside := exec.Command("sleep", "60")
	outside.Env = append(os.Environ(), secret)
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = outside.Process.Kill(); _ = outside.Wait() }()
	neighbour, _, err := MkdirPrivate("neighbour-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(neighbour)
	if err := os.WriteFile(filepath.Join(neighbour, "mcp.json"), []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The secret's value is given in pieces, so that the script's own text
	// (in the init's environment) does not hold it.
	value := strings.TrimPrefix(secret, "GRANITE_TEST_SECRET=")
	res, out, errs := runScript(t, context.Background(), Namespaces,
		`cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c "GRANITE_TEST_SECRET=$A$B"; ls "$(dirname "$PWD")" | wc -l; ls /proc | grep -c '^[0-9]'`,
		"A="+value[:2], "B="+value[2:])
	if res.ExitCode != 0 {
		t.Fatalf("got %+v, stderr %s", res, errs)
	}
	f := strings.Fields(out)
	if len(f) != 3 || f[0] != "0" || f[1] != "1" {
		t.Errorf("the program saw %q (environments holding the secret, entries in the trials' folder, processes); want 0 and 1", out)
	}
	if n, _ := strconv.Atoi(f[len(f)-1]); n > 5 {
		t.Errorf("the program saw %s processes; want its own few", f[2])
	}
}

// TestProgramHoldsNoCapability: it cannot unmount its /proc or its view
// of the trials' folder to see what lies beneath.
func TestProgramHoldsNoCapability(t *testing.T) {
	needNamespaces(t)
	res, out, errs := runScript(t, context.Background(), Namespaces,
		`grep -E '^Cap(Eff|Prm|Inh|Amb|Bnd)' /proc/self/status; umount /proc 2>/dev/null && echo unmounted; umount "$(dirname "$PWD")" 2>/dev/null && echo unmounted; true`)
	if res.ExitCode != 0 {
		t.Fatalf("got %+v, stderr %s", res, errs)
	}
	if strings.Contains(out, "unmounted") {
		t.Errorf("the program unmounted what hides the host:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("the program holds capabilities: %s", line)
		}
	}
}

// TestDescendantsDieWithTheProgram: a grandchild that leaves the process
// group does not outlive the program, nor a killed trial.
func TestDescendantsDieWithTheProgram(t *testing.T) {
	needNamespaces(t)
	m := marker()
	res, out, _ := runScript(t, context.Background(), Namespaces, "setsid sleep "+m+" > /dev/null 2>&1 & sleep 0.2; echo done")
	if res.ExitCode != 0 || out != "done\n" {
		t.Fatalf("got %+v, stdout %q", res, out)
	}
	if !gone(t, m) {
		t.Errorf("a setsid grandchild outlived the program")
	}
	m = marker() + "1"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	res, _, _ = runScript(t, ctx, Namespaces, "setsid sleep "+m+" > /dev/null 2>&1 & sleep 60")
	if !res.Killed {
		t.Errorf("got %+v; want killed", res)
	}
	if !gone(t, m) {
		t.Errorf("a setsid grandchild outlived a killed trial")
	}
}

// TestHelperHoldingOutputIsNoFailure: once the program exits, what it
// printed counts, whatever a helper it left holds.
func TestHelperHoldingOutputIsNoFailure(t *testing.T) {
	for _, mode := range []Mode{Namespaces, None} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Namespaces {
				needNamespaces(t)
			}
			res, out, _ := runScript(t, context.Background(), mode, "sleep 30 & echo answer")
			if res.Err != nil || res.StartErr != nil || res.ExitCode != 0 || out != "answer\n" {
				t.Errorf("got %+v, stdout %q; want a clean exit and the answer", res, out)
			}
			if d := res.Exited.Sub(res.Started); d > 10*time.Second {
				t.Errorf("the run waited %v for the helper", d)
			}
		})
	}
}

// TestNamespaceDiesWithGranite: kill -9 of granite kills the program and
// everything it started.
func TestNamespaceDiesWithGranite(t *testing.T) {
	needNamespaces(t)
	m := marker()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), parentEnv+"="+m)
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if _, err := stdout.Read(buf); err != nil || !strings.HasPrefix(string(buf), "started") {
		t.Fatalf("the stand-in printed %q, %v", buf, err)
	}
	if !alive(t, m) {
		t.Fatal("the program's grandchild is not running")
	}
	_ = parent.Process.Signal(syscall.SIGKILL)
	_ = parent.Wait()
	if !gone(t, m) {
		t.Errorf("the program's grandchild outlived granite's kill -9")
	}
}

func TestMkdirPrivateRefusesAnotherUsersFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	hide := filepath.Join(tmp, fmt.Sprintf("granite-trials-%d", os.Getuid()))
	if err := os.Symlink(tmp, hide); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MkdirPrivate("x-"); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a link as the trials' folder: err %v; want a refusal", err)
	}
	os.Remove(hide)
	dir, got, err := MkdirPrivate("x-")
	if err != nil || got != hide || filepath.Dir(dir) != hide {
		t.Errorf("MkdirPrivate = %s, %s, %v; want a folder in %s", dir, got, err, hide)
	}
}

// TestProgramCannotReachItsInit attacks the init the way the red team
// left the namespace through it: the program, same user as the init,
// opens the init's memory to write over it, and attaches to it as a
// debugger would. The init keeps the namespace's capabilities on threads
// other than the one that started the program, so either would let the
// program make a capable thread undo the mounts that hide the host.
func TestProgramCannotReachItsInit(t *testing.T) {
	needNamespaces(t)
	res, out, errs := runScript(t, context.Background(), Namespaces,
		`(exec 3<>/proc/1/mem) 2>/dev/null && echo mem-opened; `+
			`cat /proc/1/environ >/dev/null 2>&1 && echo environ-read; `+
			`ls -l /proc/1/fd/ >/dev/null 2>&1 && echo fds-listed; true`)
	if res.ExitCode != 0 {
		t.Fatalf("got %+v, stderr %s", res, errs)
	}
	if strings.TrimSpace(out) != "" {
		t.Errorf("the program reached its init: %s", out)
	}
}

// TestProgramIsFirstToKill: in either mode the program's OOM score is
// raised to the most, so that under memory pressure the kernel kills the
// agent that caused it, not granite.
func TestProgramIsFirstToKill(t *testing.T) {
	for _, mode := range []Mode{None, Namespaces} {
		if mode == Namespaces {
			if ok, _ := Available(); !ok {
				continue
			}
		}
		// The program reads its score once it has run a moment: in
		// mode none granite raises it as the program starts.
		res, out, errs := runScript(t, context.Background(), mode, `sleep 0.2; cat /proc/self/oom_score_adj`)
		if res.ExitCode != 0 || strings.TrimSpace(out) != "1000" {
			t.Errorf("%s: oom_score_adj %q (%+v, %s), want 1000", mode, out, res, errs)
		}
	}
}
