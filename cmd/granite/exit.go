package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/speclang"
)

// This file is the one way a command ends: its error printed once
// (fail) and turned into the exit status (exit).

// usageError is a bad flag or argument, for which granite exits 2; any
// other error of a command exits 1.
type usageError struct {
	// err says what was wrong; nil when the flag package has said it.
	err error
	// usage, when set, prints the command's usage after the error.
	usage func()
}

func (e *usageError) Error() string {
	if e.err == nil {
		return "bad usage"
	}
	return e.err.Error()
}

func (e *usageError) Unwrap() error { return e.err }

// usagef is a usageError saying what fmt.Errorf says.
func usagef(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// badUsage marks err, from a check of the flags, as a usageError.
func badUsage(err error) error { return &usageError{err: err} }

// exitStatus ends a command with a status whose reason is on stderr
// already, or needs no saying (verify's failures, run's interruption):
// exit prints nothing more.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// subcommandError is an error of a command's own subcommand (synth
// promote), printed under the subcommand's name.
type subcommandError struct {
	cmd string
	err error
}

func (e *subcommandError) Error() string { return e.err.Error() }
func (e *subcommandError) Unwrap() error { return e.err }

// inSubcommand names cmd as the subcommand whose error err is.
func inSubcommand(cmd string, err error) error {
	if err == nil {
		return nil
	}
	return &subcommandError{cmd: cmd, err: err}
}

// exit prints a command's error the one way granite prints errors (fail)
// and returns the exit status: 0 for none or a help request, 2 for a
// usageError (with the command's usage when it carries it), an
// exitStatus's own, 1 for any other.
func exit(stderr io.Writer, cmd string, err error) int {
	var sub *subcommandError
	if errors.As(err, &sub) {
		cmd, err = sub.cmd, sub.err
	}
	var bad *usageError
	var status exitStatus
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &bad):
		if bad.err != nil {
			fail(stderr, cmd, bad.err)
		}
		if bad.usage != nil {
			bad.usage()
		}
		return 2
	}
	fail(stderr, cmd, err)
	return 1
}

// fail prints err the one way granite prints an error: a positioned error
// list one error a line, then their count; any other error as "granite
// <cmd>: <err>", its text not saying cmd twice when it starts with it
// already (results.Merge's "merge: "). Lines are escaped (escapeLines).
func fail(stderr io.Writer, cmd string, err error) {
	var list speclang.ErrorList
	if errors.As(err, &list) {
		fmt.Fprintln(stderr, escapeLines(list.Error()))
		fmt.Fprintln(stderr, count(len(list), "error"))
		return
	}
	fmt.Fprintf(stderr, "granite %s: %s\n", cmd, escapeLines(strings.TrimPrefix(err.Error(), cmd+": ")))
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
