package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// An artifact run with granularities plays each artifact at each level:
// its source's tools regrouped (scenarios/regroup), its expected calls
// mapped onto the level's coarse tools and actions as spec gold is
// derived, and its replay server (or a live source, started afresh per
// trial) behind the regrouped server. Assertions, written against the
// source's tools, judge the trial's calls mapped back to them.

// regrouping is what playing a set's artifacts at levels needs, per
// source.
type regrouping struct {
	ifaces map[string]*regroup.Grouping
	// golds are each artifact's expected calls at each level, by
	// artifact id and level.
	golds map[string]*score.Gold
	// cmd or url is a live source to play on instead of replay servers.
	cmd, url string
}

// Regroup prepares the set to be played at levels: groupsPath is a
// groups file for every source's tools (empty: derived for each), cmd or
// url a live source.
func (s *ArtifactSet) Regroup(groupsPath, cmd, url string, levels []level.Level) error {
	rg := &regrouping{ifaces: map[string]*regroup.Grouping{}, golds: map[string]*score.Gold{}, cmd: cmd, url: url}
	for src, ts := range s.sources {
		var g *regroup.Groups
		var err error
		if groupsPath != "" {
			g, err = regroup.LoadGroups(groupsPath, ts.tools)
		} else {
			g = regroup.Derive(regroup.ServerName(sourceName(src)), ts.tools)
		}
		if err != nil {
			return err
		}
		iface, err := regroup.Build(ts.tools, g)
		if err != nil {
			return fmt.Errorf("regroup %s: %w", src, err)
		}
		rg.ifaces[src] = iface
	}
	for i := range s.Artifacts {
		a := &s.Artifacts[i]
		iface := rg.ifaces[a.Source]
		for _, lv := range levels {
			exact, actions := map[string]bool{"action": true}, map[string]bool{}
			for _, c := range iface.Levels[lv] {
				actions[c.Name] = c.HasAction()
				for name, ex := range score.ArgsOf(c.InputSchema).Exact {
					exact[name] = exact[name] || ex
				}
			}
			var calls []*speclang.Call
			for _, c := range a.ExpectedCalls {
				tool, args, err := iface.MapCall(lv, c.Tool, c.Arguments)
				if err != nil {
					return fmt.Errorf("%s: artifact %s: %w", s.Path, a.ID, err)
				}
				gc := &speclang.Call{Tool: tool}
				_ = json.Unmarshal(args, &gc.Args)
				calls = append(calls, gc)
			}
			rg.golds[a.ID+"/"+string(lv)] = score.NewCallGold(calls, exact, actions)
		}
	}
	s.regrouped = rg
	return nil
}

// sourceName is a server name for derived tool names from an artifact's
// source ("mcp:CMD", "tools:FILE", "domain:D/L"): the first path segment
// naming a server (".../server-memory/dist/index.js"), else the last
// field's file name.
func sourceName(src string) string {
	_, rest, ok := strings.Cut(src, ":")
	if !ok {
		rest = src
	}
	fields := strings.Fields(rest)
	for _, f := range fields {
		for _, seg := range strings.Split(f, "/") {
			if strings.Contains(strings.ToLower(seg), "server") {
				return seg
			}
		}
	}
	if len(fields) == 0 {
		return rest
	}
	last := filepath.Base(fields[len(fields)-1])
	return strings.TrimSuffix(last, filepath.Ext(last))
}

// groupedTask is an artifact played at an interface of its regrouped
// source (a level as regrouped is its identity interface).
type groupedTask struct {
	artifactTask
	iface *surface.Interface
}

// at is the regrouped level the interface shows.
func (t *groupedTask) at() level.Level { return t.iface.Spec.Level }

func (t *groupedTask) regrouped() *regroup.Grouping { return t.set.regrouped.ifaces[t.art.Source] }

func (t *groupedTask) identify(rec *results.Record) {
	t.artifactTask.identify(rec)
	rec.Level = t.at()
	identify(rec, t.iface)
}

func (t *groupedTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	return t.openWith(ctx, nil)
}

