package score

import (
	"bytes"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Faults counts the faults injected into a trial's calls, decoded
// into its level's (levelRecord), and those recovered: whose operation's
// intended effect is in the final store. A read's effect is what it
// answers: recovered when it was made again later with the same arguments
// and answered whole. A write whose repetition changes nothing more
// (Operation.Idempotent) is recovered when a call with its arguments was
// applied (answered without error, or timed out, which applies), or when
// applying it to the final store changes nothing (a destructive one also
// when that refuses it, its target gone). Any other write (a create) is
// recovered when it was applied exactly once: never is lost, twice is a
// duplicate. With no final store (a recording keeps only its snapshot),
// an idempotent write is recovered only by a call that applied it.
func Faults(calls []results.Call, dom *mcpdomain.Domain, lv level.Level, final mcpdomain.Store) (injected, recovered int) {
	resolved := prepareCalls(calls, dom, lv)
	same := func(i, j int) bool {
		return resolved[j].op == resolved[i].op && bytes.Equal(resolved[j].args, resolved[i].args)
	}
	// applied counts the calls that applied what call i asks.
	applied := func(i int) int {
		n := 0
		for j := range calls {
			if same(i, j) && (!calls[j].IsError || calls[j].Fault == faults.Timeout) {
				n++
			}
		}
		return n
	}
	for i, c := range calls {
		if c.Fault == "" {
			continue
		}
		injected++
		p := resolved[i]
		if p.op == nil {
			continue
		}
		ok := false
		switch {
		case p.op.ReadOnly:
			for j := i + 1; j < len(calls) && !ok; j++ {
				ok = same(i, j) && !calls[j].IsError && calls[j].Fault == ""
			}
		case p.op.Idempotent:
			if ok = applied(i) > 0; !ok && final != nil {
				st := final.CloneStore()
				before := st.Snapshot()
				_, err := st.Call(p.op.Name, p.args)
				ok = err == nil && bytes.Equal(before, st.Snapshot()) || err != nil && p.op.Destructive && mcpdomain.IsToolError(err)
			}
		default:
			ok = applied(i) == 1
		}
		if ok {
			recovered++
		}
	}
	return injected, recovered
}

// prepared is a call resolved to the operation it runs, with its
// arguments as the operation takes them (op nil where the level's tools
// refuse it).
type prepared struct {
	op   *mcpdomain.Operation
	args []byte
}

// prepareCalls resolves a trial's calls, decoded into the level's, as
// the server did before it drew their faults.
func prepareCalls(calls []results.Call, dom *mcpdomain.Domain, lv level.Level) []prepared {
	out := make([]prepared, len(calls))
	for i, c := range calls {
		if tool := dom.Tool(lv, c.Tool); tool != nil {
			if op, args, err := tool.Prepare(c.Arguments); err == nil {
				out[i] = prepared{op, args}
			}
		}
	}
	return out
}
