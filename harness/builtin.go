package harness

import (
	"context"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Built-in agents: they run without a model and are labelled as such in
// every record.
const (
	Oracle = "builtin:oracle"
	Silent = "builtin:silent"
)

// IsBuiltin reports whether a model name is a built-in agent.
func IsBuiltin(model string) bool { return strings.HasPrefix(model, "builtin:") }

// builtinBackend is the built-in agents' kind: no model, no host, named
// by their entry's name alone.
type builtinBackend struct{}

// agentBuiltin is Record.Agent of a built-in agent's trials.
const agentBuiltin = backendBuiltin

func (builtinBackend) label() string { return agentBuiltin }

func (builtinBackend) check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	switch {
	case m.Name != Oracle && m.Name != Silent:
		return speclang.ErrorList{doc.Errorf(at("name"), "found built-in agent %q; expected %s or %s", m.Name, Oracle, Silent)}
	case !m.IsPlain():
		return speclang.ErrorList{doc.Errorf(at(""), "found built-in agent %s with model settings; expected it as a plain name: it runs no model", m.Name)}
	}
	return nil
}

func (builtinBackend) preflight(context.Context, preflight, []results.ModelEntry) error { return nil }

// workers: the oracle on up to four trials at once (it only waits on the
// store), the silent agent on one.
func (builtinBackend) workers(_ context.Context, _ *runner, e results.ModelEntry, ts []Trial) ([]worker, error) {
	if e.Name == Silent {
		return []worker{{agent: silent{}}}, nil
	}
	out := make([]worker, min(4, len(ts)))
	for i := range out {
		out[i] = worker{agent: oracle{}}
	}
	return out, nil
}

// oracle replays the level's gold calls (an artifact's expected calls,
// each in the user turn it answers) and answers each turn with what the
// tools returned. It is a self-test of the benchmark, not a model: every
// trial it plays must score TC = 1.
type oracle struct{}

func (oracle) run(ctx context.Context, tr *trialRun) {
	gold := tr.t.goldCalls()
	made := 0
	var replies []string
	for ti, calls := range tr.t.turnCalls(len(gold)) {
		tr.ask(ti)
		for _, k := range calls {
			g := gold[k]
			made++
			c := tr.callLogged(ctx, made, g.Name, g.Arguments)
			replies = append(replies, c.Result)
		}
		text := strings.Join(replies, "\n")
		if len(replies) == 0 {
			text = "No tool call is right for this request."
		}
		if ti < len(tr.prompts)-1 {
			tr.rec.Messages = append(tr.rec.Messages, results.Message{Role: "assistant", Content: text})
			continue
		}
		tr.answer(text, made+len(tr.prompts))
	}
}

// silent answers without calling a tool: the floor every scenario must
// fail (verify proves its expectations are not met by the fresh store).
type silent struct{}

func (silent) run(_ context.Context, tr *trialRun) {
	tr.ask(0)
	tr.answerAll("I can't help with that.", 0)
}
