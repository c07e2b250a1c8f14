//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes a start of the test binary a granite stand-in that runs
// a program in a namespace and is then killed (TestNamespaceDiesWithGranite).
const parentEnv = "GRANITE_SANDBOX_TEST_PARENT"

func TestMain(m *testing.M) {
	if marker := os.Getenv(parentEnv); marker != "" {
		p, err := MkdirPrivate("parent-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		Run(context.Background(), Namespaces, Program{Argv: []string{"sh", "-c", "setsid sleep " + marker + " & echo started; wait"},
			Env: os.Environ(), Dir: p.Dir, Hide: p.Hide}, os.Stdout, os.Stderr, time.Second)
		os.Exit(0)
	}
	if os.Getenv(staleEnv) != "" {
		p, err := MkdirPrivate("dead-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(p.Dir, "mcp.json"), []byte("token"), 0o600); err != nil {
			os.Exit(1)
		}
		fmt.Println(p.Dir)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// staleEnv makes a start of the test binary a granite stand-in that makes
// a trial's folder, says where, and waits to be killed
// (TestDeadRunsFoldersAreRemoved).
const staleEnv = "GRANITE_SANDBOX_TEST_STALE"

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
	p, err := MkdirPrivate("test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Remove)
	var out, errs bytes.Buffer
	res := Run(ctx, mode, Program{Argv: []string{"sh", "-c", script}, Env: append(os.Environ(), env...), Dir: p.Dir, Hide: p.Hide},
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
			res := Run(context.Background(), mode, Program{Argv: []string{"no-such-agent-program"}, Dir: dir}, &bytes.Buffer{}, &bytes.Buffer{}, time.Second)
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
	neighbour, err := MkdirPrivate("neighbour-")
	if err != nil {
		t.Fatal(err)
	}
	defer neighbour.Remove()
	if err := os.WriteFile(filepath.Join(neighbour.Dir, "mcp.json"), []byte("token"), 0o600); err != nil {
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
	if _, err := MkdirPrivate("x-"); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a link as the trials' folder: err %v; want a refusal", err)
	}
	os.Remove(hide)
	p, err := MkdirPrivate("x-")
	if err != nil || p.Hide != hide || filepath.Dir(p.Dir) != hide {
		t.Errorf("MkdirPrivate = %+v, %v; want a folder in %s", p, err, hide)
	}
}

// TestProgramCannotReachItsInit attacks the init the way the red team
// left the namespace through it: the program, same user as the init,
// opens the init's memory to write over it, and attaches to it as a
// debugger would, to make a thread of the init that holds the
// namespace's capabilities undo the mounts that hide the host. Either is
// refused, and no thread of the init holds a capability to be used.
func TestProgramCannotReachItsInit(t *testing.T) {
	needNamespaces(t)
	res, out, errs := runScript(t, context.Background(), Namespaces,
		`(exec 3<>/proc/1/mem) 2>/dev/null && echo mem-opened; `+
			`grep -h '^Cap\(Eff\|Prm\)' /proc/1/task/*/status | grep -v '0000000000000000$'; `+
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

// givenFile is a file in the host's temporary folder that a program is
// given to read: it holds "given".
func givenFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp("", "granite-given-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	fmt.Fprint(f, "given")
	f.Close()
	return f.Name()
}

// outsideTemp makes a folder on the file system the program sees as it
// is (the package's own, not /tmp, which the program gets afresh).
func outsideTemp(t *testing.T, pattern string) string {
	t.Helper()
	d, err := os.MkdirTemp(".", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestProgramWritesOnlyItsOwn attacks the file system the way the red
// team did: an agent appends forged records to the run's trials.jsonl,
// writes elsewhere its user may (the root; a folder that may lie under
// /tmp, where the write lands in the trial's layer), and fills a disk. The results folder is
// not even visible; every other write outside the program's own,
// bounded folders fails; what it writes under HOME reads back in the
// trial and is gone after it, and so does what it writes over a file
// in /tmp; and a disk-filling write stops at the
// limit, on a tmpfs, not on the host's disk. Both ways of making mounts
// read-only are attacked: mount_setattr(2) and, as on kernels before
// 5.12, remounting one by one.
func TestProgramWritesOnlyItsOwn(t *testing.T) {
	needNamespaces(t)
	for _, remount := range []bool{false, true} {
		t.Run(fmt.Sprintf("remount=%v", remount), func(t *testing.T) {
			forceRemount = remount
			defer func() { forceRemount = false }()
			results, home, outside := outsideTemp(t, "results-"), outsideTemp(t, "home-"), outsideTemp(t, "outside-")
			journal := filepath.Join(results, "trials.jsonl")
			if err := os.WriteFile(journal, []byte("{\"trial_id\":\"a\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "settings"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			m := marker()
			given := givenFile(t)
			p, err := MkdirPrivate("write-")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Remove()
			dir := p.Dir
			script := `ls -A "$R" | wc -l; ` +
				`echo '{"trial_id":"forged"}' >> "$R/trials.jsonl" 2>/dev/null && echo wrote-results; ` +
				`touch "/granite-outside-$M" 2>/dev/null && echo wrote-root; echo x > "$O/file" 2>/dev/null; ` +
				`cat "$HOME/settings"; echo; echo new > "$HOME/new" && cat "$HOME/new"; ` +
				`echo t > "/tmp/granite-marker-$M" && echo t > "/var/tmp/granite-marker-$M" && echo tmp-ok; ` +
				`cat "$G"; echo; echo changed > "$G" && cat "$G"; ` +
				`head -c 32M /dev/zero > big 2>/dev/null; wc -c < big; ` +
				`echo x > /dev/null && echo null-ok`
			var out, errs bytes.Buffer
			res := Run(context.Background(), Namespaces, Program{Argv: []string{"sh", "-c", script},
				Env: append(os.Environ(), "R="+results, "O="+outside, "M="+m, "G="+given, "HOME="+home), Dir: p.Dir, Hide: p.Hide,
				Cover: []string{results}, Limits: Limits{Disk: 8 << 20}}, &out, &errs, time.Second)
			if res.StartErr != nil || res.ExitCode != 0 {
				t.Fatalf("got %+v, stderr %s", res, errs.String())
			}
			want := fmt.Sprintf("0\nmine\nnew\ntmp-ok\ngiven\nchanged\n%d\nnull-ok\n", 8<<20)
			if out.String() != want {
				t.Errorf("the program saw\n%s\nwant\n%s(stderr %s)", out.String(), want, errs.String())
			}
			if b, _ := os.ReadFile(journal); string(b) != "{\"trial_id\":\"a\"}\n" {
				t.Errorf("trials.jsonl after the trial: %q", b)
			}
			if b, _ := os.ReadFile(given); string(b) != "given" {
				t.Errorf("a file in the host's /tmp after the trial: %q", b)
			}
			for _, p := range []string{filepath.Join(outside, "file"), "/granite-outside-" + m, filepath.Join(home, "new"),
				filepath.Join(os.TempDir(), "granite-marker-"+m), "/var/tmp/granite-marker-" + m, filepath.Join(dir, "big")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("the program's write reached the host: %s", p)
				}
			}
		})
	}
}

// TestBombsEndOnlyTheirOwnTrial: a fork bomb and a memory bomb, each
// beside an honest trial, are ended by their inits at their limits, say
// which limit and by how much, and leave nothing running; the honest
// trial answers.
func TestBombsEndOnlyTheirOwnTrial(t *testing.T) {
	needNamespaces(t)
	m := marker()
	cases := []struct {
		name, script, over string
		limits             Limits
	}{
		{"fork", "while :; do sleep " + m + " & done", "tasks: ", Limits{Tasks: 64}},
		{"memory", `x=$(head -c 1G /dev/zero | tr '\0' a); echo ${#x}`, "memory: ", Limits{Memory: 96 << 20}},
		{"honest", "sleep 0.5; echo answer", "", Limits{}},
	}
	got := make([]Result, len(cases))
	outs := make([]string, len(cases))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() {
			p, err := MkdirPrivate("bomb-")
			if err != nil {
				t.Error(err)
				return
			}
			defer p.Remove()
			var out bytes.Buffer
			got[i] = Run(ctx, Namespaces, Program{Argv: []string{"sh", "-c", c.script}, Env: os.Environ(), Dir: p.Dir, Hide: p.Hide, Limits: c.limits},
				&out, io.Discard, time.Second)
			outs[i] = out.String()
		})
	}
	wg.Wait()
	for i, c := range cases {
		res := got[i]
		if c.over == "" {
			if res.ExitCode != 0 || res.OverLimit != "" || outs[i] != "answer\n" {
				t.Errorf("%s: got %+v, stdout %q; want the answer", c.name, res, outs[i])
			}
			continue
		}
		if res.Killed || !strings.HasPrefix(res.OverLimit, c.over) || res.Signal != "killed" {
			t.Errorf("%s: got %+v; want it ended over its limit (%s…)", c.name, res, c.over)
		}
	}
	if !gone(t, m) {
		t.Errorf("the fork bomb's processes outlived its trial")
	}
}

func TestParseReportReadsALimit(t *testing.T) {
	st, over, err := parseReport("limit memory: 130 MiB resident, over the limit of 128 MiB\n")
	if err != nil || over != "memory: 130 MiB resident, over the limit of 128 MiB" || st.Signal != "killed" {
		t.Errorf("parseReport = %+v, %q, %v", st, over, err)
	}
}

// TestDeadRunsFoldersAreRemoved: a run killed by kill -9 leaves its
// trial's folder, token and all; the next run's first folder removes it,
// and leaves alone the folders a live run holds.
func TestDeadRunsFoldersAreRemoved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	live, err := MkdirPrivate("live-") // sweeps once, before the dead run's folder exists
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command(self)
	dead.Env = append(os.Environ(), staleEnv+"=1")
	stdout, err := dead.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 4096)
	n, _ := stdout.Read(line)
	left := strings.TrimSpace(string(line[:n]))
	_ = dead.Process.Signal(syscall.SIGKILL)
	_ = dead.Wait()
	if _, err := os.Stat(filepath.Join(left, "mcp.json")); err != nil {
		t.Fatalf("the killed run's folder %q: %v", left, err)
	}
	removeStale(live.Hide, 0)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed run's folder %s is still there (%v)", left, err)
	}
	if _, err := os.Stat(live.Dir); err != nil {
		t.Errorf("the live run's folder was removed: %v", err)
	}
}

// TestReadOnlyWhereOverlayIsRefused: on a kernel that refuses overlayfs
// in a user namespace, HOME and /tmp stay as they are and read-only (what
// the agent was given there still reads), and TMPDIR is a bounded folder
// of its own.
func TestReadOnlyWhereOverlayIsRefused(t *testing.T) {
	needNamespaces(t)
	forceNoOverlay = true
	defer func() { forceNoOverlay = false }()
	home := outsideTemp(t, "home-")
	given := givenFile(t)
	res, out, errs := runScript(t, context.Background(), Namespaces,
		`cat "$G"; echo; touch "$G" 2>/dev/null && echo tmp-writable; touch "$HOME/x" 2>/dev/null && echo home-writable; `+
			`case "$TMPDIR" in "$PWD"/*) echo own-tmpdir;; esac; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`,
		"G="+given, "HOME="+home)
	if res.ExitCode != 0 || out != "given\nown-tmpdir\nt\n" {
		t.Errorf("got %+v, stdout %q, stderr %q; want the given file read, nothing written outside, and a TMPDIR of its own", res, out, errs)
	}
	if !strings.Contains(errs, "is read-only in this trial") {
		t.Errorf("stderr %q; want the program told why HOME and /tmp are read-only", errs)
	}
}
