package gold

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// outcome is what one gold execution left: the final store, the
// outputs and where a call failed.
type outcome struct {
	final []byte
	// texts are the calls' outputs, one each.
	texts []string
	// reads are the calls' outputs, decoded.
	reads []score.GoldRead
	// step and err locate a call that failed; step is 0 when none did.
	step int
	err  string
}

// runGold executes calls on a fresh store at one level; replace, when not
// nil, gives other arguments for one step.
func runGold(ctx context.Context, dom *mcpdomain.Domain, level level.Level, calls []*speclang.Call, replace func(i int) []byte) (*outcome, error) {
	iface, err := serve.Identity(dom, level)
	if err != nil {
		return nil, err
	}
	s, err := serve.Open(ctx, dom, iface)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	played := make([]playedCall, len(calls))
	for i, c := range calls {
		played[i] = playedCall{c.Tool, c.JSON()}
		if replace != nil {
			if b := replace(i); b != nil {
				played[i].args = b
			}
		}
	}
	return play(ctx, s, played), nil
}

// runInterface executes a level's gold mapped onto an interface (each
// call renamed and re-encoded by the interface) on a fresh store behind
// it.
func runInterface(ctx context.Context, dom *mcpdomain.Domain, iface *surface.Interface, calls []*speclang.Call) (*outcome, error) {
	played := make([]playedCall, len(calls))
	for i, c := range calls {
		name, args, err := iface.EncodeJSON(c.Tool, c.Args)
		if err != nil {
			return nil, err
		}
		played[i] = playedCall{name, args}
	}
	s, err := serve.Open(ctx, dom, iface)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return play(ctx, s, played), nil
}

// playedCall is one call as a session receives it.
type playedCall struct {
	tool string
	args []byte
}

// play makes the calls in order on s, stopping at the first that fails.
func play(ctx context.Context, s *serve.Session, calls []playedCall) *outcome {
	out := &outcome{}
	var texts []string
	for i, c := range calls {
		res, err := s.Call(ctx, c.tool, c.args)
		switch {
		case err != nil:
			out.step, out.err = i+1, fmt.Sprintf("%s %s: protocol error: %v", c.tool, c.args, err)
		case res.IsError:
			out.step, out.err = i+1, fmt.Sprintf("%s %s: tool error: %s", c.tool, c.args, res.Text)
		}
		if out.step > 0 {
			break
		}
		texts = append(texts, res.Text)
		var v any
		if json.Unmarshal([]byte(res.Text), &v) != nil {
			v = res.Text
		}
		out.reads = append(out.reads, score.GoldRead{Tool: c.tool, Output: v})
	}
	out.final = s.Store.Snapshot()
	out.texts = texts
	return out
}

// goldVariant is the L4 gold with one call changed: an alternative value
// of one argument, or an optional argument left out.
type goldVariant struct {
	step int
	name string
	args []byte
}

// goldVariants lists every variant of a gold sequence, in call order.
func goldVariants(calls []*speclang.Call) []goldVariant {
	var out []goldVariant
	for i, c := range calls {
		for _, arg := range slices.Sorted(maps.Keys(c.Alternatives)) {
			for _, v := range c.Alternatives[arg] {
				out = append(out, goldVariant{i, arg + "=" + jsonString(v), c.With(arg, v)})
			}
		}
		for _, arg := range c.Optional {
			out = append(out, goldVariant{i, "without " + arg, c.With(arg, nil)})
		}
	}
	return out
}

// run executes the variant at L4 on a fresh store.
func (v goldVariant) run(ctx context.Context, dom *mcpdomain.Domain, calls []*speclang.Call) (*outcome, error) {
	return runGold(ctx, dom, level.L4, calls, func(j int) []byte {
		if j == v.step {
			return v.args
		}
		return nil
	})
}

// RightsOf runs a scenario's gold: the final stores are the L4 gold's and
// those of its variants (verify proves the levels end alike),
// deduplicated.
func RightsOf(ctx context.Context, dom *mcpdomain.Domain, s *speclang.Scenario) (*score.Rights, error) {
	calls := s.Gold[level.L4]
	r := &score.Rights{}
	add := func(o *outcome, err error) error {
		if err != nil {
			return err
		}
		if o.step == 0 && !slices.ContainsFunc(r.Finals, func(b []byte) bool { return bytes.Equal(b, o.final) }) {
			r.Finals = append(r.Finals, o.final)
		}
		return nil
	}
	gold, err := runGold(ctx, dom, level.L4, calls, nil)
	if err := add(gold, err); err != nil {
		return nil, err
	}
	r.Reads = gold.reads
	for _, v := range goldVariants(calls) {
		if err := add(v.run(ctx, dom, calls)); err != nil {
			return nil, err
		}
	}
	return r, nil
}
