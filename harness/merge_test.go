package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
)

// TestShardsMergeToTheWholeRun runs a grid as three shards and merges
// them: the records equal an unsharded run's, and merge refuses a shard
// given twice, a shard that did not finish, folders of another config and
// an output among the inputs.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("shards", "http://127.0.0.1:1", agent.Oracle, agent.Silent)
	cfg.Repetitions = 2
	whole := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: whole, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	want, _, _ := results.ReadJournal(filepath.Join(whole, results.TrialsFile))
	sort.Slice(want, func(i, j int) bool { return want[i].Index < want[j].Index }) // workers finish out of order
	var dirs []string
	for i := range 3 {
		d := t.TempDir()
		sum, err := Run(context.Background(), cfg, spec, Options{Out: d, Shard: Shard{i, 3}, Lookup: lookup})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Planned < len(want)/3 || sum.Planned > len(want)/3+1 {
			t.Errorf("shard %d/3 planned %d of %d", i, sum.Planned, len(want))
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	sum, err := results.Merge(merged, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := results.ReadManifest(merged); err != nil || m.Trials != len(want) {
		t.Errorf("merged run.json plans %v trials (%v), want %d", m.Trials, err, len(want))
	}
	// A shard killed halfway is refused, by name, until a resume
	// finishes it; then it merges.
	unfinished := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: unfinished, Shard: Shard{0, 3}, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(unfinished, results.TrialsFile)
	data, _ := os.ReadFile(journal)
	lines := strings.SplitAfter(string(data), "\n")
	kept := len(lines) / 2
	if err := os.WriteFile(journal, []byte(strings.Join(lines[:kept], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	shard0, _ := results.ReadManifest(dirs[0])
	partial := filepath.Join(t.TempDir(), "partial")
	wantErr := fmt.Sprintf("merge: %s (shard 0/3) did not finish: it holds %d of its %d trials; run it again with --resume on that folder, then merge", unfinished, kept, shard0.Trials)
	if _, err := results.Merge(partial, []string{dirs[1], unfinished}); err == nil || err.Error() != wantErr {
		t.Errorf("merge of an unfinished shard: %v\nwant %s", err, wantErr)
	}
	if _, err := os.Stat(filepath.Join(partial, results.TrialsFile)); err == nil {
		t.Errorf("a refused merge wrote %s", results.TrialsFile)
	}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: unfinished, Resume: true, Shard: Shard{0, 3}, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	psum, err := results.Merge(partial, []string{unfinished, dirs[1]})
	if err != nil {
		t.Fatal(err)
	}
	shard1, _ := results.ReadManifest(dirs[1])
	if m, err := results.ReadManifest(partial); err != nil || m.Trials != shard0.Trials+shard1.Trials || psum.Records != m.Trials || psum.Missing != len(want)-m.Trials {
		t.Errorf("a resumed and a finished shard merged: %+v, run.json plans %v (%v); want %d planned, the rest missing", psum, m.Trials, err, shard0.Trials+shard1.Trials)
	}
	got, _, _ := results.ReadJournal(filepath.Join(merged, results.TrialsFile))
	if sum.Records != len(want) || sum.Missing != 0 || len(got) != len(want) {
		t.Fatalf("merged %+v, %d records, want %d", sum, len(got), len(want))
	}
	for i := range want {
		if got[i].TrialID != want[i].TrialID || comparable(got[i]) != comparable(want[i]) {
			t.Fatalf("record %d: %s, want %s", i, got[i].TrialID, want[i].TrialID)
		}
	}

	other := testConfig("shards", "http://127.0.0.1:1", agent.Oracle)
	odir := t.TempDir()
	if _, err := Run(context.Background(), other, spec, Options{Out: odir, Shard: Shard{1, 3}, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out  string
		dirs []string
		want string
	}{
		{t.TempDir(), []string{dirs[0], dirs[0]}, "are both shard 0/3"},
		{t.TempDir(), []string{dirs[0], odir}, "is a run of another config"},
		{t.TempDir(), []string{dirs[0], whole}, "is in both"},
		{dirs[0], dirs, "is one of the shards"},
		{t.TempDir(), []string{t.TempDir()}, "expected a folder granite run wrote"},
	} {
		if _, err := results.Merge(c.out, c.dirs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge %v: %v, want %q", c.dirs, err, c.want)
		}
	}
}

// TestResumeRefusesAnotherRun keeps results of different runs apart.
func TestResumeRefusesAnotherRun(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("resume", "http://127.0.0.1:1", agent.Silent)
	out := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), cfg, spec, Options{Out: out, Resume: true, Lookup: lookup})
	if err != nil || sum.Ran != 0 || sum.Resumed != sum.Planned {
		t.Fatalf("resume of a finished run: %+v %v", sum, err)
	}
	cases := []struct {
		cfg  *results.Config
		opts Options
		want string
	}{
		{cfg, Options{Out: out}, "add --resume to continue it"},
		{testConfig("resume", "http://127.0.0.1:1", agent.Oracle), Options{Out: out, Resume: true}, "holds a run of another config"},
		{cfg, Options{Out: out, Resume: true, Shard: Shard{0, 2}}, "holds shard 0/1; this run is shard 0/2"},
	}
	for _, c := range cases {
		c.opts.Lookup = lookup
		if _, err := Run(context.Background(), c.cfg, spec, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want %q", err, c.want)
		}
	}
	stray := t.TempDir()
	if err := os.WriteFile(filepath.Join(stray, results.TrialsFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: stray, Lookup: lookup}); err == nil || !strings.Contains(err.Error(), "no run.json") {
		t.Errorf("a folder with a stray trials.jsonl: %v", err)
	}
}

// TestMergeKeepsEveryShardsModels merges shards that each ran one model:
// the merged run.json describes both, as the report's size tables need.
// Like a run, a merge first locks its output folder.
func TestMergeKeepsEveryShardsModels(t *testing.T) {
	var dirs []string
	for i, model := range []string{"fake:a", "fake:b"} {
		d := t.TempDir()
		man := &results.Manifest{Experiment: "merge", ConfigHash: "h", Shard: Shard{i, 2}.String(), Grid: 2,
			Models: map[string]results.ModelInfo{model: {Parameters: float64(i + 1), Quantization: "Q4_K_M"}}}
		if err := results.WriteManifest(d, man); err != nil {
			t.Fatal(err)
		}
		j, _, err := results.OpenJournal(filepath.Join(d, results.TrialsFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Append(&results.Record{TrialID: model + "/s/L1/r1", Index: i, Model: model}); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	lock, err := results.LockOut(merged)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("merge: %s is in use by another granite run (pid %d); wait for it to finish or choose another --out", merged, os.Getpid())
	if _, err := results.Merge(merged, dirs); err == nil || err.Error() != want {
		t.Errorf("merge into a locked folder: %v\nwant %s", err, want)
	}
	lock.Release()
	if _, err := results.Merge(merged, dirs); err != nil {
		t.Fatal(err)
	}
	man, err := results.ReadManifest(merged)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := man.Models["fake:a"], man.Models["fake:b"]; a.Parameters != 1 || b.Parameters != 2 {
		t.Errorf("merged run.json models: %+v", man.Models)
	}
}

// TestShardsServedApartMerge runs two shards of an Ollama model, each
// served by a server of its own (Options.Endpoints, as granite run
// --ollama sets them on a Slurm node): every trial goes to its shard's
// server, never the config's host, and the shards keep the config's hash
// and host in run.json, so that they merge.
func TestShardsServedApartMerge(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("apart", "http://127.0.0.1:1", "fakemodel:1b")
	var dirs []string
	for i := range 2 {
		srv := ollamatest.NewServer(t, []string{"fakemodel:1b"}, func(ollamatest.Request, int) ollamatest.Step {
			return ollamatest.Step{Content: "done"}
		})
		d := t.TempDir()
		sum, err := Run(context.Background(), cfg, spec, Options{Out: d, Shard: Shard{i, 2}, Lookup: lookup,
			Endpoints: results.Endpoints{OllamaHosts: []string{srv.URL}}})
		if err != nil {
			t.Fatal(err)
		}
		recs, _, _ := results.ReadJournal(filepath.Join(d, results.TrialsFile))
		if len(recs) != sum.Planned || srv.Chats() < len(recs) {
			t.Errorf("shard %d/2: %d records of %d planned, %d chats at its server", i, len(recs), sum.Planned, srv.Chats())
		}
		for _, r := range recs {
			if r.Host != srv.URL {
				t.Fatalf("shard %d/2: trial %s ran on %q, want its own server %s", i, r.TrialID, r.Host, srv.URL)
			}
		}
		m, err := results.ReadManifest(d)
		if err != nil || m.ConfigHash != ConfigHash(cfg) || m.Config.Ollama.Host != "http://127.0.0.1:1" {
			t.Errorf("shard %d/2 run.json: hash %s (want %s), config host %q (%v)", i, m.ConfigHash, ConfigHash(cfg), m.Config.Ollama.Host, err)
		}
		dirs = append(dirs, d)
	}
	sum, err := results.Merge(filepath.Join(t.TempDir(), "merged"), dirs)
	if err != nil || sum.Missing != 0 {
		t.Fatalf("merge of shards served apart: %+v, %v", sum, err)
	}
}
