package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/progress"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// toolSource is where synth and judge take their tools from.
type toolSource struct {
	domain, level *string
	*serverFlags
}

func addToolSource(fset *flag.FlagSet) *toolSource {
	return &toolSource{
		domain:      fset.String("domain", "", "a generated domain"),
		level:       fset.String("level", "L4", "its granularity level"),
		serverFlags: addServerFlags(fset, "", true),
	}
}

func (s *toolSource) given() bool {
	return *s.domain != "" || *s.tools != "" || s.live()
}

// load lists the tools; for a generated domain it also returns an executor
// that grounds calls on a fresh store. code is the exit code on error.
func (s *toolSource) load(ctx context.Context, cmd string, stderr io.Writer) (tools []scenarios.Tool, source string, exec func([]scenarios.ExpectedCall) []scenarios.MockOutput, code int) {
	var listed []toolsrc.Tool
	opts, err := s.options()
	if err != nil {
		return nil, "", nil, fail(stderr, cmd, 2, err)
	}
	switch {
	case *s.domain != "":
		d, ok := gen.Lookup(*s.domain)
		if !ok {
			return nil, "", nil, fail(stderr, cmd, 2, fmt.Errorf("unknown domain %q: want one of %s", *s.domain, domainNames()))
		}
		level, lerr := level.Parse(*s.level)
		if lerr != nil {
			return nil, "", nil, fail(stderr, cmd, 2, fmt.Errorf("--level: %v", lerr))
		}
		return scenarios.FromDomain(d, level), "domain:" + d.Name + "/" + string(level), scenarios.Executor(d, level), 0
	case *s.tools != "":
		listed, err = toolsrc.LoadTools(*s.tools)
		source = "tools:" + *s.tools
	case s.live():
		listed, err = toolsrc.FromMCP(ctx, *s.mcpCmd, *s.mcpURL, opts...)
		source = "mcp:" + *s.mcpCmd + *s.mcpURL
	default:
		return nil, "", nil, fail(stderr, cmd, 2, errors.New("give --domain, --tools, --mcp-cmd or --mcp-url"))
	}
	if err != nil {
		return nil, "", nil, fail(stderr, cmd, 1, err)
	}
	return scenarios.Listed(listed), source, nil, 0
}

// errNoOllama marks connectLLM's errors that say no Ollama answers, which
// synth's --fallback offline forgives; a missing model it does not.
var errNoOllama = errors.New("no Ollama")

// connectLLM returns the Ollama model, or an error in one line saying
// why there is none: nothing listening, a server that is not Ollama
// (whose page is not dumped), or an Ollama without the model, with the
// hint run gives (ollama pull M).
func connectLLM(ctx context.Context, host, model string) (*scenarios.LLM, error) {
	if host == "" {
		host = os.Getenv("OLLAMA_HOST")
	}
	if host == "" {
		host = "http://127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := probeOllama(pctx, host); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errNoOllama, host, err)
	}
	llm, err := scenarios.NewLLM(host, model, nil)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %s", errNoOllama, host, oneLine(err.Error()))
	}
	if err := llm.Client.Check(pctx, []string{model}); err != nil {
		return nil, err
	}
	return llm, nil
}

