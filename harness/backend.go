package harness

import (
	"context"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// A backend is one kind of subject. Everything granite knows of a kind
// is in its own file (ollama.go, openai.go, command.go, builtin.go), behind
// this interface, and registered in backends: the runner, the config
// checks and the record labels ask the registry, never the kind.
type backend interface {
	// label is Record.Agent of its trials.
	label() string
	// check reports what is wrong with one of its entries beyond what the
	// schema says; at gives the path of one of the entry's fields.
	check(doc *speclang.Document, m results.ModelEntry, at func(field string) []any) speclang.ErrorList
	// preflight checks, before anything is written, that its entries
	// (those with trials to run) can run: hosts up, endpoints listing the
	// model, the agent commands' isolation; it may say what it decided in
	// the manifest.
	preflight(ctx context.Context, pf preflight, entries []results.ModelEntry) error
	// workers readies what plays an entry's trials, warm-ups and model
	// information recorded: one worker per trial run at once.
	workers(ctx context.Context, r *runner, e results.ModelEntry, ts []Trial) ([]worker, error)
}

// backends registers each kind under the name a config's backend key
// gives it (builtin: the built-in agents, by name), in the order their
// preflights run.
var backends = []struct {
	name string
	backend
}{
	{backendBuiltin, builtinBackend{}},
	{results.BackendOllama, ollamaBackend{}},
	{results.BackendOpenAI, openaiBackend{}},
	{results.BackendCommand, commandBackend{}},
}

// backendBuiltin names the built-in agents' kind, which no config names:
// an entry is built-in by its name (IsBuiltin).
const backendBuiltin = "builtin"

// kindOf is the name of an entry's kind: builtin by name, else its
// backend key, Ollama by default.
func kindOf(e results.ModelEntry) string {
	switch {
	case IsBuiltin(e.Name):
		return backendBuiltin
	case e.Backend == "":
		return results.BackendOllama
	}
	return e.Backend
}

// backendOf is an entry's kind. The config's schema admits only the
// registered names.
func backendOf(e results.ModelEntry) backend {
	k := kindOf(e)
	for _, b := range backends {
		if b.name == k {
			return b.backend
		}
	}
	panic("harness: no backend " + k + " registered; add it to backends")
}

// preflight is what a backend's preflight may read and decide.
type preflight struct {
	cfg    *results.Config
	opts   Options
	trials []Trial
	man    *results.Manifest
}

// preflightAll runs every kind's preflight over its entries with trials to
// run, in the registry's order.
func preflightAll(ctx context.Context, pf preflight) error {
	byKind := map[string][]results.ModelEntry{}
	for _, m := range pf.cfg.Models {
		if slices.ContainsFunc(pf.trials, func(t Trial) bool { return t.Model == m.Name }) {
			byKind[kindOf(m)] = append(byKind[kindOf(m)], m)
		}
	}
	for _, b := range backends {
		if len(byKind[b.name]) == 0 {
			continue
		}
		if err := b.preflight(ctx, pf, byKind[b.name]); err != nil {
			return err
		}
	}
	return nil
}

// worker plays trials one at a time: an agent, and the host it runs on
// (for the record).
type worker struct {
	host  string
	agent agent
}
