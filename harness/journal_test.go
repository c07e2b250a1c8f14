package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
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
		var r results.Record
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
	f := ollamatest.NewServer(t, []string{"fake:gold"}, func(req ollamatest.Request, n int) ollamatest.Step {
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
	ids := journalLines(t, filepath.Join(out, results.TrialsFile))
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
	if _, err := results.LockOut(dir); err != nil {
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
	cfg := testConfig("locked", "http://127.0.0.1:1", agent.Silent)
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
	for _, f := range []string{results.ManifestFile, results.TrialsFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the refused run wrote %s", f)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if pid, _ := os.ReadFile(filepath.Join(out, results.LockFile)); strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("lock file holds %q, want the killed child's pid", pid)
	}
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup})
	if err != nil || sum.Ran != 16 {
		t.Fatalf("run after the holder died: %+v %v", sum, err)
	}
}

// fullDisk passes the first n writes to the journal's file and fails the
// rest with ENOSPC, as a disk that fills up does. Only the journal's
// writer goroutine calls it.
type fullDisk struct {
	*os.File
	n    int
	full bool
	// synced is closed at the first sync after a failed write. The journal
	// has told the runner by then; the moment between the failed write and
	// that (a goroutine descheduled on a busy machine) is not the
	// runner's to act on, so trials are counted from here.
	synced chan struct{}
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.n == 0 {
		d.full = true
		return 0, &fs.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
	}
	d.n--
	return d.File.Write(p)
}

func (d *fullDisk) Sync() error {
	if d.full {
		select {
		case <-d.synced:
		default:
			close(d.synced)
		}
	}
	return d.File.Sync()
}

// startCounter is a meter that counts the trials started (each marks its
// start) before and after the journal failed.
type startCounter struct {
	meter.Meter
	failed        <-chan struct{}
	before, after atomic.Int32
}

func (m *startCounter) Mark() meter.Mark {
	select {
	case <-m.failed:
		m.after.Add(1)
	default:
		m.before.Add(1)
	}
	return m.Meter.Mark()
}

// TestFullDiskStopsTheRun fills the disk under the journal after two
// records: the run stops at once with an error that names the file and
// the way on, starts no trial beyond those already in flight, keeps the
// two records and leaves no temporary manifest; a resume then finishes
// the run.
func TestFullDiskStopsTheRun(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("full", "http://127.0.0.1:1", agent.Oracle)
	cfg.Repetitions = 3 // 48 trials on 4 workers
	out := t.TempDir()
	disk := &fullDisk{n: 2, synced: make(chan struct{})}
	none, err := meter.Open(meter.Options{Kind: meter.None})
	if err != nil {
		t.Fatal(err)
	}
	starts := &startCounter{Meter: none, failed: disk.synced}
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Meter: starts,
		disk: func(f *os.File) results.JournalFile { disk.File = f; return disk }})
	want := fmt.Sprintf("write %s: no space left on device; the trials recorded so far are kept; free space and rerun with --resume", filepath.Join(out, results.TrialsFile))
	if err == nil || err.Error() != want {
		t.Errorf("run on a full disk: %v\nwant %s", err, want)
	}
	if sum == nil || sum.Ran != 2 {
		t.Errorf("summary of the run on a full disk: %+v, want the 2 trials recorded", sum)
	}
	select {
	case <-disk.synced:
	default:
		t.Fatal("the journal did not sync the whole lines written before the failed write")
	}
	t.Logf("trials started: %d before the journal failed, %d after", starts.before.Load(), starts.after.Load())
	if n := starts.after.Load(); n > 4 {
		t.Errorf("%d trials started after the journal failed (%d before); want at most the 4 in flight", n, starts.before.Load())
	}
	if ids := journalLines(t, filepath.Join(out, results.TrialsFile)); len(ids) != 2 {
		t.Errorf("journal holds %d records, want the 2 written before the disk filled up", len(ids))
	}
	if left, _ := filepath.Glob(filepath.Join(out, "."+results.ManifestFile+".tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	sum, err = Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
	if err != nil || sum.Resumed != 2 || sum.Ran != 46 {
		t.Fatalf("resume with space again: %+v %v", sum, err)
	}
}

// TestManifestWriteLeavesNoTemporary fails the replacing of run.json:
// the error says what failed, the old run.json stands, and no temporary
// file is left for a person to wonder about. A link planted where the old
// temporary file went (run.json.tmp, into /dev/full: a full disk) is
// neither written through nor in the way: the new file has a name of its
// own, made new.
func TestManifestWriteLeavesNoTemporary(t *testing.T) {
	temporaries := func(t *testing.T, dir string) []string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dir, "."+results.ManifestFile+".tmp-*"))
		return m
	}
	t.Run("rename refused", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, results.ManifestFile, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		err := results.WriteManifest(dir, &results.Manifest{Experiment: "x"})
		if err == nil || !strings.Contains(err.Error(), "rename") {
			t.Errorf("WriteManifest: %v, want a rename error", err)
		}
		if left := temporaries(t, dir); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	})
	t.Run("a link where the temporary file went", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, results.ManifestFile+".tmp")
		if err := os.Symlink("/dev/full", link); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteManifest(dir, &results.Manifest{Experiment: "x"}); err != nil {
			t.Fatalf("WriteManifest: %v", err)
		}
		if target, err := os.Readlink(link); err != nil || target != "/dev/full" {
			t.Errorf("the planted link changed: %q %v", target, err)
		}
		if m, err := results.ReadManifest(dir); err != nil || m.Experiment != "x" {
			t.Errorf("run.json: %+v %v", m, err)
		}
		if left := temporaries(t, dir); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	})
}

