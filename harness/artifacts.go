package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// ArtifactSet is a file of synthesized scenarios (granite synth --out) with
// the tools they were made from, ready to be played on replay servers.
type ArtifactSet struct {
	Path string
	// ToolsPath is the tools/list file the tools came from; empty when
	// they came from generated code.
	ToolsPath string
	Artifacts []scenarios.Artifact
	// sources holds each source's tools; golds each artifact's expected
	// calls as ArgAcc and F1 read them, by artifact id. Both are built
	// once, at load, and only read by the trials.
	sources map[string]*toolSet
	golds   map[string]*score.Gold
	// regrouped is set by Regroup, for a run at levels.
	regrouped *regrouping
	// levelled is set when the artifacts are levels' forms of reference
	// scenarios, each played on its own live command: commands holds it
	// by artifact id.
	levelled bool
	commands map[string]string
}

// system is what the agent's system prompt says of the system it serves.
type system struct{ Title, Description string }

// toolSet is one source's tools, compiled, with what comparing their
// arguments needs.
type toolSet struct {
	tools  []toolsrc.Tool
	byName map[string]*toolsrc.Tool
	args   map[string]score.ToolArgs
	// exact names the arguments ArgAcc compares exactly, over all tools;
	// actions the tools that take an action argument.
	exact   map[string]bool
	actions map[string]bool
	about   system
}

// newToolSet compiles its own copy of the tools.
func newToolSet(tools []toolsrc.Tool, about system) (*toolSet, error) {
	ts := &toolSet{tools: append([]toolsrc.Tool(nil), tools...), byName: map[string]*toolsrc.Tool{},
		args: map[string]score.ToolArgs{}, exact: map[string]bool{"action": true}, actions: map[string]bool{}, about: about}
	for i := range ts.tools {
		t := &ts.tools[i]
		if err := t.Compile(); err != nil {
			return nil, err
		}
		ts.byName[t.Name] = t
		ts.args[t.Name] = score.ArgsOf(t.InputSchema)
		for name, exact := range ts.args[t.Name].Exact {
			ts.exact[name] = ts.exact[name] || exact
		}
		_, ts.actions[t.Name] = ts.args[t.Name].Exact["action"]
	}
	return ts, nil
}

// LoadArtifacts reads a config's artifacts file (cfg.Artifacts) and the
// tools its artifacts call: from cfg.ArtifactTools, else from the file
// granite synth wrote beside it (scenarios.ToolsFile), else, for
// artifacts of a generated domain, from that domain's generated code at
// the artifact's level. Artifacts that are one level's form of a
// reference scenario (scenario and level set) take theirs from the live
// server cfg.ArtifactCmd expands to for them (see CommandTemplate), each
// distinct command listed once; only those at cfg.Granularities, when it
// names some, are kept. Every expected call and assertion must name a
// tool the set lists.
func LoadArtifacts(ctx context.Context, cfg *results.Config, lookup gold.Lookup) (*ArtifactSet, error) {
	path, toolsPath := cfg.Artifacts, cfg.ArtifactTools
	arts, err := scenarios.ReadArtifacts(path)
	if err != nil {
		return nil, err
	}
	set := &ArtifactSet{Path: path, Artifacts: arts, sources: map[string]*toolSet{}, golds: map[string]*score.Gold{}}
	if set.levelled, err = reference.CheckConfig(path, arts, cfg); err != nil {
		return nil, err
	}
	if set.levelled {
		if err := set.listLevels(ctx, cfg.ArtifactCmd, cfg.Granularities); err != nil {
			return nil, err
		}
		arts = set.Artifacts
	}
	var shared []toolsrc.Tool
	if toolsPath == "" && !set.levelled {
		toolsPath = scenarios.ToolsFile(path)
		if _, err := os.Stat(toolsPath); errors.Is(err, fs.ErrNotExist) {
			toolsPath = ""
		}
	}
	if toolsPath != "" && !set.levelled {
		if shared, err = toolsrc.LoadTools(toolsPath); err != nil {
			return nil, err
		}
		set.ToolsPath = toolsPath
	}
	for _, a := range arts {
		src := set.sourceOf(&a)
		ts, done := set.sources[src]
		if !done {
			tools := shared
			name, level, isDomain := scenarios.DomainSource(src)
			var dom *mcpdomain.Domain
			var about system
			if isDomain {
				dom, _ = lookup(name)
			}
			if dom != nil {
				about = system{dom.Title, dom.Description}
			}
			if tools == nil {
				if dom == nil {
					return nil, fmt.Errorf("%s: artifact %s: no tools for its source %s; expected them in %s (granite synth --out writes it), or give the tools file", path, a.ID, src, scenarios.ToolsFile(path))
				}
				tools = toolsrc.FromDomain(dom, level)
			}
			if ts, err = newToolSet(tools, about); err != nil {
				return nil, fmt.Errorf("%s: %w", toolsOrigin(set, path), err)
			}
			set.sources[src] = ts
		}
		for i, c := range a.ExpectedCalls {
			if ts.byName[c.Tool] == nil {
				return nil, fmt.Errorf("%s: artifact %s: expected call %d names tool %q, which %s does not list%s", path, a.ID, i, c.Tool, toolsOrigin(set, src), reference.LevelHint(&a))
			}
		}
		for i, as := range a.Assertions {
			if ts.byName[as.Tool] == nil {
				return nil, fmt.Errorf("%s: artifact %s: assertion %d names tool %q, which %s does not list%s", path, a.ID, i, as.Tool, toolsOrigin(set, src), reference.LevelHint(&a))
			}
		}
		var calls []*speclang.Call
		for _, c := range a.ExpectedCalls {
			// An optional call of a reference scenario's gold is one its
			// metrics leave out: granite's leave it out too.
			if c.Optional {
				continue
			}
			gc := &speclang.Call{Tool: c.Tool}
			_ = json.Unmarshal(c.Arguments, &gc.Args)
			calls = append(calls, gc)
		}
		set.golds[a.ID] = score.NewCallGold(calls, ts.exact, ts.actions)
	}
	return set, nil
}

