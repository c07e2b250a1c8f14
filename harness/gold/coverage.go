package gold

import (
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// Coverage is how much of one level's interface the gold of a domain uses.
type Coverage struct {
	Domain      string      `json:"domain"`
	Level       level.Level `json:"level"`
	Tools       int         `json:"tools"`
	ToolsUsed   int         `json:"tools_used"`
	Actions     int         `json:"actions"`
	ActionsUsed int         `json:"actions_used"`
	// Missing lists unused tools and tool.action pairs.
	Missing []string `json:"missing,omitempty"`
}

// Complete reports whether every tool and action is used.
func (c Coverage) Complete() bool { return len(c.Missing) == 0 }

// coverage records which tools and actions of each level the domain's
// gold uses, as written or as a composition makes it: a workflow is used
// where a scenario's steps are one (Composite), a preset's atomic form
// by the expanded gold (Atomic).
func (r *Verification) coverage(d *speclang.Domain, dom *mcpdomain.Domain) {
	for i, lv := range d.Levels {
		level := level.Levels[i]
		used := map[string]bool{}
		for _, s := range d.Scenarios {
			golds := [][]*speclang.Call{s.Gold[level]}
			for _, comp := range []string{"atomic", "composite"} {
				if calls, err := Composed(d, dom, surface.Spec{Name: string(level) + "-" + comp, Level: level, Transforms: surface.Transforms{Composition: comp}}, s); err == nil {
					golds = append(golds, calls)
				}
			}
			for _, calls := range golds {
				for _, c := range calls {
					used[c.Tool] = true
					used[c.Tool+"."+c.Op] = true
				}
			}
		}
		c := Coverage{Domain: d.Name, Level: level, Tools: len(lv.Tools)}
		for _, t := range lv.Tools {
			if used[t.Name] {
				c.ToolsUsed++
			} else {
				c.Missing = append(c.Missing, t.Name)
			}
			if len(t.Operations) < 2 {
				continue
			}
			for _, o := range t.Operations {
				c.Actions++
				if k := t.Name + "." + o.Name; used[k] {
					c.ActionsUsed++
				} else if used[t.Name] {
					c.Missing = append(c.Missing, k)
				}
			}
		}
		r.Coverage = append(r.Coverage, c)
		if !c.Complete() {
			r.fail(Failure{Domain: d.Name, Level: level, Message: "gold never uses " + strings.Join(c.Missing, ", ") + "; expected every tool and action in some scenario"})
		}
	}
}
