package harness

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/tokens"
)

// MeasureInterface is what an interface's tools show a model: its metrics
// with schema tokens in cl100k_base (package tokens) and the keywords the
// default backend (Ollama, whose tool types keep only a few) drops.
func MeasureInterface(iface *surface.Interface) surface.Metrics {
	return measureFor(agent.Default(), iface)
}

// measureFor measures an interface as backend b would send it.
func measureFor(b agent.Backend, iface *surface.Interface) surface.Metrics {
	return surface.Measure(iface, tokens.Count, func(schema []byte) int {
		n := 0
		for _, l := range agent.LostBySet(b, map[string]map[string][]byte{"": {"tool": schema}}) {
			for _, ks := range l {
				n += len(ks)
			}
		}
		return n
	})
}

// domainTasks are the tasks a config plays on a domain, in plan order:
// each interface it plays (results.Config.Played, a level as written as
// its identity interface), then each scenario it names.
func domainTasks(cfg *results.Config, d *speclang.Domain, lookup gold.Lookup, golds *goldCache) ([]*scenarioTask, error) {
	dom, msg := gold.Generated(d, lookup)
	if msg != "" {
		return nil, fmt.Errorf("domain %s: %s", d.Name, msg)
	}
	var out []*scenarioTask
	for _, spec := range cfg.Played() {
		iface, err := serve.DomainInterface(dom, spec)
		if err != nil {
			return nil, fmt.Errorf("domain %s: %w", d.Name, err)
		}
		for _, s := range d.Scenarios {
			if len(cfg.Scenarios) > 0 && !slices.Contains(cfg.Scenarios, s.ID) {
				continue
			}
			task, err := newScenarioTask(d, dom, iface, s, golds)
			if err != nil {
				return nil, fmt.Errorf("domain %s: %w", d.Name, err)
			}
			out = append(out, task)
		}
	}
	return out, nil
}

// interfaceSchemas are an interface's input schemas, by tool name.
func interfaceSchemas(iface *surface.Interface) map[string][]byte {
	out := map[string][]byte{}
	for _, t := range iface.Tools {
		out[t.Name] = t.InputSchema
	}
	return out
}

// encodeCall is a level gold call as the interface encodes it. Gold calls
// are calls the level accepts, which every interface encodes.
func encodeCall(iface *surface.Interface, tool string, args map[string]any) results.MessageCall {
	name, raw, err := iface.EncodeJSON(tool, args)
	if err != nil {
		panic(fmt.Sprintf("harness: %v", err)) // the interface was built from the level the gold is at
	}
	return results.MessageCall{Name: name, Arguments: raw}
}

// levelRecord is rec with its calls decoded into the level's, which is
// what the level's gold scores; a call the interface cannot decode stays
// as it was made, and scores as the wrong call it is. rec itself keeps
// the calls as the subject made them.
func levelRecord(iface *surface.Interface, rec *results.Record) *results.Record {
	out := *rec
	out.Calls = slices.Clone(rec.Calls)
	for i, c := range out.Calls {
		if src, args, err := iface.Decode(c.Tool, c.Arguments); err == nil {
			out.Calls[i].Tool, out.Calls[i].Arguments = src, args
		}
	}
	return &out
}

// validators check arguments against each of an interface's tools: the
// call decoded into its level tool's, then checked by valid, as the
// level checks its own calls.
func validators(iface *surface.Interface, valid func(levelTool string, args json.RawMessage) bool) map[string]func(json.RawMessage) bool {
	out := map[string]func(json.RawMessage) bool{}
	for _, lt := range iface.Level {
		name := iface.Name(lt.Name)
		out[name] = func(args json.RawMessage) bool {
			_, decoded, err := iface.Decode(name, args)
			return err == nil && valid(lt.Name, decoded)
		}
	}
	return out
}

// goldCalls are level gold calls as the interface encodes them.
func goldCalls(iface *surface.Interface, calls []*speclang.Call) []results.MessageCall {
	out := make([]results.MessageCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, encodeCall(iface, c.Tool, c.Args))
	}
	return out
}

// identify names the interface in a record unless it is the level's
// identity interface, whose records name the level only.
func identify(rec *results.Record, iface *surface.Interface) {
	if !iface.Spec.IsIdentity() {
		rec.Interface = iface.Spec.Name
	}
}

// shown is a task whose tools are an interface's: a scenario at an
// interface of its domain, an artifact at an interface of its regrouped
// source.
type shown interface {
	// shownAs is the task's domain (or source) and its interface.
	shownAs() (string, *surface.Interface)
}

func (t *scenarioTask) shownAs() (string, *surface.Interface) { return t.dom.Name, t.iface }

// interfaceInfos describes and measures every interface the grid plays,
// for run.json. Interfaces are measured in parallel: tokenizing a coarse
// level's tool list is most of a run's start-up.
func interfaceInfos(grid []Trial) map[string]results.InterfaceInfo {
	type shownTask struct {
		domain string
		iface  *surface.Interface
	}
	var todo []shownTask
	seen := map[string]bool{}
	for _, t := range grid {
		s, ok := t.Task.(shown)
		if !ok || seen[t.toolsKey()] {
			continue
		}
		seen[t.toolsKey()] = true
		domain, iface := s.shownAs()
		todo = append(todo, shownTask{domain, iface})
	}
	if len(todo) == 0 {
		return nil
	}
	metrics := make([]surface.Metrics, len(todo))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, st := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			metrics[i] = MeasureInterface(st.iface)
		}()
	}
	wg.Wait()
	out := map[string]results.InterfaceInfo{}
	for i, st := range todo {
		spec := st.iface.Spec
		out[results.InterfaceKey(st.domain, spec.Name)] = results.InterfaceInfo{Domain: st.domain, Interface: spec.Name, Level: spec.Level,
			Transforms: spec.Transforms.Normal(), Metrics: metrics[i]}
	}
	return out
}
