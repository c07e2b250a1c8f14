package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/tokens"
)

// SimSkill reads the skill of a builtin:sim entry's name: builtin:sim is
// SimDefaultSkill, builtin:sim@2.5 a skill of 2.5. It is false for any
// other name, a malformed skill included (the config check says why).
func SimSkill(name string) (float64, bool) {
	skill, sim, err := parseSim(name)
	return skill, sim && err == nil
}

// parseSim splits a builtin:sim name: whether the name is one (builtin:sim
// or builtin:sim@…), its skill, and what is wrong with a skill suffix
// that is not a finite number. The skill is in the name, not in a field of
// the entry, so that two skills are two entries a run tells apart by name
// (trial ids, records, the report) with nothing else to keep in step.
func parseSim(name string) (skill float64, sim bool, err error) {
	if name == Sim {
		return SimDefaultSkill, true, nil
	}
	suffix, ok := strings.CutPrefix(name, Sim+"@")
	if !ok {
		return 0, false, nil
	}
	skill, perr := strconv.ParseFloat(suffix, 64)
	if perr != nil || math.IsNaN(skill) || math.IsInf(skill, 0) {
		return 0, true, fmt.Errorf("found skill %q; expected a number after @, like %s@2.5 (or %s alone for the default skill, %g)", suffix, Sim, Sim, SimDefaultSkill)
	}
	return skill, true, nil
}

// simNoCallAnswer is what builtin:sim says once it has stopped calling
// tools (SimNoCall).
const simNoCallAnswer = "I cannot do this with these tools."

// simMalformedArgs are the arguments of a SimMalformed call as the model
// wrote them: not JSON.
const simMalformedArgs = `{"`

// sim is builtin:sim: the oracle's calls, each drawn right or wrong (see
// Sim). Its draws depend on the run's seed, the trial's id and the call's
// index alone, so that a trial replays identically however its run is
// sharded, resumed or parallel.
type sim struct {
	skill float64
	seed  int
}

func (a sim) Run(ctx context.Context, tr *Trial) {
	m, err := simMetricsOf(tr)
	if err != nil {
		tr.Record.ErrorClass, tr.Record.StopReason = results.ErrAgent, results.StopError
		tr.Record.Error = "builtin:sim cannot measure the trial's tools: " + err.Error() + "; check the tools' input schemas are JSON objects"
		return
	}
	p := SimCallSuccess(m, a.skill)
	names := toolNames(tr.Tools)
	made, allRight := 0, true
	var replies []string
	for ti, calls := range tr.Gold {
		tr.Ask(ti)
		for _, g := range calls {
			if tr.atCallLimit() {
				return
			}
			made++
			d := simDraw(a.seed, tr.Record.TrialID, made, p)
			name, args, kind := g.Name, g.Arguments, SimError("")
			if !d.right {
				name, args, kind = d.wrong(g, names)
				allRight = false
			}
			if kind == SimNoCall {
				tr.answerFrom(ti, simNoCallAnswer, made-1+len(tr.Prompts))
				return
			}
			var c results.Call
			if kind == SimMalformed {
				c = tr.malformedCall(made, name)
			} else {
				c = tr.CallLogged(ctx, made, name, args)
			}
			replies = append(replies, c.Result)
		}
		answerTurn(tr, ti, replies, made, allRight)
	}
}

// answerFrom answers user turn ti, already asked, and every later one with
// the same text; turns is the trial's count of turns.
func (tr *Trial) answerFrom(ti int, text string, turns int) {
	for i := ti + 1; i < len(tr.Prompts); i++ {
		tr.Record.Messages = append(tr.Record.Messages, results.Message{Role: "assistant", Content: text})
		tr.Ask(i)
	}
	tr.Answer(text, turns)
}

// malformedCall records a call of tool name whose arguments are not JSON
// (simMalformedArgs), as a client records what it cannot send: the server
// never sees it, and the call is a malformed tool call. The record keeps
// the arguments as a JSON string of their text, as a model backend keeps
// arguments that are not JSON, so that the journal stays JSON.
func (tr *Trial) malformedCall(turn int, name string) results.Call {
	args, _ := json.Marshal(simMalformedArgs)
	c := results.Call{Turn: turn, Tool: name, Arguments: args, IsError: true, ErrorClass: results.ErrMalformed,
		Result: "the arguments are not JSON (unexpected end of input); expected a JSON object of the tool's arguments"}
	c.Cut()
	tr.Record.Calls = append(tr.Record.Calls, c)
	tr.Record.Classify(c.ErrorClass)
	tr.Record.Messages = append(tr.Record.Messages,
		results.Message{Role: "assistant", ToolCalls: []results.MessageCall{{Name: c.Tool, Arguments: c.Arguments}}},
		results.Message{Role: "tool", ToolName: c.Tool, Content: c.Result})
	return c
}

