package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
)

// TestMain lets the kill test run this test binary as the child process
// it kills, and the lock test as the other process holding a folder.
func TestMain(m *testing.M) {
	if out := os.Getenv("GRANITE_TEST_CHILD_OUT"); out != "" {
		os.Exit(childRun(out, os.Getenv("GRANITE_TEST_CHILD_HOST")))
	}
	if dir := os.Getenv("GRANITE_TEST_LOCK_DIR"); dir != "" {
		os.Exit(holdLock(dir))
	}
	if out := os.Getenv("GRANITE_TEST_AGENT_RUN"); out != "" {
		os.Exit(agentRun(out))
	}
	code := m.Run()
	removeAgent()
	os.Exit(code)
}

// killConfig is the run the kill test interrupts: the tiny domain, every
// level, ten repetitions, one scripted model.
func killConfig(host string) *results.Config {
	cfg := testConfig("kill", host, "fake:gold")
	cfg.Repetitions = 10
	return cfg
}

func childRun(out, host string) int {
	spec, lookup := tinySpec(&testing.T{})
	_, err := Run(context.Background(), killConfig(host), spec, Options{Out: out, Resume: true, Lookup: lookup})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// comparable is what must not depend on being killed: the trial's calls,
// answer and scores.
func comparable(r results.Record) string {
	var calls []string
	for _, c := range r.Calls {
		calls = append(calls, c.Tool+string(c.Arguments)+c.Result)
	}
	m := *r.Metrics
	m.WallS = 0
	b, _ := json.Marshal(m)
	return strings.Join(calls, "|") + "#" + r.FinalAnswer + "#" + string(b) + "#" + string(r.ErrorClass)
}

// TestKilledRunResumesToTheSameRecords SIGKILLs a run at random moments,
// resumes it each time, and compares the final records with an
// uninterrupted run: same trial ids, same contents, no duplicates, and no
// partial line left in the file.
func TestKilledRunResumesToTheSameRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	spec, lookup := tinySpec(t)
	f := ollamatest.NewServer(t, []string{"fake:gold"}, func(req ollamatest.Request, n int) ollamatest.Step {
		s := goldModel(spec, lookup)(req, n)
		s.Delay = 3 * time.Millisecond
		return s
	})
	ref := t.TempDir()
	if _, err := Run(context.Background(), killConfig(f.URL), spec, Options{Out: ref, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	want, _, err := results.ReadJournal(filepath.Join(ref, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("kill schedule seed %d", seed)
	kills, partials := 0, 0
	for round := 0; ; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "GRANITE_TEST_CHILD_OUT="+out, "GRANITE_TEST_CHILD_HOST="+f.URL)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var wait <-chan time.Time
		if round < 8 {
			wait = time.After(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("child: %v\n%s", err, stderr.String())
			}
		case <-wait:
			_ = cmd.Process.Kill() // SIGKILL: no chance to flush anything
			<-done
			kills++
			if data, _ := os.ReadFile(filepath.Join(out, results.TrialsFile)); len(data) > 0 && data[len(data)-1] != '\n' {
				partials++
			}
			continue
		}
		break
	}
	t.Logf("%d kills, %d of them mid-line", kills, partials)
	if kills < 3 {
		t.Fatalf("only %d kills landed; the run is too short for the test", kills)
	}
	data, err := os.ReadFile(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	got, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(got) || len(got) != len(want) || data[len(data)-1] != '\n' {
		t.Fatalf("%d lines, %d distinct records, want %d", len(lines), len(got), len(want))
	}
	byID := map[string]results.Record{}
	for _, r := range got {
		byID[r.TrialID] = r
	}
	for _, w := range want {
		g, ok := byID[w.TrialID]
		if !ok {
			t.Errorf("trial %s missing after resume", w.TrialID)
			continue
		}
		if comparable(g) != comparable(w) {
			t.Errorf("trial %s differs:\n got %s\nwant %s", w.TrialID, comparable(g), comparable(w))
		}
	}
}

func TestJournalDropsAPartialLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.TrialsFile)
	whole := `{"trial_id":"a","index":0}` + "\n" + `{"trial_id":"b","index":1}` + "\n"
	if err := os.WriteFile(path, []byte(whole+`{"trial_id":"c","ind`), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, good, err := results.ReadJournal(path)
	if err != nil || len(recs) != 2 || good != int64(len(whole)) {
		t.Fatalf("read: %d records, %d bytes, %v", len(recs), good, err)
	}
	j, recs, err := results.OpenJournal(path)
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	if err := j.Append(&results.Record{TrialID: "c", Index: 2}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _, err = results.ReadJournal(path)
	if err != nil || len(recs) != 3 || recs[2].TrialID != "c" {
		t.Fatalf("after append: %+v %v", recs, err)
	}
	// Damage before the last line is not a kill's remains: refuse it.
	if err := os.WriteFile(path, []byte("{broken\n"+whole), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.ReadJournal(path); err == nil || !strings.Contains(err.Error(), results.TrialsFile+":1: not a trial record") {
		t.Fatalf("damaged journal: %v", err)
	}
}

// TestRunJSONNamesEachModelOnceChecked stops a run while its second model
// runs, as a kill would: run.json on disk must already name both models
// with their size and quantisation, and a resume must keep both.
func TestRunJSONNamesEachModelOnceChecked(t *testing.T) {
	spec, lookup := tinySpec(t)
	gold := goldModel(spec, lookup)
	second := make(chan struct{})
	var once sync.Once
	block := true
	var mu sync.Mutex
	f := ollamatest.NewServer(t, []string{"first:1b", "second:1b"}, func(req ollamatest.Request, n int) ollamatest.Step {
		mu.Lock()
		hold := block && req.Model == "second:1b"
		mu.Unlock()
		if hold {
			once.Do(func() { close(second) })
			return ollamatest.Step{Delay: time.Hour} // cut short when the run stops
		}
		return gold(req, n)
	})
	cfg := testConfig("models", f.URL, "first:1b", "second:1b")
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, spec, Options{Out: out, Lookup: lookup})
		done <- err
	}()
	select {
	case <-second:
	case err := <-done:
		t.Fatalf("the run ended before its second model ran: %v", err)
	}
	// What a kill -9 now would leave.
	man, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cfg.ModelNames() {
		if info := man.Models[m]; info.Parameters != 3212749888 || info.Quantization != "Q4_K_M" {
			t.Errorf("run.json while the second model runs: model %s: %+v, want what /api/show said", m, info)
		}
	}
	cancel()
	<-done
	mu.Lock()
	block = false
	mu.Unlock()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Resume: true}); err != nil {
		t.Fatal(err)
	}
	if man, err = results.ReadManifest(out); err != nil {
		t.Fatal(err)
	}
	for _, m := range cfg.ModelNames() {
		if info := man.Models[m]; info.Quantization != "Q4_K_M" {
			t.Errorf("run.json after the resume: model %s: %+v", m, info)
		}
	}
}

// TestResumeStartsAMissingOrEmptyFolder: a job script that always passes
// --resume (a requeued Slurm task runs the same script) is right on its
// first run too, whether the folder is not there yet or made empty by the
// script.
func TestResumeStartsAMissingOrEmptyFolder(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("fresh", "http://127.0.0.1:1", agent.Oracle)
	for name, out := range map[string]string{"missing": filepath.Join(t.TempDir(), "a", "b"), "empty": t.TempDir()} {
		sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Shard: Shard{1, 2}, Lookup: lookup})
		if err != nil {
			t.Fatalf("%s folder: %v", name, err)
		}
		recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
		if err != nil || sum.Resumed != 0 || sum.Ran != sum.Planned || len(recs) != sum.Planned || sum.Planned == 0 {
			t.Errorf("%s folder: %+v, %d records (%v)", name, sum, len(recs), err)
		}
		if m, err := results.ReadManifest(out); err != nil || m.Shard != "1/2" || m.Trials != sum.Planned {
			t.Errorf("%s folder: run.json %+v (%v)", name, m, err)
		}
	}
}
