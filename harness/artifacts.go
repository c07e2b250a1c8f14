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

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/generator/runtime"
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
	// tools holds each source's tools, compiled; about is what the
	// agent's system prompt says of the system, for a generated domain.
	tools map[string][]scenarios.Tool
	about map[string]system
}

// system is what the agent's system prompt says of the system it serves.
type system struct{ Title, Description string }

// LoadArtifacts reads an artifacts file and the tools its artifacts call:
// from toolsPath, else from the file granite synth wrote beside it
// (scenarios.ToolsFile), else, for artifacts of a generated domain, from
// that domain's generated code at the artifact's level. Every expected
// call and assertion must name a tool the set lists.
func LoadArtifacts(path, toolsPath string, lookup Lookup) (*ArtifactSet, error) {
	arts, err := scenarios.ReadArtifacts(path)
	if err != nil {
		return nil, err
	}
	set := &ArtifactSet{Path: path, Artifacts: arts, tools: map[string][]scenarios.Tool{}, about: map[string]system{}}
	var shared []scenarios.Tool
	if toolsPath == "" {
		toolsPath = scenarios.ToolsFile(path)
		if _, err := os.Stat(toolsPath); errors.Is(err, fs.ErrNotExist) {
			toolsPath = ""
		}
	}
	if toolsPath != "" {
		if shared, err = scenarios.LoadTools(toolsPath); err != nil {
			return nil, err
		}
		set.ToolsPath = toolsPath
	}
	for _, a := range arts {
		src := a.Source
		if _, done := set.tools[src]; !done {
			tools := shared
			name, level, isDomain := scenarios.DomainSource(src)
			var rt *runtime.Domain
			if isDomain {
				rt, _ = lookup(name)
			}
			if rt != nil {
				set.about[src] = system{rt.Title, rt.Description}
			}
			if tools == nil {
				if rt == nil {
					return nil, fmt.Errorf("%s: artifact %s: no tools for its source %s; expected them in %s (granite synth --out writes it), or give the tools file", path, a.ID, src, scenarios.ToolsFile(path))
				}
				tools = scenarios.FromDomain(rt, level)
			}
			tools = append([]scenarios.Tool(nil), tools...) // each source compiles its own copy
			for i := range tools {
				if err := tools[i].Compile(); err != nil {
					return nil, fmt.Errorf("%s: %w", toolsOrigin(set, path), err)
				}
			}
			set.tools[src] = tools
		}
		listed := map[string]bool{}
		for _, t := range set.tools[src] {
			listed[t.Name] = true
		}
		for i, c := range a.ExpectedCalls {
			if !listed[c.Tool] {
				return nil, fmt.Errorf("%s: artifact %s: expected call %d names tool %q, which %s does not list", path, a.ID, i, c.Tool, toolsOrigin(set, src))
			}
		}
		for i, as := range a.Assertions {
			if !listed[as.Tool] {
				return nil, fmt.Errorf("%s: artifact %s: assertion %d names tool %q, which %s does not list", path, a.ID, i, as.Tool, toolsOrigin(set, src))
			}
		}
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
func (s *ArtifactSet) Tools(a *scenarios.Artifact) []scenarios.Tool { return s.tools[a.Source] }

// lost is what Ollama's tool types drop of each source's tools.
func (s *ArtifactSet) lost() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for src, tools := range s.tools {
		l := map[string][]string{}
		for _, t := range tools {
			if _, kw, err := ollamaParams(t.InputSchema); err != nil {
				l[t.Name] = []string{"(unreadable: " + err.Error() + ")"}
			} else if len(kw) > 0 {
				l[t.Name] = kw
			}
		}
		if len(l) > 0 {
			out[src] = l
		}
	}
	return out
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
	args map[string]toolArgs
	mu   sync.Mutex
	used []bool
}

// openReplay starts a replay server for an artifact behind an in-process
// MCP client.
func openReplay(ctx context.Context, tools []scenarios.Tool, a *scenarios.Artifact) (*Session, error) {
	srv := server.NewMCPServer("granite-replay", "1", server.WithToolCapabilities(false))
	r := &replay{art: a, used: make([]bool, len(a.ExpectedCalls)), args: map[string]toolArgs{}}
	for i := range tools {
		t := &tools[i]
		r.args[t.Name] = argsOf(t.InputSchema)
		mt := mcp.Tool{Name: t.Name, Description: t.Description, RawInputSchema: t.InputSchema}
		if len(t.OutputSchema) > 0 {
			mt.RawOutputSchema = t.OutputSchema
		}
		if len(t.Annotations) > 0 {
			b, _ := json.Marshal(t.Annotations)
			_ = json.Unmarshal(b, &mt.Annotations)
		}
		srv.AddTool(mt, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return r.answer(t, req), nil
		})
	}
	return connect(ctx, srv, "replay "+a.ID)
}

