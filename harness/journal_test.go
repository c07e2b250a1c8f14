package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// journalLines reads a journal line by line, failing on any line that is
// not a whole record, and returns the trial ids in file order.
func journalLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, line := range strings.SplitAfter(string(data), "\n") {
		var r Record
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.TrialID == "" || !strings.HasSuffix(line, "\n") {
			t.Fatalf("%s:%d is not a whole record (%v): %.80q", path, i+1, err, line)
		}
		ids = append(ids, r.TrialID)
	}
	return ids
}

// TestConcurrentResumesShareNoJournal starts a second --resume on a folder
// while a first run is inside a trial: the second must stop at once,
// naming the folder and the holder, and the journal must hold every trial
// once in whole lines.
func TestConcurrentResumesShareNoJournal(t *testing.T) {
	spec, lookup := tinySpec(t)
	gold := goldModel(spec, lookup)
	first, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := newFakeOllama(t, []string{"fake:gold"}, func(req chatRequest, n int) step {
		held := false
		once.Do(func() { held = true })
		if held { // the first run's first trial waits here for the second run
			close(first)
			<-release
		}
		return gold(req, n)
	})
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released) // before the fake's Close, which waits for the held request
	cfg := testConfig("lock", f.URL, "fake:gold")
	out := filepath.Join(t.TempDir(), "out")
	firstRun := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
		firstRun <- err
	}()
	<-first
	_, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
	want := fmt.Sprintf("%s is in use by another granite run (pid %d); wait for it to finish or choose another --out", out, os.Getpid())
	if err == nil || err.Error() != want {
		t.Errorf("second run: %v\nwant %s", err, want)
	}
	released()
	if err := <-firstRun; err != nil {
		t.Fatalf("first run: %v", err)
	}
	ids := journalLines(t, filepath.Join(out, TrialsFile))
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("trial %s recorded twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 16 {
		t.Errorf("%d trials recorded, want 16", len(seen))
	}
	// The lock goes with the run: a later resume finds nothing to do.
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
	if err != nil || sum.Ran != 0 || sum.Resumed != 16 {
		t.Fatalf("resume after the first run: %+v %v", sum, err)
	}
}

// holdLock is the child process of TestOutLockedByAnotherProcess: it locks
// dir, says so on stdout, and holds the lock until stdin closes or it is
// killed.
func holdLock(dir string) int {
	if _, err := lockOut(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestOutLockedByAnotherProcess locks a folder from another process: a run
// there stops before writing anything, naming that process; once it is
// killed (no chance to clean up), the lock is gone with it and the run
// goes ahead despite the PID left in the lock file.
func TestOutLockedByAnotherProcess(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("locked", "http://127.0.0.1:1", Silent)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GRANITE_TEST_LOCK_DIR="+out)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %q %v\n%s", line, err, stderr.String())
	}
	_, err = Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup})
	want := fmt.Sprintf("%s is in use by another granite run (pid %d); wait for it to finish or choose another --out", out, cmd.Process.Pid)
	if err == nil || err.Error() != want {
		t.Errorf("run on a locked folder: %v\nwant %s", err, want)
	}
	for _, f := range []string{ManifestFile, TrialsFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the refused run wrote %s", f)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if pid, _ := os.ReadFile(filepath.Join(out, LockFile)); strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("lock file holds %q, want the killed child's pid", pid)
	}
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup})
	if err != nil || sum.Ran != 16 {
		t.Fatalf("run after the holder died: %+v %v", sum, err)
	}
}