// openWith opens the trial's regrouped server with the faults sched
// draws (nil: none) injected into the calls that reach the source.
func (t *groupedTask) openWith(ctx context.Context, sched *faults.Schedule) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	rgi := t.regrouped()
	valid := validators(t.iface, func(name string, args json.RawMessage) bool { return rgi.Valid(t.at(), name, args) })
	rg := t.set.regrouped
	var up serve.Caller
	var closers []func()
	if rg.cmd != "" || rg.url != "" {
		c, closeUp, err := toolsrc.ConnectAfresh(ctx, rg.cmd, rg.url)
		if err != nil {
			return nil, nil, fmt.Errorf("live source: %w", err)
		}
		up = c
		closers = append(closers, closeUp)
	} else {
		ts := t.set.sources[t.set.sourceOf(t.art)]
		r := &replay{art: t.art, ts: ts, used: make([]bool, len(t.art.ExpectedCalls))}
		up = serve.CallerFunc(func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tool := ts.byName[req.Params.Name]
			if tool == nil {
				return mcp.NewToolResultError(fmt.Sprintf("unknown tool %q", req.Params.Name)), nil
			}
			return r.answer(tool, req), nil
		})
	}
	srv, err := rgi.NewServer("granite-regrouped", t.at(), serve.FaultCaller(up, rgi.Source, sched))
	if err == nil {
		var s *serve.Session
		if s, err = serve.Connect(ctx, srv, "regrouped "+t.art.ID+" "+string(t.at())); err == nil {
			s.OnClose(closers...)
			if t.iface.Spec.Plain() {
				return s, valid, nil
			}
			front, err := serve.Front(ctx, s, t.iface, "regrouped "+t.art.ID+" "+t.iface.Spec.Name)
			if err == nil {
				return front, valid, nil
			}
			s.Close()
			return nil, nil, err
		}
	}
	for _, c := range closers {
		c()
	}
	return nil, nil, err
}

func (t *groupedTask) toolsKey() string { return results.InterfaceKey(t.art.Source, t.iface.Spec.Name) }

func (t *groupedTask) schemas() map[string][]byte { return interfaceSchemas(t.iface) }

// goldCalls are the artifact's expected calls mapped onto the level, as
// the interface encodes them.
func (t *groupedTask) goldCalls() []results.MessageCall {
	return goldCalls(t.iface, t.set.regrouped.golds[t.art.ID+"/"+string(t.at())].Calls)
}

// score judges the assertions on the trial's calls mapped back to the
// source's tools, and the call metrics against the level's gold.
func (t *groupedTask) score(rec *results.Record, _ *serve.Session) (*results.Metrics, error) {
	rgi := t.regrouped()
	rec = levelRecord(t.iface, rec)
	source := make([]results.Call, len(rec.Calls))
	for i, c := range rec.Calls {
		source[i] = c
		source[i].Tool, source[i].Arguments, _ = rgi.Unmap(t.at(), c.Tool, c.Arguments)
	}
	m, verdicts := t.set.score(rec, t.art, source, t.set.regrouped.golds[t.art.ID+"/"+string(t.at())])
	rec.Assertions = verdicts
	if rec.Faults != "" {
		// Recovery is not judged: no store says an external tool's
		// intended effect holds (docs/faults.md).
		for _, c := range rec.Calls {
			if c.Fault != "" {
				m.FaultsInjected++
			}
		}
	}
	return m, nil
}

// planGrouped plans model, artifact, level, fault setting, repetition,
// with ids <model>/<artifact id>/<level>/r<n> (a setting that injects
// faults adds its name before the repetition); a live source without
// levels plays at L4, the server as published.
func planGrouped(cfg *results.Config, set *ArtifactSet) ([]Trial, error) {
	// A source without levels asked for plays at L4, as published.
	played := cfg.Played()
	if len(played) == 0 {
		played = []surface.Spec{surface.Identity(level.L4)}
	}
	var needed []level.Level
	for _, spec := range played {
		if !slices.Contains(needed, spec.Level) {
			needed = append(needed, spec.Level)
		}
	}
	if err := set.Regroup(cfg.Groups, cfg.ArtifactCmd, cfg.ArtifactURL, needed); err != nil {
		return nil, err
	}
	// Each source's interfaces are built once, shared by its artifacts.
	surfaces := map[string][]*surface.Interface{}
	for src, rg := range set.regrouped.ifaces {
		for _, spec := range played {
			si, err := surface.Build(spec, regroup.ServerName(sourceName(src)), rg.SurfaceTools(spec.Level))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", src, err)
			}
			surfaces[src] = append(surfaces[src], si)
		}
	}
	var out []Trial
	for _, model := range cfg.ModelNames() {
		for i := range set.Artifacts {
			a := &set.Artifacts[i]
			for _, si := range surfaces[a.Source] {
				task := &groupedTask{artifactTask: artifactTask{art: a, set: set}, iface: si}
				for _, setting := range cfg.Settings() {
					for rep := 1; rep <= cfg.Repetitions; rep++ {
						out = append(out, Trial{Index: len(out), ID: results.FaultTrialID(model, a.ID, si.Spec.Name, setting, rep), Model: model, Repetition: rep, Faults: setting, Task: task})
					}
				}
			}
		}
	}
	return out, nil
}

func (t *groupedTask) shownAs() (string, *surface.Interface) { return t.art.Source, t.iface }