func (r *replay) answer(t *scenarios.Tool, req mcp.CallToolRequest) *mcp.CallToolResult {
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
			if idx < 0 && r.used[i] != fresh && c.Tool == t.Name && r.args[t.Name].same(args, c.Arguments) {
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
// keys, each with the same value by sameValue's loose rules, where an
// argument given its schema default counts as left out (the tool behaves
// the same either way).
func (ta toolArgs) same(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for _, m := range []map[string]any{g, w} {
		for k, v := range m {
			if d, ok := ta.defaults[k]; ok && sameValue(v, d, true) {
				delete(m, k)
			}
		}
	}
	return sameValue(g, w, false)
}

// Verdict is the outcome of one of an artifact's assertions.
type Verdict struct {
	Kind     string `json:"kind"`
	Tool     string `json:"tool"`
	Severity string `json:"severity"`
	Passed   bool   `json:"passed"`
	Why      string `json:"why,omitempty"`
}

// ScoreArtifact scores a trial of a synthesized artifact by its
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
//   - f1, action_f1, arg_acc and redundant calls as in Score, against the
//     expected calls.
func ScoreArtifact(rec *Record, tools []scenarios.Tool, a *scenarios.Artifact) (*Metrics, []Verdict) {
	byName := map[string]*scenarios.Tool{}
	args := map[string]toolArgs{}
	g := &Gold{exact: map[string]bool{"action": true}}
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
		args[tools[i].Name] = argsOf(tools[i].InputSchema)
		for name, exact := range args[tools[i].Name].exact {
			g.exact[name] = g.exact[name] || exact
		}
	}
	m := &Metrics{ZeroToolCall: len(rec.Calls) == 0, Timeout: rec.ErrorClass == ErrTimeout, ToolCalls: len(rec.Calls)}
	verdicts := make([]Verdict, len(a.Assertions))
	for i, as := range a.Assertions {
		v := Verdict{Kind: as.Kind, Tool: as.Tool, Severity: as.Severity}
		made := -1
		for k, c := range rec.Calls {
			if made < 0 && c.Tool == as.Tool && (len(as.Arguments) == 0 || args[as.Tool].same(c.Arguments, as.Arguments)) {
				made = k
			}
		}
		switch as.Kind {
		case "tool_call":
			v.Passed = made >= 0
			if !v.Passed {
				v.Why = "no call of " + as.Tool + " with the asserted arguments"
			}
		case "not_call":
			v.Passed = made < 0
			if !v.Passed {
				v.Why = fmt.Sprintf("call %d made it", made+1)
			}
		case "output_schema":
			v.Passed = true
			for k, c := range rec.Calls {
				if c.Tool != as.Tool || c.IsError {
					continue
				}
				if err := byName[as.Tool].OutputFits(c.Result); err != nil {
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
	if rec.StopReason == stopAnswer && m.BlockersFailed == 0 {
		m.TC = 1
	}
	for _, c := range a.ExpectedCalls {
		gc := &generator.Call{Tool: c.Tool}
		_ = json.Unmarshal(c.Arguments, &gc.Args)
		g.Calls = append(g.Calls, gc)
	}
	g.callScores(m, rec.Calls)
	return m, verdicts
}
