package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/progress"
	"github.com/mcpgranite/granite/scenarios"
)

// runSynth is granite synth: scenarios synthesized from tool specs, by
// the offline backend or an Ollama model; granite synth promote is
// runPromote.
func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "promote" {
		return inSubcommand("synth promote", runPromote(ctx, args[1:], stdout, stderr))
	}
	fset := newFlags("synth", "(--domain D --level L | --tools FILE | --mcp-cmd CMD | --mcp-url URL) [--model M] [--count N] [--out FILE]",
		"Synthesizes evaluation scenarios from tool specifications. With --model, an Ollama model\n"+
			"writes them under constrained decoding (each call's tool must exist and its arguments fit\n"+
			"its schema; replies are validated, failures fed back, discarded after 3 retries); when no\n"+
			"Ollama answers that is an error, unless --fallback offline. Without --model the offline\n"+
			"backend derives them from the schemas alone: realistic values, chains of calls and\n"+
			"refusals probing each constraint. Tools whose schema no valid call fits are skipped with\n"+
			"a warning.\n"+
			"Tools come from a generated domain (calls are then executed on a fresh store), a\n"+
			"tools/list JSON file, or a live MCP server. Writes one artifact per line\n"+
			"(specs/artifact.schema.json) and, with --out F.jsonl, the tools to F.tools.json, so that\n"+
			"granite judge and granite run --artifacts need no server.", stderr)
	src := addToolSource(fset)
	count := fset.Int("count", 0, "scenarios to write (offline, 0: one round of every variant; with --model, default 10, and more until every tool is used)")
	model := fset.String("model", "", "an Ollama model for the LLM backend (default: the offline backend)")
	host := addOllamaFlag(fset)
	out := fset.String("out", "", "output file (default: standard output); missing folders are created")
	fallback := fset.String("fallback", "", "with --model: \"offline\" to use the offline backend when no Ollama answers (default: an error)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if *fallback != "" && *fallback != "offline" {
		return usagef("--fallback %q: want offline", *fallback)
	}
	all, source, exec, err := src.load(ctx)
	if err != nil {
		return err
	}
	// A tool no valid call fits is left out with why, not the whole source.
	tools, skipped := scenarios.Usable(source, all)
	for _, sk := range skipped {
		fmt.Fprintf(stderr, "granite synth: warning: skipping tool %q: %s\n", sk.Tool, oneline.Escape(sk.Why))
	}
	if len(tools) == 0 {
		return fmt.Errorf("none of the %d tools of %s is usable", len(all), source)
	}
	backend := "offline"
	var arts []scenarios.Artifact
	shortfall := ""
	if *model != "" {
		llm, err := scenarios.DialLLM(ctx, ollama.ResolveHost(*host), *model, nil)
		switch {
		case errors.Is(err, ollama.ErrNoServer) && *fallback == "offline":
			fmt.Fprintf(stderr, "granite synth: %v; using the offline backend (--fallback offline)\n", err)
		case errors.Is(err, ollama.ErrNoServer):
			return fmt.Errorf("%w; start Ollama, give --ollama URL, or pass --fallback offline", err)
		case err != nil:
			return err
		default:
			n := *count
			if n <= 0 {
				n = 10
			}
			llm.Progress = progress.New(stderr, isTerminal(stderr), len(tools)+n, 0, "steps (tools enriched, scenarios kept)")
			res, err := llm.Synthesize(ctx, source, tools, n, exec)
			llm.Progress.Finish()
			if err != nil {
				return err
			}
			arts, backend = res.Artifacts, "ollama "+*model
			fmt.Fprintf(stderr, "%d replies failed validation and were retried, %d scenarios discarded after %d retries, %d multi-turn expansions dropped for one turn, %d scenarios past --count left out for using no unused tool\n",
				res.Retried, res.Discarded, scenarios.Retries, res.SingleTurn, res.NoNewTool)
		}
	}
	if arts == nil {
		res, err := scenarios.OfflineReport(source, tools, *count)
		if err != nil {
			return err
		}
		arts, shortfall = res.Artifacts, res.Shortfall()
	}
	if err := writeSynth(*out, stdout, tools, arts); err != nil {
		return err
	}
	cov := scenarios.Measure(tools, arts)
	fmt.Fprintf(stderr, "%d scenarios from %s (%s backend): %d of %d tools used, %d skipped, %d of %d expected calls fit their tool's schema\n",
		len(arts), source, backend, cov.Used, len(all), len(skipped), cov.ValidCalls, cov.Calls)
	if shortfall != "" {
		fmt.Fprintf(stderr, "fewer than --count: %s\n", oneline.Escape(shortfall))
	}
	return nil
}

// writeSynth writes the artifacts to out (standard output when empty) and,
// beside a file, the tools they were made from, which judge and run read.
func writeSynth(out string, stdout io.Writer, tools []scenarios.Tool, arts []scenarios.Artifact) error {
	if out == "" {
		return scenarios.WriteArtifacts(stdout, arts)
	}
	return scenarios.WriteArtifactsFile(out, tools, arts)
}
