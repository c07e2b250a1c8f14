// Package sandbox runs a program someone else wrote (an agent command) so
// that it cannot reach what belongs to another run of it, nor outlive its
// own.
//
// Where the kernel lets an unprivileged process make namespaces, the
// program runs in a user, PID and mount namespace of its own
// (Mode Namespaces): it sees a /proc of its own processes only, so it
// cannot read another agent's environment; the folder that holds every
// trial's private folder is a fresh, empty tmpfs in which only its own
// folder is bound back, so it cannot read another trial's client
// configuration; it holds no capabilities, so it cannot undo either; and
// its first process is granite's own small init, whose exit (when the
// program exits, when the trial is killed, or when granite dies, by a
// parent-death signal) makes the kernel kill every process left in the
// namespace, those that called setsid(2) included.
//
// Elsewhere (Mode None) the program runs in a process group of its own
// with a parent-death signal, which is all granite could do before: a
// descendant that leaves the group survives, and the program can read
// what every process of the same user can.
//
// The init is the running executable itself, started again with
// InitEnv set: this package's init function takes over such a process
// before main runs, so every binary that links the package (granite,
// and the tests of any package that imports it) can act as one.
package sandbox

import (
	"slices"
	"strings"
)

// Mode is how a program was contained, as run.json records it.
type Mode string

// The modes.
const (
	// Namespaces: user, PID and mount namespaces of the program's own.
	Namespaces Mode = "namespaces"
	// None: a process group and a parent-death signal only.
	None Mode = "none"
)

// InitEnv is the variable that makes a start of this executable granite's
// init in a new namespace; its value is the init's work, as JSON.
const InitEnv = "GRANITE_SANDBOX_INIT"

// Spec is a program to run.
type Spec struct {
	// Argv is the program and its arguments; Env its whole environment.
	Argv []string
	Env  []string
	// Dir is the folder it runs in. When Dir's parent is Hide, the program
	// sees Hide as a folder holding Dir alone.
	Dir  string
	Hide string
}

// Status is how the program ended.
type Status struct {
	// ExitCode is its exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended it, if one did.
	Signal string
}

// passedEnv lists the variables of granite's environment that every
// program granite starts gets (an agent command, an MCP source): what
// finds programs and files, the locale, and the terminal and temporary
// folder. Nothing else passes by default, so that a key granite holds
// (api_key_env, OPENAI_API_KEY, GRANITE_TOKEN) never reaches another's
// program; each kind of program names what it adds.
var passedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM", "LANG", "LANGUAGE"}

// Passes reports whether granite's variable k reaches every program it
// starts: passedEnv and the locale's LC_* variables.
func Passes(k string) bool {
	return slices.Contains(passedEnv, k) || strings.HasPrefix(k, "LC_")
}
