package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/speclang"
)

// TestExit pins how a command's error becomes the exit status and the
// one message on stderr.
func TestExit(t *testing.T) {
	list := speclang.ErrorList{{Pos: speclang.Pos{File: "x/domain.yaml", Line: 3, Col: 7}, Msg: "found a; expected b"}}
	for _, c := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"no error", nil, 0, ""},
		{"help", flag.ErrHelp, 0, ""},
		{"a usage error", usagef("--level %q: want L4..L1", "L9"), 2, "granite cmd: --level \"L9\": want L4..L1\n"},
		{"a bad flag the flag package said", &usageError{}, 2, ""},
		{"a usage error holding a spec error list", badUsage(list), 2, "x/domain.yaml:3:7: found a; expected b\n1 error\n"},
		{"an exit status said already", exitStatus(130), 130, ""},
		{"a wrapped exit status", fmt.Errorf("verify: %w", exitStatus(1)), 1, ""},
		{"a runtime error", errors.New("open x: no such file"), 1, "granite cmd: open x: no such file\n"},
		{"a runtime error saying the command already", errors.New("cmd: shard 2 given twice"), 1, "granite cmd: shard 2 given twice\n"},
		{"a runtime error with a terminal escape", errors.New("tool \x1b[2Jx"), 1, "granite cmd: tool \\x1b[2Jx\n"},
		{"a subcommand's usage error", inSubcommand("cmd sub", usagef("give --domain")), 2, "granite cmd sub: give --domain\n"},
		{"a subcommand's runtime error", inSubcommand("cmd sub", errors.New("boom")), 1, "granite cmd sub: boom\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := exit(&stderr, "cmd", c.err); code != c.code || stderr.String() != c.stderr {
				t.Errorf("exit(%v) = %d, stderr %q; want %d, %q", c.err, code, stderr.String(), c.code, c.stderr)
			}
		})
	}
}

// TestUsageErrorPrintsUsage: a usage error that carries the command's
// usage prints it after the error.
func TestUsageErrorPrintsUsage(t *testing.T) {
	var stderr bytes.Buffer
	fs := newFlags("cmd", "--out DIR", "Does a thing.", &stderr)
	if code := exit(&stderr, "cmd", withUsage(fs, errors.New("need --out DIR"))); code != 2 {
		t.Fatalf("exit = %d; want 2", code)
	}
	if want := "granite cmd: need --out DIR\nusage: granite cmd --out DIR\n"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q; want it to start %q", stderr.String(), want)
	}
}

// TestEveryVerbExitsTwoOnABadFlag: every command, and synth promote,
// answers a flag it does not define with the flag package's message and
// exit 2, and a stray argument with exit 2 naming it.
func TestEveryVerbExitsTwoOnABadFlag(t *testing.T) {
	verbs := [][]string{{"synth", "promote"}}
	for _, c := range commands {
		verbs = append(verbs, []string{c.name})
	}
	for _, v := range verbs {
		name := strings.Join(v, " ")
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(append([]string{}, v...), "--no-such-flag"), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), "flag provided but not defined: -no-such-flag") {
				t.Errorf("granite %s --no-such-flag: exit %d, stderr %q; want 2 and the flag package's message", name, code, stderr.String())
			}
			if strings.Count(stderr.String(), "no-such-flag") != 1 {
				t.Errorf("granite %s --no-such-flag: stderr %q; want the error once", name, stderr.String())
			}
		})
	}
	for _, args := range [][]string{{"list", "stray"}, {"version", "stray"}, {"synth", "promote", "a.jsonl", "--domain", gen.Domains[0].Name, "stray"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		cmd := strings.Join(args[:len(args)-1], " ")
		if args[0] == "synth" {
			cmd = "synth promote"
		}
		if want := "granite " + cmd + ": unexpected argument \"stray\"\nusage: granite " + cmd; code != 2 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("granite %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), code, stderr.String(), want)
		}
	}
}

// TestConvertedVerbsExitOneOnARuntimeError: a command whose flags are
// right but whose work fails exits 1, with one line saying why.
func TestConvertedVerbsExitOneOnARuntimeError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, []byte("x"), 0o644))
	missing := filepath.Join(dir, "missing.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--interfaces", "--tools", missing}, "granite list: "},
		{[]string{"synth", "--tools", missing}, "granite synth: "},
		{[]string{"synth", "promote", missing, "--domain", gen.Domains[0].Name}, "granite synth promote: "},
		{[]string{"judge", missing, "--tools", missing}, "granite judge: "},
		// The race's results folder is a file: the plan is made, the race
		// cannot start.
		{[]string{"advise", "--domain", gen.Domains[0].Name, "--models", "builtin:sim", "--candidates", "L4,L1", "--max-rounds", "5", "--out", file}, "granite advise: "},
		{[]string{"report", "--results", missing}, "granite report: "},
		{[]string{"score", "--record", missing}, "granite score: "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != 1 || !strings.HasPrefix(stderr.String(), c.want) || strings.Contains(stderr.String(), "usage:") {
			t.Errorf("granite %s: exit %d, stderr %q; want 1 and a line starting %q, without the usage", strings.Join(c.args, " "), code, stderr.String(), c.want)
		}
	}
}
