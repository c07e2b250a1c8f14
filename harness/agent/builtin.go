package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Built-in agents: they run without a model and are labelled as such in
// every record. builtin:sim (Sim, in simmodel.go) is the third.
const (
	Oracle = "builtin:oracle"
	Silent = "builtin:silent"
)

// IsBuiltin reports whether a model name is a built-in agent.
func IsBuiltin(model string) bool { return strings.HasPrefix(model, "builtin:") }

// BackendBuiltin names the built-in agents' kind, which no config names:
// an entry is built-in by its name (IsBuiltin). It is also Record.Agent of
// their trials.
const BackendBuiltin = "builtin"

// builtinBackend is the built-in agents' kind: no model, no host, named
// by their entry's name alone.
type builtinBackend struct{}

func (builtinBackend) Name() string  { return BackendBuiltin }
func (builtinBackend) Label() string { return BackendBuiltin }

func (builtinBackend) Check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	_, isSim, err := parseSim(m.Name)
	switch {
	case err != nil:
		return speclang.ErrorList{doc.Errorf(at("name"), "found built-in agent %q: %v", m.Name, err)}
	case !isSim && m.Name != Oracle && m.Name != Silent:
		return speclang.ErrorList{doc.Errorf(at("name"), "found built-in agent %q; expected %s or %s, or %s (%s@2.5 for a skill of 2.5)", m.Name, Oracle, Silent, Sim, Sim)}
	case !m.IsPlain():
		return speclang.ErrorList{doc.Errorf(at(""), "found built-in agent %s with model settings; expected it as a plain name: it runs no model", m.Name)}
	}
	return nil
}

func (builtinBackend) Preflight(context.Context, *Env, []results.ModelEntry) error { return nil }

// Workers: the oracle and builtin:sim on up to four trials at once (they
// only wait on the store), the silent agent on one. builtin:sim draws
// under the run's seed, which its entry, a plain name, cannot override.
func (builtinBackend) Workers(_ context.Context, env *Env, e results.ModelEntry, trials int) ([]Worker, error) {
	if e.Name == Silent {
		return []Worker{{Agent: silent{}}}, nil
	}
	var a Agent = oracle{}
	skill, isSim, err := parseSim(e.Name)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", e.Name, err)
	}
	if isSim {
		s := sim{skill: skill}
		if env != nil && env.Config != nil {
			_, _, s.seed = env.Config.Sampling(e)
		}
		a = s
	}
	out := make([]Worker, min(4, trials))
	for i := range out {
		out[i] = Worker{Agent: a}
	}
	return out, nil
}

// oracle replays the level's gold calls (an artifact's expected calls,
// each in the user turn it answers) and answers each turn with what the
// tools returned. It is a self-test of the benchmark, not a model: every
// trial it plays must score TC = 1, and so must every trial under faults
// that applied nothing and say so (transient, rate_limit), which it
// retries as a careful agent would (docs/faults.md says what it does
// under each kind).
type oracle struct{}

// oracleRetries is how often the oracle makes a call again that failed
// with a retryable fault: each retry draws its own fault, so at a rate of
// one half twenty fail in a row once in a million calls.
const oracleRetries = 20

func (oracle) Run(ctx context.Context, tr *Trial) {
	made := 0
	var replies []string
	for ti, calls := range tr.Gold {
		tr.Ask(ti)
		for _, g := range calls {
			for try := 0; ; try++ {
				made++
				c := tr.CallLogged(ctx, made, g.Name, g.Arguments)
				// The retry-after of a rate limit is not waited: the
				// store has no clock, and the next call draws afresh.
				if !c.IsError || !faults.Retryable(c.Result) || try == oracleRetries || ctx.Err() != nil {
					replies = append(replies, c.Result)
					break
				}
			}
		}
		answerTurn(tr, ti, replies, made, true)
	}
}

// answerTurn ends user turn ti of a built-in agent's trial with the
// tools' results so far (or says no call was right): an assistant message
// between turns, the final answer after the last, with made calls. The
// final answer is the trial's OracleAnswer instead, where it has one and
// facts says every call was right.
func answerTurn(tr *Trial, ti int, replies []string, made int, facts bool) {
	text := strings.Join(replies, "\n")
	if len(replies) == 0 {
		text = "No tool call is right for this request."
	}
	if ti < len(tr.Prompts)-1 {
		tr.Record.Messages = append(tr.Record.Messages, results.Message{Role: "assistant", Content: text})
		return
	}
	if facts && tr.OracleAnswer != nil {
		if a := tr.OracleAnswer(); a != "" {
			text = a
		}
	}
	tr.Answer(text, made+len(tr.Prompts))
}

// silent answers without calling a tool: the floor every scenario must
// fail (verify proves its expectations are not met by the fresh store).
type silent struct{}

func (silent) Run(_ context.Context, tr *Trial) {
	tr.Ask(0)
	tr.answerAll("I can't help with that.", 0)
}