// TestResumeRefusesRecordsNotInThePlan resumes a folder whose journal holds
// records of trials this run does not plan (a model and repetitions it
// does not have): the resume stops before running anything, naming the
// file, how many and the first ids, and touches neither file.
func TestResumeRefusesRecordsNotInThePlan(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("foreign", "http://127.0.0.1:1", agent.Silent)
	ref := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: ref, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(ref, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// foreign renames record i, or leaves it in the plan ("").
		foreign func(i int, r results.Record) string
		want    string // the error after the file's path, %[1]s..%[3]s the first ids
	}{
		{"one", func(i int, r results.Record) string {
			if i == 2 {
				return "fake:x/" + r.Scenario + "/L1/r1"
			}
			return ""
		}, " holds 1 record of a trial that is not in this run's plan (shard 0/1), e.g. %[1]s; remove it from the file, or choose another --out"},
		{"several", func(i int, r results.Record) string {
			if i >= 2 {
				return strings.TrimSuffix(r.TrialID, "r1") + fmt.Sprintf("r%d", i)
			}
			return ""
		}, " holds 4 records of trials that are not in this run's plan (shard 0/1), e.g. %[1]s, %[2]s, %[3]s; remove them from the file, or choose another --out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			manifest, err := os.ReadFile(filepath.Join(ref, results.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			var lines []byte
			var ids []any
			for i, r := range recs[:6] {
				if id := c.foreign(i, r); id != "" {
					r.TrialID = id
					ids = append(ids, id)
				}
				b, _ := json.Marshal(r)
				lines = append(append(lines, b...), '\n')
			}
			path := filepath.Join(out, results.TrialsFile)
			for f, data := range map[string][]byte{path: lines, filepath.Join(out, results.ManifestFile): manifest} {
				if err := os.WriteFile(f, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err = Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
			if want := path + fmt.Sprintf(c.want, ids...); err == nil || err.Error() != want {
				t.Errorf("resume: %v\nwant %s", err, want)
			}
			if data, _ := os.ReadFile(path); string(data) != string(lines) {
				t.Errorf("the refused resume changed %s", results.TrialsFile)
			}
			if data, _ := os.ReadFile(filepath.Join(out, results.ManifestFile)); string(data) != string(manifest) {
				t.Errorf("the refused resume changed %s", results.ManifestFile)
			}
		})
	}
}
