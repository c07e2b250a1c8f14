package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/harness/gold"
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
}

// system is what the agent's system prompt says of the system it serves.
type system struct{ Title, Description string }

// toolSet is one source's tools, compiled, with what comparing their
// arguments needs.
type toolSet struct {
	tools  []toolsrc.Tool
	byName map[string]*toolsrc.Tool
	args   map[string]toolArgs
	// exact names the arguments ArgAcc compares exactly, over all tools;
	// actions the tools that take an action argument.
	exact   map[string]bool
	actions map[string]bool
	about   system
}

// newToolSet compiles its own copy of the tools.
func newToolSet(tools []toolsrc.Tool, about system) (*toolSet, error) {
	ts := &toolSet{tools: append([]toolsrc.Tool(nil), tools...), byName: map[string]*toolsrc.Tool{},
		args: map[string]toolArgs{}, exact: map[string]bool{"action": true}, actions: map[string]bool{}, about: about}
	for i := range ts.tools {
		t := &ts.tools[i]
		if err := t.Compile(); err != nil {
			return nil, err
		}
		ts.byName[t.Name] = t
		ts.args[t.Name] = argsOf(t.InputSchema)
		for name, exact := range ts.args[t.Name].exact {
			ts.exact[name] = ts.exact[name] || exact
		}
		_, ts.actions[t.Name] = ts.args[t.Name].exact["action"]
	}
	return ts, nil
}

// LoadArtifacts reads an artifacts file and the tools its artifacts call:
// from toolsPath, else from the file granite synth wrote beside it
// (scenarios.ToolsFile), else, for artifacts of a generated domain, from
// that domain's generated code at the artifact's level. Every expected
// call and assertion must name a tool the set lists.
func LoadArtifacts(path, toolsPath string, lookup gold.Lookup) (*ArtifactSet, error) {
	arts, err := scenarios.ReadArtifacts(path)
	if err != nil {
		return nil, err
	}
	set := &ArtifactSet{Path: path, Artifacts: arts, sources: map[string]*toolSet{}, golds: map[string]*score.Gold{}}
	var shared []toolsrc.Tool
	if toolsPath == "" {
		toolsPath = scenarios.ToolsFile(path)
		if _, err := os.Stat(toolsPath); errors.Is(err, fs.ErrNotExist) {
			toolsPath = ""
		}
	}
	if toolsPath != "" {
		if shared, err = toolsrc.LoadTools(toolsPath); err != nil {
			return nil, err
		}
		set.ToolsPath = toolsPath
	}
	for _, a := range arts {
		src := a.Source
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
				return nil, fmt.Errorf("%s: artifact %s: expected call %d names tool %q, which %s does not list", path, a.ID, i, c.Tool, toolsOrigin(set, src))
			}
		}
		for i, as := range a.Assertions {
			if ts.byName[as.Tool] == nil {
				return nil, fmt.Errorf("%s: artifact %s: assertion %d names tool %q, which %s does not list", path, a.ID, i, as.Tool, toolsOrigin(set, src))
			}
		}
		var calls []*speclang.Call
		for _, c := range a.ExpectedCalls {
			gc := &speclang.Call{Tool: c.Tool}
			_ = json.Unmarshal(c.Arguments, &gc.Args)
			calls = append(calls, gc)
		}
		set.golds[a.ID] = score.NewCallGold(calls, ts.exact, ts.actions)
	}
	return set, nil
}

func toolsOrigin(set *ArtifactSet, fallback string) string {
	if set.ToolsPath != "" {
		return set.ToolsPath
	}
	return fallback
}

// Tools returns the tools an artifact is played with.
func (s *ArtifactSet) Tools(a *scenarios.Artifact) []toolsrc.Tool { return s.sources[a.Source].tools }

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
			if idx < 0 && r.used[i] != fresh && c.Tool == t.Name && r.ts.args[t.Name].same(args, c.Arguments) {
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

// toolArgs is what comparing a tool's arguments needs from its schema:
// the top-level arguments chosen from a fixed set (enum or const), which
// compare exactly in ArgAcc, and the declared defaults.
type toolArgs struct {
	exact    map[string]bool
	defaults map[string]any
}

func argsOf(schema json.RawMessage) toolArgs {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	out := toolArgs{exact: map[string]bool{}, defaults: map[string]any{}}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		_, enum := p["enum"]
		_, konst := p["const"]
		out.exact[name] = enum || konst
		if d, ok := p["default"]; ok {
			out.defaults[name] = d
		}
	}
	return out
}

