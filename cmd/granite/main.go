// Command granite is the user-facing CLI: it lists the generated domains,
// validates specs and serves any domain at any granularity level over MCP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/sandbox"
	"github.com/mcpgranite/granite/internal/speclang"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
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
			return c.run(ctx, args[1:], stdout, stderr)
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

// newFlags returns a flag set whose errors and help go to stderr and whose
// usage line describes the command.
func newFlags(name, synopsis, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("granite "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: granite %s %s\n\n%s\n\nFlags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; it returns an exit code and false when the command
// should stop (help: 0, bad flags or stray arguments: 2).
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return 2, false
	}
	return 0, true
}

// fail prints err the one way granite prints an error, and returns code,
// the exit status: a positioned error list one error a line, then their
// count; any other error as "granite <cmd>: <err>", its text not saying
// cmd twice when it starts with it already (results.Merge's "merge: ").
func fail(stderr io.Writer, cmd string, code int, err error) int {
	var list speclang.ErrorList
	if errors.As(err, &list) {
		fmt.Fprintln(stderr, escapeLines(list.Error()))
		fmt.Fprintln(stderr, count(len(list), "error"))
		return code
	}
	fmt.Fprintf(stderr, "granite %s: %s\n", cmd, escapeLines(strings.TrimPrefix(err.Error(), cmd+": ")))
	return code
}

// escapeLines escapes each line of a message (oneline.Escape), keeping
// its line breaks: an error can quote a server, a file or a model, and
// none of their escapes or carriage returns reaches the terminal.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = oneline.Escape(l)
	}
	return strings.Join(lines, "\n")
}
