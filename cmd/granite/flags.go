package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgranite/granite/internal/models/ollama"
)

// This file holds what every command's flags share: the flag set, its
// parsing into a usageError, and the flags that mean the same wherever
// they appear (--ollama and --specs here; the tool sources in
// toolsources.go).

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

// parse parses flags. It returns flag.ErrHelp for -h (exit 0), a
// usageError for bad flags (which the flag package has printed, with the
// usage) or a stray argument (exit 2), and nil when the command goes on.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return &usageError{}
	}
	if fs.NArg() > 0 {
		return &usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), usage: fs.Usage}
	}
	return nil
}

// withUsage is a usageError saying err, then the command's usage.
func withUsage(fs *flag.FlagSet, err error) error {
	return &usageError{err: err, usage: fs.Usage}
}

// addOllamaFlag defines --ollama, the Ollama host of a command whose
// --model is an Ollama model; ollama.ResolveHost reads its value.
func addOllamaFlag(fs *flag.FlagSet) *string {
	return fs.String("ollama", "", "Ollama base URL (default: $OLLAMA_HOST or "+ollama.DefaultHost+")")
}

// addSpecsFlag defines --specs, the specs folder validate and verify
// read instead of the embedded specs; loadSpecs reads its value.
func addSpecsFlag(fs *flag.FlagSet) *string {
	return fs.String("specs", "", "folder holding the schemas and <domain>/{domain,scenarios}.yaml (default: the embedded specs)")
}

// leadingFile takes a file named before the flags (granite judge FILE
// --flags), so that flag parsing sees only flags.
func leadingFile(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}
