package score

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/speclang"
)

// goldAction is a gold call's action by the rules of actionOf, read from
// its arguments as they are, without encoding them again for every trial.
func (g *Gold) goldAction(c *speclang.Call) string {
	if has, known := g.actions[c.Tool]; known && !has {
		return ""
	}
	if a, ok := c.Args["action"]; ok && a != nil {
		return fmt.Sprint(a)
	}
	return ""
}

// actionOf is a call's action, or "" for a tool without one: a stray
// action sent to a tool that takes none names no operation. args are the
// arguments as the record keeps them (read cuts them once).
func (g *Gold) actionOf(tool string, args json.RawMessage) string {
	if has, known := g.actions[tool]; known && !has {
		return ""
	}
	var a struct {
		Action any `json:"action"`
	}
	if json.Unmarshal(args, &a) == nil && a.Action != nil {
		return fmt.Sprint(a.Action)
	}
	return ""
}

// readCall is a call as scoring reads it, its arguments decoded once for
// every score (a subject that makes a thousand calls is scored in
// milliseconds). The arguments are read as a record keeps them
// (results.CutArguments), so that a verdict is the same on arguments as
// sent and as journaled: a value too long to keep is never a right one.
type readCall struct {
	tool, action string
	// args are the arguments, nil when they are no JSON object: the call
	// exists, no value of it is right.
	args map[string]any
	// canonical is the arguments re-encoded with sorted keys, so equal
	// arguments compare equal whatever order the model wrote them in (as
	// sent when they are not JSON).
	canonical string
}

// read reads the calls for scoring.
func (g *Gold) read(calls []results.Call) []readCall {
	out := make([]readCall, len(calls))
	for i, c := range calls {
		raw := results.CutArguments(c.Arguments)
		r := readCall{tool: c.Tool, action: g.actionOf(c.Tool, raw), canonical: string(raw)}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			r.args, _ = v.(map[string]any)
			b, _ := json.Marshal(v)
			r.canonical = string(b)
		}
		out[i] = r
	}
	return out
}

// pairs counts the required key-value pairs of a gold call and how many
// of them the arguments got give a right value; withoutAction leaves the
// action out. A gold call without required pairs counts as one, right
// when a call is aligned with it.
func (g *Gold) pairs(gc *speclang.Call, got map[string]any, aligned, withoutAction bool) (right, total int) {
	for name, want := range gc.Args {
		if slices.Contains(gc.Optional, name) || withoutAction && name == "action" {
			continue
		}
		total++
		v, ok := got[name]
		if ok && g.ValueMatches(name, v, append([]any{want}, gc.Alternatives[name]...)) {
			right++
		}
	}
	if total == 0 {
		total = 1
		if aligned {
			right = 1
		}
	}
	return right, total
}

// ValueMatches reports whether a model's value of an argument equals one
// of the acceptable values. Numbers compare by value (21 = 21.0); strings
// are trimmed and case-folded, except enums, IDs and the action, which
// must be exact; objects compare key by key and arrays in order, by the
// same rules; a value of another JSON type is wrong.
func (g *Gold) ValueMatches(arg string, got any, accept []any) bool {
	for _, want := range accept {
		if SameValue(got, want, g.exact[arg]) {
			return true
		}
	}
	return false
}

// them.
type argScores struct {
	argAcc, actionArgAcc float64
	matches              []results.GoldMatch
}

// scoreArgs pairs each gold call with the calls made, in one pass for
// both argument scores and the record's explanation: arg_acc pairs the
// k-th gold call of a tool with the k-th call of it and counts every
// required pair; action_arg_acc pairs calls within the same tool and
// action by the best assignment and leaves the action out (see Score for
// the rules). The arguments of the arg_acc pairing are compared one by
// one for the explanation.
func (g *Gold) scoreArgs(calls []readCall) argScores {
	args := make([]map[string]any, len(calls))
	byTool := map[string][]int{}
	type op struct{ tool, action string }
	byOp := map[op][]int{}
	for i, c := range calls {
		args[i] = c.args
		byTool[c.tool] = append(byTool[c.tool], i)
		k := op{c.tool, c.action}
		byOp[k] = append(byOp[k], i)
	}
	out := make([]results.GoldMatch, len(g.Calls))
	used := map[string]int{}
	goldByOp := map[op][]int{}
	var order []op
	right, total := 0, 0
	for i, gc := range g.Calls {
		m := results.GoldMatch{Gold: i, Tool: gc.Tool, Action: g.goldAction(gc), Call: -1, ActionCall: -1, Args: []results.ArgMatch{}}
		if k := used[gc.Tool]; k < len(byTool[gc.Tool]) {
			m.Call = byTool[gc.Tool][k]
		}
		used[gc.Tool]++
		var got map[string]any
		if m.Call >= 0 {
			got = args[m.Call]
		}
		r, n := g.pairs(gc, got, m.Call >= 0, false)
		right += r
		total += n
		for _, name := range slices.Sorted(maps.Keys(gc.Args)) {
			v, given := got[name]
			a := results.ArgMatch{Name: name, Want: gc.Args[name], Accept: gc.Alternatives[name], Given: given,
				Optional: slices.Contains(gc.Optional, name)}
			if given {
				a.Got = v
				a.Right = g.ValueMatches(name, v, append([]any{gc.Args[name]}, gc.Alternatives[name]...))
			}
			m.Args = append(m.Args, a)
		}
		out[i] = m
		k := op{gc.Tool, m.Action}
		if goldByOp[k] == nil {
			order = append(order, k)
		}
		goldByOp[k] = append(goldByOp[k], i)
	}
	s := argScores{argAcc: ratio(right, total), matches: out}
	right, total = 0, 0
	for _, k := range order {
		golds, made := goldByOp[k], byOp[k]
		weights := make([][]int, len(golds))
		for i, gi := range golds {
			weights[i] = make([]int, len(made))
			for j, ci := range made {
				weights[i][j], _ = g.pairs(g.Calls[gi], args[ci], true, true)
			}
			_, n := g.pairs(g.Calls[gi], nil, false, true)
			total += n
		}
		r, to := assignment(weights)
		right += r
		for i, j := range to {
			if j >= 0 {
				out[golds[i]].ActionCall = made[j]
			}
		}
	}
	s.actionArgAcc = ratio(right, total)
	return s
}

// ratio is right/total, 1 when nothing counts.
func ratio(right, total int) float64 {
	if total == 0 {
		return 1
	}
	return float64(right) / float64(total)
}
