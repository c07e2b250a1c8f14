// Command granite is the user-facing CLI: it lists the generated domains,
// validates specs and serves any domain at any granularity level over MCP.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgranite/granite/internal/sandbox"
)

// command is one subcommand. Its run returns nil, or an error that exit
// prints and turns into the exit status: a *usageError 2, an exitStatus
// itself, any other 1.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"list", "list domains and their tools per level", runList},
	{"validate", "validate domain specs and report every error with its position", runValidate},
	{"verify", "execute every scenario's gold calls at every level and check the expectations", runVerify},
	{"run", "run an experiment (models or built-in agents x domains x levels x scenarios)", runRun},
	{"merge", "combine the output folders of a sharded run", runMerge},
	{"power", "probe what this node can measure (GPU energy, Jetson rails, RAPL) and sample it", runPower},
	{"report", "write the report (tables, statistics, plots) of a results folder", runReport},
	{"synth", "synthesize scenarios from tool specs (offline, or an Ollama model); 'synth promote' turns artifacts into scenarios", runSynth},
	{"judge", "check and judge synthesized scenarios", runJudge},
	{"serve", "serve one domain at one level over MCP (stdio or streamable HTTP)", runServe},
	{"advise", "race candidate interfaces of a domain or any MCP server for the models given, and say which to publish", runAdvise},
	{"regroup", "regroup any MCP server's tools into L3, L2 and L1 (show, or --suggest a groups file)", runRegroup},
	{"score", "score a session granite serve --record recorded, as a trial record", runScore},
	{"import", "import the paper's reference implementation's scenarios (as artifacts) or runs (as results, re-scored)", runImport},
	{"view", "serve a local web page over results folders: progress, trials, explained verdicts", runView},
	{"version", "print the version, commit, platform, build tags, meters and specs hash", runVersion},
}

func main() {
	sandbox.CloseInherited()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return exit(stderr, c.name, c.run(ctx, args[1:], stdout, stderr))
		}
	}
	fmt.Fprintf(stderr, "granite: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "granite builds and evaluates MCP tool interfaces at four granularity levels.")
	fmt.Fprintln(w, "\nUsage: granite <command> [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'granite <command> -h' for a command's flags.")
}