// simDrawn is one call's draws: whether it is right, and if not which
// error (kind, by SimErrors' shares) and the stream that chooses the
// error's details.
type simDrawn struct {
	right bool
	kind  SimError
	rng   *rand.Rand
}

// simDraw draws call number call (1-based over the trial) of trial id
// under the run's seed, right with probability p. The stream is a PCG
// seeded by a hash of the three, so that draws do not depend on the order
// trials run in.
func simDraw(seed int, trial string, call int, p float64) simDrawn {
	h := sha256.New()
	fmt.Fprintf(h, "builtin:sim\x00%d\x00%s\x00%d", seed, trial, call)
	sum := h.Sum(nil)
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	u, k := rng.Float64(), rng.Float64()
	d := simDrawn{right: u < p, rng: rng}
	if d.right {
		return d
	}
	d.kind = SimErrors[len(SimErrors)-1].Kind
	acc := 0.0
	for _, e := range SimErrors {
		acc += e.Share
		if k < acc {
			d.kind = e.Kind
			break
		}
	}
	return d
}

// wrong is the call builtin:sim makes instead of gold call g, among the
// listed tools names: the tool, the arguments and the error it makes,
// which is the drawn one unless the call cannot make it. A wrong tool
// needs a second tool (else the argument is wrong), a wrong argument an
// argument (else the tool is wrong, or with one tool the call is
// malformed).
func (d simDrawn) wrong(g results.MessageCall, names []string) (string, json.RawMessage, SimError) {
	others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == g.Name })
	args, keys := simArgs(g.Arguments)
	kind := d.kind
	if kind == SimWrongTool && len(others) == 0 {
		kind = SimWrongArgument
	}
	if kind == SimWrongArgument && len(keys) == 0 {
		kind = SimMalformed
		if len(others) > 0 {
			kind = SimWrongTool
		}
	}
	switch kind {
	case SimWrongTool:
		return others[d.rng.IntN(len(others))], g.Arguments, kind
	case SimWrongArgument:
		k := keys[d.rng.IntN(len(keys))]
		switch v := args[k].(type) {
		case string:
			args[k] = v + "x"
		case json.Number:
			if n, err := v.Int64(); err == nil {
				args[k] = n + 1
			} else if f, err := v.Float64(); err == nil {
				args[k] = f + 1
			} else {
				delete(args, k)
			}
		case bool:
			args[k] = !v
		default:
			delete(args, k)
		}
		out, err := json.Marshal(args)
		if err != nil {
			return g.Name, g.Arguments, SimMalformed
		}
		return g.Name, out, kind
	case SimMalformed:
		return g.Name, nil, kind
	}
	return "", nil, SimNoCall
}

// simArgs decodes a gold call's arguments, numbers kept as written, and
// lists their keys sorted (none when they are not a JSON object).
func simArgs(raw json.RawMessage) (map[string]any, []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if dec.Decode(&args) != nil {
		return nil, nil
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return args, keys
}

// simMetrics caches the metrics of each tool set builtin:sim has played,
// by simToolsKey: measuring counts every schema's tokens, which a trial
// must not pay again for the same tools.
var simMetrics sync.Map

type simMeasured struct {
	m   surface.Metrics
	err error
}

// simMetricsOf measures the trial's tools as listed, once per tool set.
func simMetricsOf(tr *Trial) (surface.Metrics, error) {
	key := simToolsKey(tr)
	if v, ok := simMetrics.Load(key); ok {
		r := v.(simMeasured)
		return r.m, r.err
	}
	m, err := SimMeasure(tr.Tools)
	v, _ := simMetrics.LoadOrStore(key, simMeasured{m, err})
	r := v.(simMeasured)
	return r.m, r.err
}

// simToolsKey names the trial's tools: its tool set, and a hash of what
// they list, since a tool set's name is unique within a run, not across
// the runs of one process (two artifact files of one source).
func simToolsKey(tr *Trial) string {
	h := fnv.New64a()
	for _, t := range tr.Tools {
		schema, _ := inputSchema(t)
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", t.Name, t.Description, schema)
	}
	return tr.ToolSet + "\x00" + strconv.FormatUint(h.Sum64(), 16)
}

// SimMeasure is what builtin:sim's success model reads of a trial's
// tools as listed over MCP: the metrics (surface.Measure, in cl100k_base
// tokens, nothing dropped) of a plain interface of them, with no actions,
// since SimLoad reads only what a model is shown.
func SimMeasure(listed []mcp.Tool) (surface.Metrics, error) {
	tools := make([]surface.Tool, len(listed))
	for i, t := range listed {
		schema, err := inputSchema(t)
		if err != nil {
			return surface.Metrics{}, err
		}
		tools[i] = surface.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	iface, err := surface.Build(surface.Spec{Name: "listed", Level: level.L4}, "", tools)
	if err != nil {
		return surface.Metrics{}, err
	}
	return surface.Measure(iface, tokens.Count, nil), nil
}
