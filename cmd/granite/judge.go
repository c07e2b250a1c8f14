package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/scenarios"
)

// runJudge is granite judge: deterministic checks of synthesized
// artifacts and, with a model, an LLM judge.
func runJudge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("judge", "FILE.jsonl [--domain D --level L | --tools FILE | --mcp-cmd CMD | --mcp-url URL] [--model M] [--json OUT]",
		"Judges synthesized artifacts against their tools: deterministic checks (tool existence,\n"+
			"schema validity, coverage per tool, Gini of tool use, co-occurring tools, retries) and,\n"+
			"with --model, an Ollama judge (temperature 0, structured output) scoring tool-calling\n"+
			"correctness and coherence, with cascading penalties. Prints a Markdown summary. The tools\n"+
			"default to FILE.tools.json, which granite synth --out writes beside the artifacts.", stderr)
	src := addToolSource(fset)
	model := fset.String("model", "", "an Ollama model to judge with (default: deterministic checks only)")
	host := addOllamaFlag(fset)
	jsonOut := fset.String("json", "", "write the checks and scores as JSON here")
	file, args := leadingFile(args)
	if err := parse(fset, args); err != nil {
		return err
	}
	if file == "" {
		return withUsage(fset, errors.New("give the artifacts file first"))
	}
	if !src.given() {
		// The tools granite synth wrote beside the artifacts.
		*src.tools = scenarios.ToolsFile(file)
	}
	tools, _, _, err := src.load(ctx)
	if err != nil {
		return err
	}
	arts, err := scenarios.ReadArtifacts(file)
	if err != nil {
		return err
	}
	q := scenarios.Check(tools, arts)
	var scores []scenarios.Scores
	failed := 0
	if *model != "" {
		llm, err := scenarios.DialLLM(ctx, ollama.ResolveHost(*host), *model, nil)
		if err != nil {
			return err
		}
		for _, a := range arts {
			s, err := llm.Judge(ctx, tools, a)
			switch {
			case errors.Is(err, scenarios.ErrDiscarded): // the model's replies, not the request, failed
				failed++
				continue
			case err != nil:
				return fmt.Errorf("judging %s: %w", a.ID, err)
			}
			scores = append(scores, s)
		}
	}
	fmt.Fprint(stdout, scenarios.Summary(q, scores, failed))
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"quality": q, "scores": scores, "unjudged": failed}, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
