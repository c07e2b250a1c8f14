package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
)

// The scheduler variables --shard auto reads.
const (
	slurmTaskID  = "SLURM_ARRAY_TASK_ID"
	slurmCount   = "SLURM_ARRAY_TASK_COUNT"
	slurmMin     = "SLURM_ARRAY_TASK_MIN"
	slurmMax     = "SLURM_ARRAY_TASK_MAX"
	slurmStep    = "SLURM_ARRAY_TASK_STEP"
	slurmJobID   = "SLURM_JOB_ID"
	k8sIndex     = "JOB_COMPLETION_INDEX"
	shardAutoArg = "auto"
)

// parseShard reads --shard: i/n as given, or auto (auto/N) from the
// scheduler's environment, which getenv reads. It also says where an
// automatic shard came from, for the run's first line.
func parseShard(arg string, getenv func(string) string) (harness.Shard, string, error) {
	if arg != shardAutoArg && !strings.HasPrefix(arg, shardAutoArg+"/") {
		s, err := harness.ParseShard(arg)
		return s, "", err
	}
	given := 0
	if n, ok := strings.CutPrefix(arg, shardAutoArg+"/"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return harness.Shard{}, "", fmt.Errorf("--shard %s: expected auto, or auto/N with N the number of shards (at least 1)", arg)
		}
		given = v
	}
	slurm, k8s := getenv(slurmTaskID), getenv(k8sIndex)
	switch {
	case slurm != "" && k8s != "":
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found both %s=%s (Slurm) and %s=%s (Kubernetes); expected the variables of one scheduler", arg, slurmTaskID, slurm, k8sIndex, k8s)
	case slurm != "":
		return slurmShard(arg, given, getenv)
	case k8s != "":
		return indexedJobShard(arg, given, k8s)
	case getenv(slurmJobID) != "":
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%s but no %s; submit the script as an array (sbatch --array=0-3), or give --shard i/n", arg, slurmJobID, getenv(slurmJobID), slurmTaskID)
	}
	return harness.Shard{}, "", fmt.Errorf("--shard %s: found neither %s (a Slurm job array) nor %s (a Kubernetes Indexed Job); run it as an array task or an indexed pod, or give --shard i/n", arg, slurmTaskID, k8sIndex)
}

// slurmShard maps an array task to a shard. Task ids need not start at
// 0 (--array=1-4) and may step (--array=0-6:2): the shard is the task's
// place in the array. The count is SLURM_ARRAY_TASK_COUNT, or the span of
// the array's min and max when Slurm gives no count; an array given as a
// list (--array=1,5,9) has a count its span disagrees with, and is
// refused rather than sharded with holes.
func slurmShard(arg string, given int, getenv func(string) string) (harness.Shard, string, error) {
	v := map[string]int{}
	for _, c := range []struct {
		name  string
		least int
	}{{slurmTaskID, 0}, {slurmCount, 1}, {slurmMin, 0}, {slurmMax, 0}, {slurmStep, 1}} {
		s := getenv(c.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < c.least {
			return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%q; expected a whole number of at least %d", arg, c.name, s, c.least)
		}
		v[c.name] = n
	}
	has := func(name string) bool { _, ok := v[name]; return ok }
	// Without a min the ids are taken to start at 0, sbatch's default.
	id, count, lo, step := v[slurmTaskID], v[slurmCount], v[slurmMin], max(v[slurmStep], 1)
	found := fmt.Sprintf("%s=%d", slurmTaskID, id)
	switch hi := v[slurmMax]; {
	case has(slurmMin) && has(slurmMax):
		if hi < lo {
			return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%d below %s=%d", arg, slurmMax, hi, slurmMin, lo)
		}
		span := (hi-lo)/step + 1
		if has(slurmCount) && count != span {
			return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%d but %s=%d to %s=%d (step %d) spans %d tasks; submit the array as a range (--array=0-%d)", arg, slurmCount, count, slurmMin, lo, slurmMax, hi, step, span, count-1)
		}
		count = span
		found += fmt.Sprintf(" of %s=%d to %s=%d", slurmMin, lo, slurmMax, hi)
	case has(slurmCount):
		found += fmt.Sprintf(" of %s=%d", slurmCount, count)
	case given > 0:
		count = given
	default:
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%d but neither %s nor %s and %s; give the count as --shard auto/N", arg, slurmTaskID, id, slurmCount, slurmMin, slurmMax)
	}
	if given > 0 && given != count {
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s, an array of %d tasks, but auto/%d asks for %d shards; make them agree", arg, found, count, given, given)
	}
	if id < lo || (id-lo)%step != 0 || (id-lo)/step >= count {
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s, past the array's %d tasks from %d in steps of %d; submit the array as a range (--array=0-%d)", arg, found, count, lo, step, count-1)
	}
	return harness.Shard{I: (id - lo) / step, N: count}, found, nil
}

// indexedJobShard maps a Kubernetes Indexed Job's pod to a shard. The
// pod's environment holds its index but not the Job's completions, so the
// count is --shard auto/N's.
func indexedJobShard(arg string, given int, index string) (harness.Shard, string, error) {
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%q; expected a whole number of at least 0", arg, k8sIndex, index)
	}
	if given == 0 {
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%d but no shard count; give the Job's completions as --shard auto/N", arg, k8sIndex, i)
	}
	if i >= given {
		return harness.Shard{}, "", fmt.Errorf("--shard %s: found %s=%d, past the %d shards (0 to %d); keep N equal to the Job's completions", arg, k8sIndex, i, given, given-1)
	}
	return harness.Shard{I: i, N: given}, fmt.Sprintf("%s=%d", k8sIndex, i), nil
}

// shardEndpoints says where this shard's models are served. --ollama
// (one server, typically started beside the shard on its node) replaces
// the config's hosts, and --base-url every OpenAI-compatible entry's
// endpoint. Otherwise a pool in ollama.hosts is spread over the shards:
// shard i of n takes the hosts whose place j in the list has j mod n = i,
// so that no two shards ever send trials to one host, and a run of fewer
// hosts than shards is refused. A single ollama.host is left alone: it
// is the same address on every node (localhost), a server of each
// shard's own.
func shardEndpoints(cfg *results.Config, s harness.Shard, ollamaURL, baseURL string) (results.Endpoints, error) {
	e := results.Endpoints{BaseURL: baseURL}
	if ollamaURL != "" {
		e.OllamaHosts = []string{ollamaURL}
		return e, nil
	}
	pool := cfg.Ollama.Hosts
	if s.N <= 1 || len(pool) == 0 || !usesOllama(cfg) {
		return e, nil
	}
	if len(pool) < s.N {
		hosts := fmt.Sprintf("%d hosts", len(pool))
		if len(pool) == 1 {
			hosts = "1 host"
		}
		return e, fmt.Errorf("ollama.hosts lists %s for %d shards: two shards would share a host; list at least %d, or start a server beside each shard and give it with --ollama (docs/slurm.md)", hosts, s.N, s.N)
	}
	for j, h := range pool {
		if j%s.N == s.I {
			e.OllamaHosts = append(e.OllamaHosts, h)
		}
	}
	return e, nil
}

// usesOllama reports whether any of the config's models is an Ollama one.
func usesOllama(cfg *results.Config) bool {
	for _, m := range cfg.Models {
		if agent.For(m).Name() == agent.BackendOllama {
			return true
		}
	}
	return false
}
