package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/live"
	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/specs"
)

// maxMetricsConns bounds the connections --metrics-addr holds open at
// once; a Prometheus server scrapes over one.
const maxMetricsConns = 16

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("run", "[--config FILE] [--out DIR] [--resume] [--shard i/n | auto] [--ollama URL] [--models a,b] [--domains a,b | --artifacts FILE.jsonl]",
		"Runs an experiment: every model x domain x level x scenario x repetition of the config,\n"+
			"each trial on a fresh store behind a fresh MCP server, appending each finished trial to\n"+
			"<out>/trials.jsonl. --config takes a file or the name of an embedded config (smoke, paper).\n"+
			"With --artifacts, every model x artifact x repetition instead: each synthesized artifact\n"+
			"is played on a replay server answering its expected calls with its recorded outputs, and\n"+
			"scored by its assertions (default output: results/<artifacts file name>). Artifacts of\n"+
			"reference scenarios (granite import scenarios) are played at their own levels on a fresh\n"+
			"process of --mcp-cmd's level server per trial (see docs/artifacts-reference.md).", stderr)
	config := fset.String("config", "smoke", "experiment config: a YAML file, or smoke / paper (embedded)")
	out := fset.String("out", "", "output folder (default: the config's output, results/<name>)")
	resume := fset.Bool("resume", false, "continue a run in --out, skipping trials already recorded")
	shard := fset.String("shard", "", "run only shard i of n (i/n, 0-based); auto: the Slurm array task's (SLURM_ARRAY_TASK_ID), or auto/N: the Kubernetes Indexed Job pod's (JOB_COMPLETION_INDEX) of N (see docs/slurm.md)")
	ollamaURL := fset.String("ollama", "", "serve this run's Ollama models from this server instead of ollama.host / ollama.hosts, e.g. one started beside the shard; where models are served is not part of the config hash, so shards served apart still merge")
	baseURL := fset.String("base-url", "", "serve this run's OpenAI-compatible models from this endpoint (…/v1) instead of their base_url, e.g. a vllm serve beside the shard")
	models := fset.String("models", "", "only these models of the config (comma-separated)")
	domains := fset.String("domains", "", "only these domains of the config (comma-separated)")
	artifacts := fset.String("artifacts", "", "play these granite synth artifacts (JSONL) on replay servers instead of the config's scenarios; models, repetitions and options stay the config's")
	artifactTools := fset.String("artifact-tools", "", "the artifacts' tools/list file (default: the .tools.json beside them, or the generated domain's tools)")
	interfaces := fset.String("interfaces", "", "play these interfaces instead of the config's granularities and interfaces: names joined by commas (L4,L3-terse,L4-atomic) or a family (paper: L4-atomic,L3-composite,L2-composite,L1-composite)")
	levels := fset.String("levels", "", "with --artifacts: play each artifact at these levels (e.g. L4,L3,L2,L1), its tools regrouped (see granite regroup); artifacts of reference scenarios: only those at these levels")
	groups := fset.String("groups", "", "with --levels: a groups file saying which tools share a coarse tool (default: derived)")
	artifactCmd := fset.String("mcp-cmd", "", "with --artifacts: play on this live MCP server command, started afresh for every trial, instead of replay servers; for artifacts of reference scenarios (granite import scenarios), a template naming each one's level server with {{.Domain}}, {{.Level}} (L4…L1) and {{.Granularity}} (primitive, composite_4, composite_2, composite_1)")
	artifactURL := fset.String("mcp-url", "", "with --artifacts: play on this live MCP streamable HTTP endpoint instead of replay servers")
	isolation := fset.String("isolation", agent.IsolationAuto, "how agent commands are contained: auto (namespaces of their own where the kernel allows, else a process group, said at start and in run.json), namespaces (or refuse to start), none")
	metricsAddr := fset.String("metrics-addr", "", "serve live Prometheus metrics (power, energy, utilisation, progress) at this address, e.g. 127.0.0.1:9400")
	if err := parse(fset, args); err != nil {
		return err
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		return err
	}
	cfg, err := harness.LoadConfig(*config, spec)
	if err != nil {
		return badUsage(err)
	}
	opts := harness.Options{Out: *out, Resume: *resume, Progress: stderr, Lookup: gen.Lookup, Terminal: isTerminal(stderr), Isolation: *isolation}
	if *shard != "" {
		var from string
		if opts.Shard, from, err = parseShard(*shard, os.Getenv); err != nil {
			return badUsage(err)
		}
		if from != "" {
			fmt.Fprintf(stderr, "shard %s from %s\n", opts.Shard, from)
		}
	}
	for _, f := range []struct{ name, v string }{{"ollama", *ollamaURL}, {"base-url", *baseURL}} {
		if u, err := url.Parse(f.v); f.v != "" && (err != nil || u.Scheme == "" || u.Host == "") {
			return usagef("--%s: found %q; expected a URL like http://127.0.0.1:11434", f.name, f.v)
		}
	}
	if *interfaces != "" {
		played, err := surface.ParseList(*interfaces)
		if err != nil {
			return usagef("--interfaces: %v", err)
		}
		cfg.Granularities, cfg.Interfaces = nil, nil
		for _, s := range played {
			if s.IsIdentity() {
				cfg.Granularities = append(cfg.Granularities, s.Level)
			} else {
				cfg.Interfaces = append(cfg.Interfaces, s)
			}
		}
	}
	if *artifacts != "" {
		if *domains != "" {
			return usagef("--domains and --artifacts exclude each other: an artifact run takes its tools and prompts from the artifacts")
		}
		cfg.Artifacts, cfg.ArtifactTools = *artifacts, *artifactTools
		cfg.Domains, cfg.Scenarios, cfg.Granularities = nil, nil, nil
		cfg.Groups, cfg.ArtifactCmd, cfg.ArtifactURL = *groups, *artifactCmd, *artifactURL
		if *artifactCmd != "" {
			if _, err := reference.ParseCommandTemplate(*artifactCmd); err != nil {
				return usagef("--mcp-cmd: %v", err)
			}
		}
		if *levels != "" {
			for _, l := range strings.Split(*levels, ",") {
				lv, err := level.Parse(l)
				if err != nil {
					return usagef("--levels: %v", err)
				}
				cfg.Granularities = append(cfg.Granularities, lv)
			}
		}
		if *out == "" {
			opts.Out = filepath.Join("results", strings.TrimSuffix(filepath.Base(*artifacts), ".jsonl"))
		}
	} else {
		for _, f := range []struct{ name, v string }{{"artifact-tools", *artifactTools}, {"levels", *levels}, {"groups", *groups}, {"mcp-cmd", *artifactCmd}, {"mcp-url", *artifactURL}} {
			if f.v != "" {
				return usagef("--%s needs --artifacts", f.name)
			}
		}
	}
	var names []string
	if names, err = narrow("models", cfg.ModelNames(), *models); err == nil {
		// The entries named, in the order named, with their settings.
		kept := make([]results.ModelEntry, 0, len(names))
		for _, n := range names {
			e, _ := cfg.Entry(n)
			kept = append(kept, e)
		}
		cfg.Models = kept
	}
	if err == nil && *domains != "" {
		cfg.Domains, err = narrow("domains", domainsOf(cfg, spec), *domains)
	}
	if err != nil {
		return badUsage(err)
	}
	if opts.Endpoints, err = shardEndpoints(cfg, opts.Shard, *ollamaURL, *baseURL); err != nil {
		return badUsage(err)
	}
	if *metricsAddr != "" {
		metrics := live.New()
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return usagef("--metrics-addr: %v", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler())
		// The metrics port may face the network, and its connections
		// are descriptors the trials' servers and agents need: a few
		// scrapers at once, past which a connection is refused, and none
		// kept idle for long.
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
		go srv.Serve(serve.LimitConns(ln, maxMetricsConns))
		defer srv.Close()
		fmt.Fprintf(stderr, "metrics: http://%s/metrics\n", ln.Addr())
		opts.Live = metrics
	}
	sum, err := harness.Run(ctx, cfg, spec, opts)
	if sum != nil {
		fmt.Fprintf(stdout, "%d trials in shard %s: %d run now, %d recorded before, in %s\n", sum.Planned, opts.Shard, sum.Ran, sum.Resumed, sum.Duration.Round(1e6))
		var ms []string
		for m := range sum.TC {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		for _, m := range ms {
			fmt.Fprintf(stdout, "  %-40s mean TC %.3f\n", oneline.Escape(m), sum.TC[m])
		}
		fmt.Fprintf(stdout, "results: %s/%s\n", sum.Out, results.TrialsFile)
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "granite run: interrupted; finished trials are recorded, continue with --resume\n")
			return exitStatus(130)
		}
		return err
	}
	return nil
}

// narrow keeps the config's entries named in a comma list (all when the
// list is empty) and refuses names the config does not have.
func narrow(what string, have []string, list string) ([]string, error) {
	if list == "" {
		return have, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("--%s: %q is not in the config (it has %s)", what, n, strings.Join(have, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

func domainsOf(cfg *results.Config, spec *speclang.Spec) []string {
	if len(cfg.Domains) > 0 {
		return cfg.Domains
	}
	var out []string
	for _, d := range spec.Domains {
		out = append(out, d.Name)
	}
	return out
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
