package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
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
	ifaces map[string]*regroup.Interface
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
	rg := &regrouping{ifaces: map[string]*regroup.Interface{}, golds: map[string]*score.Gold{}, cmd: cmd, url: url}
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

// groupedTask is an artifact played at a level of its regrouped source.
type groupedTask struct {
	artifactTask
	at level.Level
	// surf is the interface the level is shown through; nil is the
	// level as regrouped.
	surf *surface.Interface
}

func (t *groupedTask) iface() *regroup.Interface { return t.set.regrouped.ifaces[t.art.Source] }

func (t *groupedTask) identify(rec *results.Record) {
	t.artifactTask.identify(rec)
	rec.Level = t.at
	if t.surf != nil {
		rec.Interface = t.surf.Spec.Name
	}
}

func (t *groupedTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	iface := t.iface()
	valid := map[string]func(json.RawMessage) bool{}
	for _, c := range iface.Levels[t.at] {
		name := c.Name
		if t.surf != nil {
			name = t.surf.Name(c.Name)
		}
		valid[name] = func(args json.RawMessage) bool {
			if t.surf != nil {
				_, decoded, err := t.surf.Decode(name, args)
				if err != nil {
					return false
				}
				args = decoded
			}
			return iface.Valid(t.at, c.Name, args)
		}
	}
	rg := t.set.regrouped
	var up serve.Caller
	var closers []func()
	if rg.cmd != "" || rg.url != "" {
		// A live source, started afresh in a folder of its own: nothing
		// it keeps (a memory file) reaches the next trial.
		dir, err := os.MkdirTemp("", "granite-trial-")
		if err != nil {
			return nil, nil, err
		}
		c, _, err := toolsrc.ConnectIn(ctx, rg.cmd, rg.url, dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, fmt.Errorf("live source: %w", err)
		}
		up = c
		closers = append(closers, func() { c.Close(); os.RemoveAll(dir) })
	} else {
		ts := t.set.sources[t.art.Source]
		r := &replay{art: t.art, ts: ts, used: make([]bool, len(t.art.ExpectedCalls))}
		up = serve.CallerFunc(func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tool := ts.byName[req.Params.Name]
			if tool == nil {
				return mcp.NewToolResultError(fmt.Sprintf("unknown tool %q", req.Params.Name)), nil
			}
			return r.answer(tool, req), nil
		})
	}
	srv, err := iface.NewServer("granite-regrouped", t.at, up)
	if err == nil {
		var s *serve.Session
		if s, err = serve.Connect(ctx, srv, "regrouped "+t.art.ID+" "+string(t.at)); err == nil {
			s.OnClose(closers...)
			if t.surf == nil {
				return s, valid, nil
			}
			front, err := serve.Front(ctx, s, t.surf, "regrouped "+t.art.ID+" "+t.surf.Spec.Name)
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

func (t *groupedTask) toolsKey() string {
	if t.surf != nil {
		return results.InterfaceKey(t.art.Source, t.surf.Spec.Name)
	}
	return t.art.Source + "/" + string(t.at)
}

func (t *groupedTask) schemas() map[string][]byte {
	if t.surf != nil {
		return interfaceSchemas(t.surf)
	}
	out := map[string][]byte{}
	for _, c := range t.iface().Levels[t.at] {
		out[c.Name] = c.InputSchema
	}
	return out
}

// goldCalls are the artifact's expected calls mapped onto the level.
func (t *groupedTask) goldCalls() []results.MessageCall {
	var out []results.MessageCall
	for _, c := range t.set.regrouped.golds[t.art.ID+"/"+string(t.at)].Calls {
		if t.surf != nil {
			out = append(out, encodeCall(t.surf, c.Tool, c.Args))
			continue
		}
		out = append(out, results.MessageCall{Name: c.Tool, Arguments: c.JSON()})
	}
	return out
}

// score judges the assertions on the trial's calls mapped back to the
// source's tools, and the call metrics against the level's gold.
func (t *groupedTask) score(rec *results.Record, _ *serve.Session) (*results.Metrics, error) {
	iface := t.iface()
	rec = levelRecord(t.surf, rec)
	source := make([]results.Call, len(rec.Calls))
	for i, c := range rec.Calls {
		source[i] = c
		source[i].Tool, source[i].Arguments, _ = iface.Unmap(t.at, c.Tool, c.Arguments)
	}
	m, verdicts := t.set.score(rec, t.art, source, t.set.regrouped.golds[t.art.ID+"/"+string(t.at)])
	rec.Assertions = verdicts
	return m, nil
}

// planGrouped plans model, artifact, level, repetition, with ids
// <model>/<artifact id>/<level>/r<n>; a live source without levels plays
// at L4, the server as published.
func planGrouped(cfg *results.Config, set *ArtifactSet) ([]Trial, error) {
	levels := cfg.Granularities
	if len(levels) == 0 && len(cfg.Interfaces) == 0 {
		levels = []level.Level{level.L4}
	}
	needed := slices.Clone(levels)
	for _, spec := range cfg.Interfaces {
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
		for _, spec := range cfg.Interfaces {
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
			var tasks []*groupedTask
			for _, lv := range levels {
				tasks = append(tasks, &groupedTask{artifactTask: artifactTask{art: a, set: set}, at: lv})
			}
			for _, si := range surfaces[a.Source] {
				tasks = append(tasks, &groupedTask{artifactTask: artifactTask{art: a, set: set}, at: si.Spec.Level, surf: si})
			}
			for _, task := range tasks {
				name := string(task.at)
				if task.surf != nil {
					name = task.surf.Spec.Name
				}
				for rep := 1; rep <= cfg.Repetitions; rep++ {
					out = append(out, Trial{Index: len(out), ID: results.InterfaceTrialID(model, a.ID, name, rep), Model: model, Repetition: rep, Task: task})
				}
			}
		}
	}
	return out, nil
}

func (t *groupedTask) shownAs() (string, *surface.Interface, error) {
	if t.surf != nil {
		return t.art.Source, t.surf, nil
	}
	si, err := surface.Build(surface.Spec{Name: string(t.at), Level: t.at}, regroup.ServerName(sourceName(t.art.Source)), t.iface().SurfaceTools(t.at))
	return t.art.Source, si, err
}