func toolsOrigin(set *ArtifactSet, fallback string) string {
	if set.levelled {
		return "the command " + strings.TrimPrefix(fallback, commandSource)
	}
	if set.ToolsPath != "" {
		return set.ToolsPath
	}
	return fallback
}

// Tools returns the tools an artifact is played with.
func (s *ArtifactSet) Tools(a *scenarios.Artifact) []toolsrc.Tool {
	return s.sources[s.sourceOf(a)].tools
}

// sourceOf names the tool set an artifact is played with: its live
// command for one level's form of a reference scenario, else its source.
func (s *ArtifactSet) sourceOf(a *scenarios.Artifact) string {
	if cmd, ok := s.commands[a.ID]; ok {
		return commandSource + cmd
	}
	return a.Source
}

// replay plays an artifact's tools. A call whose arguments match an
// expected call not answered yet (same tool; same arguments by the
// harness's value comparison, key order and number spelling ignored, an
// argument at its schema default the same as one left out) gets
// that call's recorded output; a repeat of an answered call gets the same
// output again. Arguments the tool's schema rejects get the validator's
// reasons, as a real server would answer; any other call gets an error
// saying nothing was recorded for it.
type replay struct {
	art  *scenarios.Artifact
	ts   *toolSet
	mu   sync.Mutex
	used []bool
}

// openReplay starts a replay server for an artifact behind an in-process
// MCP client.
func openReplay(ctx context.Context, ts *toolSet, a *scenarios.Artifact) (*serve.Session, error) {
	srv := server.NewMCPServer("granite-replay", "1", server.WithToolCapabilities(false))
	r := &replay{art: a, ts: ts, used: make([]bool, len(a.ExpectedCalls))}
	for i := range ts.tools {
		t := &ts.tools[i]
		srv.AddTool(t.MCP(), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return r.answer(t, req), nil
		})
	}
	return serve.Connect(ctx, srv, "replay "+a.ID)
}

func (r *replay) answer(t *toolsrc.Tool, req mcp.CallToolRequest) *mcp.CallToolResult {
	args := json.RawMessage("{}")
	if req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return mcp.NewToolResultError("arguments: " + err.Error())
		}
		args = b
	}
	if err := t.Validate(args); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", t.Name, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// First an expected call not answered yet, then an answered one (a
	// repeat).
	idx := -1
	for _, fresh := range []bool{true, false} {
		for i, c := range r.art.ExpectedCalls {
			if idx < 0 && r.used[i] != fresh && c.Tool == t.Name && r.ts.args[t.Name].Same(args, c.Arguments) {
				idx = i
			}
		}
	}
	if idx < 0 {
		return mcp.NewToolResultError(fmt.Sprintf("nothing is recorded for %s with these arguments: this replay server answers only the calls its scenario was synthesized with", t.Name))
	}
	r.used[idx] = true
	for _, m := range r.art.MockOutputs {
		if m.Call == idx {
			if m.IsError {
				return mcp.NewToolResultError(m.Output)
			}
			// A tool with an output schema returns its result as
			// structured content too, as the MCP spec asks.
			var structured map[string]any
			if len(t.OutputSchema) > 0 && json.Unmarshal([]byte(m.Output), &structured) == nil {
				return mcp.NewToolResultStructured(structured, m.Output)
			}
			return mcp.NewToolResultText(m.Output)
		}
	}
	return mcp.NewToolResultError(fmt.Sprintf("nothing is recorded for %s with these arguments: the scenario has no output for this call", t.Name))
}

// Score scores a trial of one of the set's artifacts by its assertions
// (see score.Assertions), against its expected calls.
func (s *ArtifactSet) Score(rec *results.Record, a *scenarios.Artifact) (*results.Metrics, []results.Verdict) {
	return s.score(rec, a, rec.Calls, s.golds[a.ID])
}

// score is Score with the assertions judged on calls (the record's, or
// at a coarse level, the record's mapped back to the source's tools), the
// call metrics against gold, and the reference's metrics (metrics.paper)
// of the record's calls against gold.
func (s *ArtifactSet) score(rec *results.Record, a *scenarios.Artifact, calls []results.Call, gold *score.Gold) (*results.Metrics, []results.Verdict) {
	asserts := make([]score.Assertion, len(a.Assertions))
	for i, as := range a.Assertions {
		asserts[i] = score.Assertion{Kind: as.Kind, Tool: as.Tool, Arguments: as.Arguments, Severity: as.Severity}
	}
	m, verdicts := score.Assertions(rec, asserts, calls, s.sources[s.sourceOf(a)], gold)
	// By the reference's definitions too: the agent's calls against the
	// gold of the level it played.
	m.Paper = paper.Score(paper.FromRecord(rec), paper.GoldOf(gold.Calls, a.Contains))
	return m, verdicts
}

// Args, Valid and OutputFits are what the scorer asks of the tools
// (score.AssertedTools).
func (ts *toolSet) Args(tool string) score.ToolArgs { return ts.args[tool] }

func (ts *toolSet) Valid(tool string, args json.RawMessage) bool { return ts.byName[tool].Valid(args) }

func (ts *toolSet) OutputFits(tool, result string) error { return ts.byName[tool].OutputFits(result) }
