// Package summary is what granite list says of a generated domain: its
// tools per level, its scenarios, what each backend's tool types drop,
// and the measures of its interfaces. It was the root harness package's,
// which keeps the runner and tasks alone.
package summary

import (
	"slices"

	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/stats"
	"github.com/mcpgranite/granite/internal/surface"
)

// DomainSummary is what granite list says of a generated domain: its
// tools per level, its scenarios and what each backend's tool types drop.
// It is one row of `granite list --json`.
type DomainSummary struct {
	Name       string                   `json:"name"`
	Title      string                   `json:"title"`
	Entities   []string                 `json:"entities"`
	Operations int                      `json:"operations"`
	Tools      map[level.Level]int      `json:"tools"`
	ToolNames  map[level.Level][]string `json:"tool_names"`
	// Scenarios counts scenarios per difficulty tier; MeanCalls is the
	// mean number of gold calls per level.
	Scenarios map[string]int          `json:"scenarios"`
	MeanCalls map[level.Level]float64 `json:"mean_gold_calls"`
	// Dropped lists, per level and tool, the schema keywords Ollama's tool
	// types drop before a model sees them (their constraints must be said
	// in the descriptions too); DroppedByBackend the same for each backend
	// (an OpenAI-compatible endpoint gets the whole schema).
	Dropped          map[level.Level]map[string][]string            `json:"dropped_by_ollama"`
	DroppedByBackend map[string]map[level.Level]map[string][]string `json:"dropped_by_backend"`
	// ContextByBackend says how each backend's models get their context:
	// num_ctx on Ollama's native API, the server's own over the OpenAI
	// API, which has no field for it.
	ContextByBackend map[string]string `json:"context_by_backend"`
}

// SummariseDomain summarises the generated domain d; sd, its spec, gives
// the scenarios (none when nil).
func SummariseDomain(d *mcpdomain.Domain, sd *speclang.Domain) DomainSummary {
	r := DomainSummary{Name: d.Name, Title: d.Title, Entities: d.Entities, Operations: len(d.Operations),
		Tools: map[level.Level]int{}, ToolNames: map[level.Level][]string{},
		Scenarios: map[string]int{}, MeanCalls: map[level.Level]float64{}, Dropped: map[level.Level]map[string][]string{},
		DroppedByBackend: map[string]map[level.Level]map[string][]string{}, ContextByBackend: agent.ContextNotes()}
	// The backends whose tool conversion the summary reports, in the
	// registry's order.
	converters := agent.Converters()
	for _, b := range converters {
		r.DroppedByBackend[b.Name()] = map[level.Level]map[string][]string{}
	}
	for _, l := range level.Levels {
		r.Tools[l] = len(d.Tools[l])
		for _, b := range converters {
			r.DroppedByBackend[b.Name()][l] = agent.ToolLoss(b, d.Tools[l])
		}
		r.Dropped[l] = r.DroppedByBackend[agent.Default().Name()][l]
		for _, t := range d.Tools[l] {
			r.ToolNames[l] = append(r.ToolNames[l], t.Name)
		}
	}
	if sd != nil {
		for _, s := range sd.Scenarios {
			r.Scenarios[s.Difficulty]++
			for _, l := range level.Levels {
				r.MeanCalls[l] += float64(len(s.Gold[l])) / float64(len(sd.Scenarios))
			}
		}
	}
	return r
}

// InterfaceSummary is an interface of a catalogue (a domain's standard
// interfaces, or a regrouped server's) and what its tools cost a model to
// read. It is one row of `granite list --interfaces --json`.
type InterfaceSummary struct {
	Domain    string      `json:"domain"`
	Interface string      `json:"interface"`
	Level     level.Level `json:"level"`
	// Transforms are the changes from the level as written, key=value in
	// surface.Choices order; empty for the level itself.
	Transforms []string        `json:"transforms"`
	Metrics    surface.Metrics `json:"metrics"`
	// GoldCalls are the gold calls per scenario at the interface, as its
	// composition makes them (absent for a server, which has no
	// scenarios); NoGold says why a domain's interface has none (a
	// composite without an atomic form).
	GoldCalls *float64 `json:"gold_calls,omitempty"`
	NoGold    string   `json:"no_gold,omitempty"`
}

// SummariseInterfaces measures each interface of the catalogue of domain
// (a domain's or a server's name), in the catalogue's order.
func SummariseInterfaces(domain string, cat []*surface.Interface) []InterfaceSummary {
	var rows []InterfaceSummary
	for _, iface := range cat {
		rows = append(rows, InterfaceSummary{Domain: domain, Interface: iface.Spec.Name, Level: iface.Spec.Level,
			Transforms: append([]string{}, iface.Spec.Changes()...), Metrics: harness.MeasureInterface(iface)})
	}
	return rows
}

// SummariseDomainInterfaces measures a domain's standard catalogue and,
// at each level that offers a composite operation, its atomic interface,
// and at each that offers a workflow, its composite one (the catalogue
// leaves compositions out: they change the gold, not the reading), each
// with its gold calls per scenario.
func SummariseDomainInterfaces(sd *speclang.Domain, d *mcpdomain.Domain) ([]InterfaceSummary, error) {
	cat, err := serve.DomainInterfaces(d)
	if err != nil {
		return nil, err
	}
	comps, err := serve.Compositions(d)
	if err != nil {
		return nil, err
	}
	cat = append(cat, comps...)
	// Each composition comes last among its level's.
	slices.SortStableFunc(cat, func(a, b *surface.Interface) int {
		return slices.Index(level.Levels, a.Spec.Level) - slices.Index(level.Levels, b.Spec.Level)
	})
	rows := SummariseInterfaces(d.Name, cat)
	for i, iface := range cat {
		var calls []float64
		for _, s := range sd.Scenarios {
			composed, err := gold.Composed(sd, d, iface.Spec, s)
			if err != nil {
				rows[i].NoGold = s.ID + ": " + err.Error()
				calls = nil
				break
			}
			calls = append(calls, float64(len(composed)))
		}
		if len(calls) > 0 {
			mean := stats.Mean(calls)
			rows[i].GoldCalls = &mean
		}
	}
	return rows, nil
}
