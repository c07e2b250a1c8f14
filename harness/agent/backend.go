package agent

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/sandbox"
	"github.com/mcpgranite/granite/internal/speclang"
)

// A Backend is one kind of subject. Everything granite knows of a kind
// is in its own file (ollama.go, openai.go, command.go, builtin.go), behind
// this interface, and registered in backends: the runner, the config
// checks, the record labels and `granite list` ask the registry, never
// the kind.
type Backend interface {
	// Name is the kind's name, which a config's backend key gives.
	Name() string
	// Label is Record.Agent of its trials.
	Label() string
	// Check reports what is wrong with one of its entries beyond what the
	// schema says; at gives the path of one of the entry's fields.
	Check(doc *speclang.Document, m results.ModelEntry, at func(field string) []any) speclang.ErrorList
	// Preflight checks, before anything is written, that its entries
	// (those with trials to run) can run: hosts up, endpoints listing the
	// model, the agent commands' isolation; it may say what it decided in
	// env.
	Preflight(ctx context.Context, env *Env, entries []results.ModelEntry) error
	// Workers readies what plays an entry's trials (trials of them to
	// run), warm-ups and model information recorded through env: one
	// worker per trial run at once.
	Workers(ctx context.Context, env *Env, e results.ModelEntry, trials int) ([]Worker, error)
}

// A ToolConverter is a backend that hands its model the tools in a
// request form of its own, which may drop schema keywords of the tools
// listed over MCP. An agent command and the built-in agents get the tools
// as listed.
type ToolConverter interface {
	Backend
	// Lost lists, by tool name, what the request form drops of each
	// input schema (see LostSummary for the keyword form).
	Lost(schemas map[string][]byte) map[string][]string
}

// A Configured backend has settings of its own in the experiment config
// besides its entries (Ollama's hosts), read whether or not an entry is
// of its kind.
type Configured interface {
	Backend
	// Defaults fills its settings' documented defaults.
	Defaults(c *results.Config)
	// CheckConfig reports what is wrong with its settings beyond what
	// the schema says, once their defaults are filled.
	CheckConfig(doc *speclang.Document, c *results.Config) speclang.ErrorList
}

// Defaults fills every registered kind's settings' defaults.
func Defaults(c *results.Config) {
	for _, b := range backends {
		if k, ok := b.(Configured); ok {
			k.Defaults(c)
		}
	}
}

// CheckConfig reports what is wrong with every registered kind's
// settings, in the registry's order.
func CheckConfig(doc *speclang.Document, c *results.Config) speclang.ErrorList {
	var list speclang.ErrorList
	for _, b := range backends {
		if k, ok := b.(Configured); ok {
			list = append(list, k.CheckConfig(doc, c)...)
		}
	}
	return list
}

// backends registers each kind, in the order their preflights run and
// `granite list` shows their tool conversions.
var backends = []Backend{
	builtinBackend{},
	ollamaBackend{},
	openaiBackend{},
	commandBackend{},
}

// defaultBackend is the kind of an entry that names none: a plain tag is
// an Ollama model.
const defaultBackend = BackendOllama

// Backends lists the registered kinds, in the registry's order.
func Backends() []Backend { return backends }

// Converters lists the registered kinds that convert tools, in the
// registry's order.
func Converters() []ToolConverter {
	var out []ToolConverter
	for _, b := range backends {
		if c, ok := b.(ToolConverter); ok {
			out = append(out, c)
		}
	}
	return out
}

// ContextSetter is a kind that says how its models' context (in tokens)
// is set, for `granite list` and run.json.
type ContextSetter interface {
	// ContextNote says it in one sentence.
	ContextNote() string
}

// ContextNotes says, per kind that can (a ContextSetter), how its models'
// context is set, by kind name.
func ContextNotes() map[string]string {
	notes := map[string]string{}
	for _, b := range backends {
		if c, ok := b.(ContextSetter); ok {
			notes[b.Name()] = c.ContextNote()
		}
	}
	return notes
}

// Default is the kind of an entry that names none.
func Default() Backend { return named(defaultBackend) }

// kindOf is the name of an entry's kind: builtin by name, else its
// backend key, the default when it has none.
func kindOf(e results.ModelEntry) string {
	switch {
	case IsBuiltin(e.Name):
		return BackendBuiltin
	case e.Backend == "":
		return defaultBackend
	}
	return e.Backend
}

// For is an entry's kind. The config's schema admits only the registered
// names.
func For(e results.ModelEntry) Backend { return named(kindOf(e)) }

func named(kind string) Backend {
	for _, b := range backends {
		if b.Name() == kind {
			return b
		}
	}
	panic("agent: no backend " + kind + " registered; add it to backends")
}

// Env is what the runner gives the backends: the run's config and
// settings, where to say what they decided, and how to record what they
// learn of a model.
type Env struct {
	Config *results.Config
	// HTTP is the client for model servers (nil: a default one).
	HTTP *http.Client
	// Progress receives warnings.
	Progress io.Writer
	// Isolation is how agent commands are asked to be contained (one of
	// the Isolation settings, "" for auto); Mode is how they are, decided
	// at preflight ("" when no trial runs an agent command).
	Isolation string
	Mode      sandbox.Mode
	// Hidden are folders no agent command may see (the run's results
	// folder), as absolute paths.
	Hidden []string
	// ToolSets are the input schemas of each tool set the run's trials
	// play, by set (see Trial.ToolSet) and tool name.
	ToolSets map[string]map[string][]byte
	// Checked records a model's warm-up and what its server (or entry)
	// says of it.
	Checked func(model string, info results.ModelInfo, w results.WarmUp) error
}

// Preflight runs every kind's preflight over its entries with trials to
// run (has tells them), in the registry's order, and reports every kind's
// problems at once.
func Preflight(ctx context.Context, env *Env, has func(model string) bool) error {
	byKind := map[string][]results.ModelEntry{}
	for _, m := range env.Config.Models {
		if has(m.Name) {
			byKind[kindOf(m)] = append(byKind[kindOf(m)], m)
		}
	}
	var errs []error
	for _, b := range backends {
		if len(byKind[b.Name()]) == 0 {
			continue
		}
		errs = append(errs, b.Preflight(ctx, env, byKind[b.Name()]))
	}
	return errors.Join(errs...)
}

// Worker plays trials one at a time: an agent, and the host it runs on
// (for the record).
type Worker struct {
	Host  string
	Agent Agent
}
