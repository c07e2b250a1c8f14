package gold

import (
	"context"
	"fmt"

	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Mutation proves the verdict on every scenario of the given domains (all
// when only is empty) at every level: the oracle's solution at the level
// (its gold calls, its answer of the scenario's facts) is the base, and
// every variant the catalogue derives from it (score.Operators) is scored
// against the scenario's gold: wrong ones must score TC 0, right rewrites
// TC 1. It returns the tally per operator; a variant not as required is
// one of its failures.
func Mutation(ctx context.Context, spec *speclang.Spec, lookup Lookup, only ...string) (*score.MutationScore, error) {
	domains, err := selectDomains(spec, only)
	if err != nil {
		return nil, err
	}
	ms := &score.MutationScore{}
	for _, d := range domains {
		dom, msg := Generated(d, lookup)
		if dom == nil {
			return nil, fmt.Errorf("domain %s: %s", d.Name, msg)
		}
		seed := dom.NewStore().Snapshot()
		for _, s := range d.Scenarios {
			rights, err := RightsOf(ctx, dom, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.ID, err)
			}
			sg := score.NewScenarioGold(d, s, seed, rights)
			for _, l := range level.Levels {
				o, err := runGold(ctx, dom, l, s.Gold[l], nil)
				if err != nil {
					return nil, fmt.Errorf("%s at %s: %w", s.ID, l, err)
				}
				if o.step > 0 {
					return nil, fmt.Errorf("%s at %s: the gold fails at step %d: %s (granite verify says more)", s.ID, l, o.step, o.err)
				}
				g := sg.Gold(l, s.Gold[l], dom)
				verdicts, err := g.Mutate(score.Base{Answer: g.OracleAnswer(), Store: o.final, Outputs: o.texts, Oracle: true})
				if err != nil {
					return nil, fmt.Errorf("%s at %s: %w", s.ID, l, err)
				}
				ms.Add(fmt.Sprintf("%s at %s (oracle)", s.ID, l), verdicts)
			}
		}
	}
	return ms, nil
}