// probeOllama asks /api/version, which every Ollama answers with
// {"version": ...}; anything else is named by its status and content type.
func probeOllama(ctx context.Context, host string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/api/version", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("%s", oneLine(err.Error()))
	}
	defer res.Body.Close()
	var v struct {
		Version string `json:"version"`
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Version == "" {
		return fmt.Errorf("a server answered /api/version with HTTP %d (%s), not Ollama's {\"version\": ...}; is --ollama the right address?", res.StatusCode, orNone(res.Header.Get("Content-Type")))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// oneLine keeps the first line of a message, shortened.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return strings.TrimSpace(s)
}

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "promote" {
		return runPromote(ctx, args[1:], stdout, stderr)
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
	host := fset.String("ollama", "", "Ollama base URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
	out := fset.String("out", "", "output file (default: standard output); missing folders are created")
	fallback := fset.String("fallback", "", "with --model: \"offline\" to use the offline backend when no Ollama answers (default: an error)")
	if code, ok := parse(fset, args); !ok {
		return code
	}
	if *fallback != "" && *fallback != "offline" {
		return fail(stderr, "synth", 2, fmt.Errorf("--fallback %q: want offline", *fallback))
	}
	all, source, exec, code := src.load(ctx, "synth", stderr)
	if code != 0 {
		return code
	}
	// A tool no valid call fits is left out with why, not the whole source.
	tools, skipped := scenarios.Usable(source, all)
	for _, sk := range skipped {
		fmt.Fprintf(stderr, "granite synth: warning: skipping tool %q: %s\n", sk.Tool, oneline.Escape(sk.Why))
	}
	if len(tools) == 0 {
		return fail(stderr, "synth", 1, fmt.Errorf("none of the %d tools of %s is usable", len(all), source))
	}
	backend := "offline"
	var arts []scenarios.Artifact
	shortfall := ""
	if *model != "" {
		llm, err := connectLLM(ctx, *host, *model)
		switch {
		case errors.Is(err, errNoOllama) && *fallback == "offline":
			fmt.Fprintf(stderr, "granite synth: %v; using the offline backend (--fallback offline)\n", err)
		case errors.Is(err, errNoOllama):
			return fail(stderr, "synth", 1, fmt.Errorf("%w; start Ollama, give --ollama URL, or pass --fallback offline", err))
		case err != nil:
			return fail(stderr, "synth", 1, err)
		default:
			n := *count
			if n <= 0 {
				n = 10
			}
			llm.Progress = progress.New(stderr, isTerminal(stderr), len(tools)+n, 0, "steps (tools enriched, scenarios kept)")
			res, err := llm.Synthesize(ctx, source, tools, n, exec)
			llm.Progress.Finish()
			if err != nil {
				return fail(stderr, "synth", 1, err)
			}
			arts, backend = res.Artifacts, "ollama "+*model
			fmt.Fprintf(stderr, "%d replies failed validation and were retried, %d scenarios discarded after %d retries, %d multi-turn expansions dropped for one turn, %d scenarios past --count left out for using no unused tool\n",
				res.Retried, res.Discarded, scenarios.Retries, res.SingleTurn, res.NoNewTool)
		}
	}
	if arts == nil {
		res, err := scenarios.OfflineReport(source, tools, *count)
		if err != nil {
			return fail(stderr, "synth", 1, err)
		}
		arts, shortfall = res.Artifacts, res.Shortfall()
	}
	if err := writeSynth(*out, stdout, tools, arts); err != nil {
		return fail(stderr, "synth", 1, err)
	}
	cov := scenarios.Measure(tools, arts)
	fmt.Fprintf(stderr, "%d scenarios from %s (%s backend): %d of %d tools used, %d skipped, %d of %d expected calls fit their tool's schema\n",
		len(arts), source, backend, cov.Used, len(all), len(skipped), cov.ValidCalls, cov.Calls)
	if shortfall != "" {
		fmt.Fprintf(stderr, "fewer than --count: %s\n", oneline.Escape(shortfall))
	}
	return 0
}

// writeSynth writes the artifacts to out (standard output when empty) and,
// beside a file, the tools they were made from, which judge and run read.
func writeSynth(out string, stdout io.Writer, tools []scenarios.Tool, arts []scenarios.Artifact) error {
	if out == "" {
		return scenarios.WriteArtifacts(stdout, arts)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := scenarios.WriteArtifacts(f, arts); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return toolsrc.WriteTools(scenarios.ToolsFile(out), scenarios.Sources(tools))
}

// leadingFile takes a file named before the flags (granite judge FILE
// --flags), so that flag parsing sees only flags.
func leadingFile(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}
