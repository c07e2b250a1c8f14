package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// TestShardAuto reads the shard from each scheduler's variables, and
// refuses, in one line naming what it found, an environment of neither,
// of both, a task past the array and variables that disagree.
func TestShardAuto(t *testing.T) {
	for _, c := range []struct {
		name string
		arg  string
		env  map[string]string
		want harness.Shard
		from string
		err  string
	}{
		{"given", "2/4", nil, harness.Shard{I: 2, N: 4}, "", ""},
		{"slurm count", "auto", map[string]string{slurmTaskID: "3", slurmCount: "4"}, harness.Shard{I: 3, N: 4}, "SLURM_ARRAY_TASK_ID=3 of SLURM_ARRAY_TASK_COUNT=4", ""},
		{"slurm from 1", "auto", map[string]string{slurmTaskID: "1", slurmCount: "4", slurmMin: "1", slurmMax: "4"}, harness.Shard{I: 0, N: 4}, "SLURM_ARRAY_TASK_ID=1 of SLURM_ARRAY_TASK_MIN=1 to SLURM_ARRAY_TASK_MAX=4", ""},
		{"slurm min max only", "auto", map[string]string{slurmTaskID: "12", slurmMin: "10", slurmMax: "13"}, harness.Shard{I: 2, N: 4}, "SLURM_ARRAY_TASK_ID=12 of SLURM_ARRAY_TASK_MIN=10 to SLURM_ARRAY_TASK_MAX=13", ""},
		{"slurm step", "auto", map[string]string{slurmTaskID: "4", slurmCount: "3", slurmMin: "0", slurmMax: "4", slurmStep: "2"}, harness.Shard{I: 2, N: 3}, "SLURM_ARRAY_TASK_ID=4 of SLURM_ARRAY_TASK_MIN=0 to SLURM_ARRAY_TASK_MAX=4", ""},
		{"slurm agrees with N", "auto/2", map[string]string{slurmTaskID: "1", slurmCount: "2"}, harness.Shard{I: 1, N: 2}, "SLURM_ARRAY_TASK_ID=1 of SLURM_ARRAY_TASK_COUNT=2", ""},
		{"slurm count from N", "auto/3", map[string]string{slurmTaskID: "2"}, harness.Shard{I: 2, N: 3}, "SLURM_ARRAY_TASK_ID=2", ""},
		{"indexed job", "auto/4", map[string]string{k8sIndex: "3"}, harness.Shard{I: 3, N: 4}, "JOB_COMPLETION_INDEX=3", ""},

		{"neither", "auto", map[string]string{"HOME": "/root"}, harness.Shard{}, "",
			"--shard auto: found neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); run it as an array task or an indexed pod, or give --shard i/n"},
		{"slurm job no array", "auto", map[string]string{slurmJobID: "77"}, harness.Shard{}, "",
			"--shard auto: found SLURM_JOB_ID=77 but no SLURM_ARRAY_TASK_ID; submit the script as an array (sbatch --array=0-3), or give --shard i/n"},
		{"both", "auto/4", map[string]string{slurmTaskID: "1", slurmCount: "4", k8sIndex: "1"}, harness.Shard{}, "",
			"--shard auto/4: found both SLURM_ARRAY_TASK_ID=1 (Slurm) and JOB_COMPLETION_INDEX=1 (Kubernetes); expected the variables of one scheduler"},
		{"bad auto", "auto/0", map[string]string{k8sIndex: "1"}, harness.Shard{}, "",
			"--shard auto/0: expected auto, or auto/N with N the number of shards (at least 1)"},
		{"bad auto word", "auto/x", nil, harness.Shard{}, "",
			"--shard auto/x: expected auto, or auto/N with N the number of shards (at least 1)"},
		{"slurm id not a number", "auto", map[string]string{slurmTaskID: "two", slurmCount: "4"}, harness.Shard{}, "",
			`--shard auto: found SLURM_ARRAY_TASK_ID="two"; expected a whole number of at least 0`},
		{"slurm count zero", "auto", map[string]string{slurmTaskID: "0", slurmCount: "0"}, harness.Shard{}, "",
			`--shard auto: found SLURM_ARRAY_TASK_COUNT="0"; expected a whole number of at least 1`},
		{"slurm no count", "auto", map[string]string{slurmTaskID: "2"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_ID=2 but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX; give the count as --shard auto/N"},
		{"slurm past count", "auto", map[string]string{slurmTaskID: "4", slurmCount: "4"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_ID=4 of SLURM_ARRAY_TASK_COUNT=4, past the array's 4 tasks from 0 in steps of 1; submit the array as a range (--array=0-3)"},
		{"slurm below min", "auto", map[string]string{slurmTaskID: "0", slurmMin: "1", slurmMax: "4"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_ID=0 of SLURM_ARRAY_TASK_MIN=1 to SLURM_ARRAY_TASK_MAX=4, past the array's 4 tasks from 1 in steps of 1; submit the array as a range (--array=0-3)"},
		{"slurm off step", "auto", map[string]string{slurmTaskID: "3", slurmMin: "0", slurmMax: "4", slurmStep: "2"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_ID=3 of SLURM_ARRAY_TASK_MIN=0 to SLURM_ARRAY_TASK_MAX=4, past the array's 3 tasks from 0 in steps of 2; submit the array as a range (--array=0-2)"},
		{"slurm list", "auto", map[string]string{slurmTaskID: "5", slurmCount: "3", slurmMin: "1", slurmMax: "9"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_COUNT=3 but SLURM_ARRAY_TASK_MIN=1 to SLURM_ARRAY_TASK_MAX=9 (step 1) spans 9 tasks; submit the array as a range (--array=0-2)"},
		{"slurm max below min", "auto", map[string]string{slurmTaskID: "5", slurmMin: "6", slurmMax: "2"}, harness.Shard{}, "",
			"--shard auto: found SLURM_ARRAY_TASK_MAX=2 below SLURM_ARRAY_TASK_MIN=6"},
		{"slurm disagrees with N", "auto/8", map[string]string{slurmTaskID: "1", slurmCount: "4"}, harness.Shard{}, "",
			"--shard auto/8: found SLURM_ARRAY_TASK_ID=1 of SLURM_ARRAY_TASK_COUNT=4, an array of 4 tasks, but auto/8 asks for 8 shards; make them agree"},
		{"indexed job no count", "auto", map[string]string{k8sIndex: "2"}, harness.Shard{}, "",
			"--shard auto: found JOB_COMPLETION_INDEX=2 but no shard count; give the Job's completions as --shard auto/N"},
		{"indexed job past count", "auto/4", map[string]string{k8sIndex: "4"}, harness.Shard{}, "",
			"--shard auto/4: found JOB_COMPLETION_INDEX=4, past the 4 shards (0 to 3); keep N equal to the Job's completions"},
		{"indexed job not a number", "auto/4", map[string]string{k8sIndex: "-1"}, harness.Shard{}, "",
			`--shard auto/4: found JOB_COMPLETION_INDEX="-1"; expected a whole number of at least 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, from, err := parseShard(c.arg, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v\nwant  %s", err, c.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error of several lines: %q", err)
				}
				return
			}
			if err != nil || got != c.want || from != c.from {
				t.Errorf("shard %v from %q (%v), want %v from %q", got, from, err, c.want, c.from)
			}
		})
	}
}

// TestShardEndpoints spreads a pool of hosts over the shards so that no
// two shards share one, and lets a server of the shard's own win.
func TestShardEndpoints(t *testing.T) {
	pool := []string{"http://h0:1", "http://h1:1", "http://h2:1", "http://h3:1", "http://h4:1"}
	withPool := &results.Config{Models: []results.ModelEntry{{Name: "fakemodel:1b"}}, Ollama: results.OllamaConfig{Hosts: pool}}
	builtins := &results.Config{Models: []results.ModelEntry{{Name: "builtin:oracle"}}, Ollama: results.OllamaConfig{Hosts: pool}}
	for _, c := range []struct {
		name    string
		cfg     *results.Config
		shard   harness.Shard
		ollama  string
		want    []string
		wantErr string
	}{
		{"unsharded keeps the pool", withPool, harness.Shard{}, "", nil, ""},
		{"shard 0 of 2", withPool, harness.Shard{I: 0, N: 2}, "", []string{"http://h0:1", "http://h2:1", "http://h4:1"}, ""},
		{"shard 1 of 2", withPool, harness.Shard{I: 1, N: 2}, "", []string{"http://h1:1", "http://h3:1"}, ""},
		{"shard 4 of 5", withPool, harness.Shard{I: 4, N: 5}, "", []string{"http://h4:1"}, ""},
		{"own server wins", withPool, harness.Shard{I: 1, N: 8}, "http://127.0.0.1:4321", []string{"http://127.0.0.1:4321"}, ""},
		{"one host for two shards", &results.Config{Models: withPool.Models, Ollama: results.OllamaConfig{Hosts: pool[:1]}}, harness.Shard{I: 0, N: 2}, "", nil,
			"ollama.hosts lists 1 host for 2 shards: two shards would share a host; list at least 2, or start a server beside each shard and give it with --ollama (docs/slurm.md)"},
		{"no Ollama model", builtins, harness.Shard{I: 6, N: 8}, "", nil, ""},
		{"fewer hosts than shards", withPool, harness.Shard{I: 6, N: 8}, "", nil,
			"ollama.hosts lists 5 hosts for 8 shards: two shards would share a host; list at least 8, or start a server beside each shard and give it with --ollama (docs/slurm.md)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := shardEndpoints(c.cfg, c.shard, c.ollama, "")
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v\nwant  %s", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(e.OllamaHosts, c.want) {
				t.Errorf("hosts %v (%v), want %v", e.OllamaHosts, err, c.want)
			}
		})
	}
	// Every host of the pool serves exactly one of the shards.
	for n := 1; n <= len(pool); n++ {
		seen := map[string]int{}
		for i := range n {
			e, err := shardEndpoints(withPool, harness.Shard{I: i, N: n}, "", "")
			if err != nil {
				t.Fatal(err)
			}
			hosts := e.OllamaHosts
			if n == 1 {
				hosts = pool
			}
			for _, h := range hosts {
				seen[h]++
			}
		}
		for _, h := range pool {
			if seen[h] != 1 {
				t.Errorf("%d shards: host %s serves %d shards", n, h, seen[h])
			}
		}
	}
}

// TestEndpointsLeaveTheConfigAsWritten: a shard served apart (its own
// server, its share of the pool) keeps the config hash of the others, so
// that they merge, and serves its models where the endpoints say.
func TestEndpointsLeaveTheConfigAsWritten(t *testing.T) {
	cfg := &results.Config{Name: "endpoints", Models: []results.ModelEntry{{Name: "fakemodel:1b"}, {Name: "served", Backend: "openai", BaseURL: "http://far:8000/v1", Model: "m"}},
		Ollama: results.OllamaConfig{Host: "http://127.0.0.1:11434"}}
	hash := harness.ConfigHash(cfg)
	e := results.Endpoints{OllamaHosts: []string{"http://127.0.0.1:40001"}, BaseURL: "http://127.0.0.1:40002/v1"}
	served := e.Apply(cfg)
	if harness.ConfigHash(cfg) != hash || cfg.Ollama.Host != "http://127.0.0.1:11434" || cfg.Models[1].BaseURL != "http://far:8000/v1" {
		t.Errorf("Apply changed the config: %+v", cfg)
	}
	if !slices.Equal(served.HostList(), e.OllamaHosts) || served.Models[1].BaseURL != e.BaseURL || served.Models[0].BaseURL != "" {
		t.Errorf("served at %v, models %+v", served.HostList(), served.Models)
	}
	if (results.Endpoints{}).Apply(cfg) != cfg {
		t.Error("no endpoints copied the config")
	}
}

// TestRunShardAuto runs granite run --shard auto as a Slurm array task
// would, and checks the one-line refusals outside a scheduler, of a pool
// too small for the shards and of a merge with an unfinished shard.
func TestRunShardAuto(t *testing.T) {
	for _, k := range []string{slurmTaskID, slurmCount, slurmMin, slurmMax, slurmStep, slurmJobID, k8sIndex} {
		t.Setenv(k, "")
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	first := spec.Domains[0].Name
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool.yaml")
	if err := os.WriteFile(pool, []byte("name: pool\nmodels: [fakemodel:1b]\nollama:\n  hosts: [http://127.0.0.1:1, http://127.0.0.1:2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
	expect := func(code int, stderr string, args ...string) string {
		t.Helper()
		got, out, errb := call(args...)
		if got != code || !strings.Contains(errb, stderr) {
			t.Errorf("granite %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant stderr ∋ %q", strings.Join(args, " "), got, code, out, errb, stderr)
		}
		return out
	}
	expect(2, "granite run: --shard auto: found neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); run it as an array task or an indexed pod, or give --shard i/n\n",
		"run", "--shard", "auto", "--domains", first, "--out", filepath.Join(dir, "none"))
	if _, err := os.Stat(filepath.Join(dir, "none")); err == nil {
		t.Error("a refused --shard auto made its --out folder")
	}
	expect(2, `--ollama: found "127.0.0.1:11434"; expected a URL like http://127.0.0.1:11434`,
		"run", "--ollama", "127.0.0.1:11434", "--domains", first, "--out", filepath.Join(dir, "none"))
	expect(2, "ollama.hosts lists 2 hosts for 3 shards: two shards would share a host",
		"run", "--config", pool, "--shard", "2/3", "--out", filepath.Join(dir, "none"))

	t.Setenv(slurmTaskID, "2")
	t.Setenv(slurmMin, "1")
	t.Setenv(slurmMax, "2")
	shard := filepath.Join(dir, "shard-2")
	out := expect(0, "shard 1/2 from SLURM_ARRAY_TASK_ID=2 of SLURM_ARRAY_TASK_MIN=1 to SLURM_ARRAY_TASK_MAX=2\n",
		"run", "--shard", "auto", "--resume", "--domains", first, "--out", shard)
	if !strings.Contains(out, " trials in shard 1/2: ") {
		t.Errorf("run as task 2 of 1-2: %s", out)
	}
	// Cut the shard's journal to one record: the merge names it.
	journal := filepath.Join(shard, results.TrialsFile)
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(journal, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(1, "granite merge: "+shard+" (shard 1/2) did not finish: it holds 1 of its ",
		"merge", "--out", filepath.Join(dir, "merged"), shard)
	expect(0, "", "run", "--shard", "auto", "--resume", "--domains", first, "--out", shard)
	out = expect(0, "", "merge", "--out", filepath.Join(dir, "merged"), shard)
	if !strings.Contains(out, "merged shards 1/2: ") || !strings.Contains(out, "trials of the grid are in no shard") {
		t.Errorf("merge of shard 1/2 alone: %s", out)
	}
}
