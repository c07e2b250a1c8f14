// Package sandbox runs a program someone else wrote (an agent command) so
// that it cannot reach what belongs to another run of it, nor granite's
// own files, nor outlive its own.
//
// Where the kernel lets an unprivileged process make namespaces, the
// program runs in a user, PID and mount namespace of its own
// (Mode Namespaces): it sees a /proc of its own processes only, so it
// cannot read another agent's environment; every file system is
// read-only to it, and what it writes (in its trial's folder, /dev/shm,
// or over HOME, /tmp and /var/tmp, which it reads as they are) goes to
// size-bounded tmpfs of its own that vanish with it, so it cannot change
// granite's results or fill a disk; the folders it must not see (the run's results
// folder) are covered by empty ones, and the folder that holds every
// trial's private folder shows its own only, so it cannot read another
// trial's client configuration; it holds no capabilities, so it cannot
// undo any of this; its processes and threads, and the memory they hold
// together, are bounded (Limits); and its first process is granite's
// own small init, whose exit (when the program exits, goes over a limit
// or is killed, or when granite dies, by a parent-death signal) makes
// the kernel kill every process left in the namespace, those that called
// setsid(2) included.
//
// Elsewhere (Mode None) the program runs in a process group of its own
// with a parent-death signal, which is all granite could do before: a
// descendant that leaves the group survives, and the program can read
// what every process of the same user can.
//
// The init is the running executable itself, started again with
// InitEnv set (twice: once to make the view, once more in its own place
// with every capability dropped, so that no thread of the init holds
// one while the program runs): this package's init function takes over
// such a process before main runs, so every binary that links the package (granite,
// and the tests of any package that imports it) can act as one.
package sandbox

import (
	"slices"
	"strings"
	"time"
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

// Program is a program to run.
type Program struct {
	// Argv is the program and its arguments; Env its whole environment.
	Argv []string
	Env  []string
	// Dir is the folder it runs in. When Dir's parent is Hide, the program
	// sees Hide as a folder holding Dir alone.
	Dir  string
	Hide string
	// Cover lists folders the program must not see at all (the run's
	// results folder): each that it would see shows as an empty,
	// read-only folder. Namespaces only.
	Cover []string
	// Limits bounds what it may use (zero fields: DefaultLimits).
	// Namespaces only.
	Limits Limits
}

// Limits bound what a program in namespaces may use. A zero field takes
// DefaultLimits' value.
type Limits struct {
	// Memory bounds the resident memory of all its processes together, in
	// bytes: past it, the init ends the program and all it started.
	Memory int64 `json:"memory,omitempty"`
	// Tasks bounds its processes and threads together: the kernel refuses
	// a fork past it where RLIMIT_NPROC holds (granite not run as root),
	// and the init ends the program past it everywhere.
	Tasks int `json:"tasks,omitempty"`
	// Disk bounds, in bytes, each of the tmpfs its writes go to: its own
	// folder; /dev/shm; and what it writes over HOME, /tmp and /var/tmp
	// together. A write past it fails with ENOSPC.
	Disk int64 `json:"disk,omitempty"`
}

// DefaultLimits are the limits of a program whose Program sets none: room
// for an agent CLI on Node.js and the tools it starts, not for a bomb.
var DefaultLimits = Limits{Memory: 4 << 30, Tasks: 2048, Disk: 1 << 30}

// withDefaults fills l's zero fields from d.
func (l Limits) withDefaults(d Limits) Limits {
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Tasks <= 0 {
		l.Tasks = d.Tasks
	}
	if l.Disk <= 0 {
		l.Disk = d.Disk
	}
	return l
}

// Status is how the program ended.
type Status struct {
	// ExitCode is its exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended it, if one did.
	Signal string
}

// Result is how a run went.
type Result struct {
	Status
	// Started and Exited bound the program's own time.
	Started, Exited time.Time
	// Killed: ctx ended before the program did, and everything it had
	// started was killed.
	Killed bool
	// OverLimit says which of its Limits the program went over, and by
	// how much, when its init ended it for that (and everything it had
	// started with it).
	OverLimit string
	// StartErr is set when the program could not start; Err when running
	// it failed otherwise.
	StartErr, Err error
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