// same reports whether two argument objects are the same call's: the same
// keys, each with the same value by score.SameValue's loose rules, where an
// argument given its schema default counts as left out (the tool behaves
// the same either way).
func (ta toolArgs) same(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for _, m := range []map[string]any{g, w} {
		for k, v := range m {
			if d, ok := ta.defaults[k]; ok && score.SameValue(v, d, true) {
				delete(m, k)
			}
		}
	}
	return score.SameValue(g, w, false)
}

// Score scores a trial of one of the set's artifacts by its
// assertions, by these definitions:
//
//   - tool_call passes when some call names the tool with the asserted
//     arguments (toolArgs.same: an argument at its schema default counts
//     as left out), or any arguments when none are asserted;
//   - not_call passes when no call does;
//   - output_schema passes when every successful call of the tool
//     returned JSON text fitting the tool's output schema;
//   - tc: 1 when the trial ended with an answer and no blocker failed
//     (failed warnings are counted, not fatal);
//   - f1, action_f1, arg_acc and redundant calls as in score.Score, against the
//     expected calls.
func (s *ArtifactSet) Score(rec *results.Record, a *scenarios.Artifact) (*results.Metrics, []results.Verdict) {
	return s.score(rec, a, rec.Calls, s.golds[a.ID])
}

// score is Score with the assertions judged on calls (the record's, or
// at a coarse level, the record's mapped back to the source's tools) and
// the call metrics against gold.
func (s *ArtifactSet) score(rec *results.Record, a *scenarios.Artifact, calls []results.Call, gold *score.Gold) (*results.Metrics, []results.Verdict) {
	ts := s.sources[a.Source]
	m := &results.Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.StopReason == results.StopTimeout, ToolCalls: len(rec.Calls)}
	verdicts := make([]results.Verdict, len(a.Assertions))
	for i, as := range a.Assertions {
		v := results.Verdict{Kind: as.Kind, Tool: as.Tool, Severity: as.Severity}
		made, refused, sent := -1, -1, -1
		for k, c := range calls {
			if sent < 0 && c.Tool == as.Tool && (len(as.Arguments) == 0 || ts.args[as.Tool].same(c.Arguments, as.Arguments)) {
				sent = k
			}
			if made < 0 && c.Tool == as.Tool && (len(as.Arguments) == 0 || ts.args[as.Tool].same(c.Arguments, as.Arguments)) {
				// A call the server refused as a schema violation did not
				// happen, whatever its arguments looked like.
				if c.IsError && !ts.byName[as.Tool].Valid(c.Arguments) {
					if refused < 0 {
						refused = k
					}
					continue
				}
				made = k
			}
		}
		switch as.Kind {
		case "tool_call":
			v.Passed = made >= 0
			switch {
			case !v.Passed && refused >= 0:
				v.Why = fmt.Sprintf("call %d of %s was refused as a schema violation", refused+1, as.Tool)
			case !v.Passed:
				v.Why = "no call of " + as.Tool + " with the asserted arguments"
			}
		case "not_call":
			// Sending the call is the failure, refused or not.
			v.Passed = sent < 0
			if !v.Passed {
				v.Why = fmt.Sprintf("call %d made it", sent+1)
			}
		case "output_schema":
			v.Passed = true
			for k, c := range calls {
				if c.Tool != as.Tool || c.IsError {
					continue
				}
				if err := ts.byName[as.Tool].OutputFits(c.Result); err != nil {
					v.Passed, v.Why = false, fmt.Sprintf("call %d: %v", k+1, err)
					break
				}
			}
		default:
			v.Why = "unknown assertion kind"
		}
		if !v.Passed {
			if as.Severity == "blocker" {
				m.BlockersFailed++
			} else {
				m.WarningsFailed++
			}
		}
		verdicts[i] = v
	}
	if rec.StopReason != results.StopAnswer {
		m.Why = append(m.Why, "the trial stopped without an answer ("+string(rec.StopReason)+")")
	}
	for _, v := range verdicts {
		if !v.Passed && v.Severity == "blocker" {
			m.Why = append(m.Why, fmt.Sprintf("blocker %s of %s fails: %s", v.Kind, v.Tool, v.Why))
		}
	}
	if rec.StopReason == results.StopAnswer && m.BlockersFailed == 0 {
		m.TC = 1
	}
	// An artifact has no store to compare byte for byte: its strict
	// verdict is its verdict.
	m.TCStrict = m.TC
	gold.ScoreCalls(m, rec.Calls)
	return m, verdicts
}
