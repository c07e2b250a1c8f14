package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// writeArtifacts writes artifacts as granite synth --out does, with the
// tools beside them unless tools is nil.
func writeArtifacts(t testing.TB, arts []scenarios.Artifact, tools []toolsrc.Tool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arts.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := scenarios.WriteArtifacts(f, arts); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if tools != nil {
		if err := toolsrc.WriteTools(scenarios.ToolsFile(path), tools); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// artifactConfig is an artifact run with the documented defaults.
func artifactConfig(path, host string, models ...string) *results.Config {
	c := &results.Config{Name: "artifacts", Models: results.Entries(models...), Artifacts: path, Ollama: results.OllamaConfig{Host: host}}
	Defaults(c)
	return c
}

// TestBuiltinAgentsPlayArtifacts runs the built-in agents over offline
// artifacts of a generated domain (tools from its generated code) and of
// public-style external tools (tools from the file synth writes beside
// the artifacts). The oracle must pass every artifact with outputs equal
// to the recorded ones; the silent agent must pass exactly the artifacts
// that expect no call (refusing an invalid request is right).
func TestBuiltinAgentsPlayArtifacts(t *testing.T) {
	spec, lookup := tinySpec(t)
	dom, _ := lookup(spec.Domains[0].Name)
	external, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct {
		name    string
		source  string
		tools   []scenarios.Tool
		sidecar bool
	}{
		{"generated domain", "domain:" + dom.Name + "/L2", scenarios.FromDomain(dom, level.L2), false},
		{"external tools", "tools:public_style_tools.json", scenarios.Listed(external), true},
	} {
		t.Run(src.name, func(t *testing.T) {
			arts, err := scenarios.Offline(src.source, src.tools, 0)
			if err != nil {
				t.Fatal(err)
			}
			var sidecar []toolsrc.Tool
			if src.sidecar {
				sidecar = scenarios.Sources(src.tools)
			}
			path := writeArtifacts(t, arts, sidecar)
			recs, err := runTrials(t, artifactConfig(path, "", agent.Oracle, agent.Silent), spec, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2*len(arts) {
				t.Fatalf("%d records for %d artifacts and 2 agents", len(recs), len(arts))
			}
			byID := map[string]scenarios.Artifact{}
			for _, a := range arts {
				byID[a.ID] = a
			}
			refusals := 0
			for _, r := range recs {
				a := byID[r.Scenario]
				if r.Artifacts != path || r.Domain != src.source || r.Difficulty != a.Tier || len(r.Assertions) != len(a.Assertions) {
					t.Fatalf("%s: artifacts %q domain %q difficulty %q, %d verdicts", r.TrialID, r.Artifacts, r.Domain, r.Difficulty, len(r.Assertions))
				}
				wantTC := 1.0
				if r.Model == agent.Silent && len(a.ExpectedCalls) > 0 {
					wantTC = 0
				}
				if r.Metrics.TC != wantTC || r.Model == agent.Oracle && (r.Metrics.WarningsFailed != 0 || r.Metrics.F1 != 1 || r.Metrics.ArgAcc != 1) {
					t.Errorf("%s: metrics %+v, verdicts %+v; want tc %v", r.TrialID, r.Metrics, r.Assertions, wantTC)
				}
				// The reference's metrics of the same calls: full for the
				// oracle, none of a silent agent's calls when calls were due.
				if p := r.Metrics.Paper; p == nil || r.Model == agent.Oracle && (p.ToolF1 != 1 || p.ArgAcc != 1 || p.EditDistance != 0) ||
					r.Model == agent.Silent && len(a.ExpectedCalls) > 0 && (p.ToolF1 != 0 || p.EditDistance != 1) {
					t.Errorf("%s: metrics.paper %+v", r.TrialID, p)
				}
				if r.Model == agent.Oracle {
					for i, c := range r.Calls {
						if c.Result != a.MockOutputs[i].Output || c.IsError != a.MockOutputs[i].IsError {
							t.Errorf("%s: call %d answered %q, recorded %q", r.TrialID, i, c.Result, a.MockOutputs[i].Output)
						}
					}
				}
				if len(a.ExpectedCalls) == 0 {
					refusals++
				}
			}
			if refusals == 0 {
				t.Errorf("no artifact expects a refusal; the offline backend should write some")
			}
		})
	}
}

// TestReplayServer: a matching call gets its recorded output, in any
// order and again when repeated; arguments the schema rejects get the
// validator's reasons; other calls get an error; the tools are listed with
// their schemas as published.
func TestReplayServer(t *testing.T) {
	tools, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tool *toolsrc.Tool
	var valid []json.RawMessage
	for i := range tools {
		arts, err := scenarios.Offline("x", scenarios.Listed(tools[i:i+1]), 0)
		if err != nil {
			t.Fatal(err)
		}
		var calls []json.RawMessage
		for _, a := range arts {
			for _, c := range a.ExpectedCalls {
				calls = append(calls, c.Arguments)
			}
		}
		if len(calls) >= 2 && strings.Contains(string(tools[i].InputSchema), "required") {
			tool, valid = &tools[i], calls[:2]
			break
		}
	}
	if tool == nil {
		t.Fatal("no fixture tool has two distinct valid calls")
	}
	a := &scenarios.Artifact{ID: "a", ExpectedCalls: []scenarios.ExpectedCall{{Tool: tool.Name, Arguments: valid[0]}, {Tool: tool.Name, Arguments: valid[1]}},
		MockOutputs: []scenarios.MockOutput{{Call: 0, Output: `{"first":1}`}, {Call: 1, Output: "refused", IsError: true}}}
	ctx := context.Background()
	ts, err := newToolSet(tools, system{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := openReplay(ctx, ts, a)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	listed, err := sess.Tools(ctx)
	if err != nil || len(listed) != len(tools) {
		t.Fatalf("tools/list: %d tools, %v", len(listed), err)
	}
	// The client decodes schemas into mcp-go's typed form; compare them
	// in that form.
	for _, l := range listed {
		for _, want := range tools {
			var typed mcp.ToolInputSchema
			_ = json.Unmarshal(want.InputSchema, &typed)
			got, _ := json.Marshal(l.InputSchema)
			published, _ := json.Marshal(typed)
			if l.Name == want.Name && (!jsonEqual(got, published) || l.Description != want.Description) {
				t.Errorf("%s is listed with %s, published %s", l.Name, got, published)
			}
		}
	}
	// Keys in another order and numbers spelled differently still match.
	var m map[string]any
	_ = json.Unmarshal(valid[1], &m)
	reordered, _ := json.Marshal(m)
	for _, c := range []struct {
		args, want string
		isErr      bool
	}{
		{string(reordered), "refused", true},
		{string(valid[0]), `{"first":1}`, false},
		{string(valid[0]), `{"first":1}`, false},
		{`{"no_such_argument": true}`, "invalid arguments for " + tool.Name + ": at /", true},
	} {
		res, err := sess.Call(ctx, tool.Name, json.RawMessage(c.args))
		if err != nil || res.IsError != c.isErr || !strings.Contains(res.Text, c.want) {
			t.Errorf("call %s: %+v, %v; want %q (error %v)", c.args, res, err, c.want, c.isErr)
		}
	}
	other := tools[0]
	if other.Name == tool.Name {
		other = tools[1]
	}
	arts, _ := scenarios.Offline("x", scenarios.Listed([]toolsrc.Tool{other}), 1)
	res, err := sess.Call(ctx, other.Name, arts[0].ExpectedCalls[0].Arguments)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "nothing is recorded for "+other.Name) {
		t.Errorf("unrecorded call: %+v, %v", res, err)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// multiTurn is an executed two-turn artifact of the tiny domain's longest
// L4 gold: the first call in the first turn, the rest in the second.
func multiTurn(t *testing.T, spec *speclang.Spec, dom *mcpdomain.Domain) scenarios.Artifact {
	t.Helper()
	var longest *speclang.Scenario
	for _, s := range spec.Domains[0].Scenarios {
		if longest == nil || len(s.Gold[level.L4]) > len(longest.Gold[level.L4]) {
			longest = s
		}
	}
	a := scenarios.Artifact{Version: scenarios.ArtifactVersion, ID: "two-turns", Source: "domain:" + dom.Name + "/L4", Tier: "complex",
		Turns:      []scenarios.Turn{{Prompt: "first: " + longest.Prompt, Calls: []int{0}}, {Prompt: "then the rest"}},
		Provenance: scenarios.Provenance{Backend: "ollama", Model: "m", Stage: "multi-turn"}}
	for _, g := range longest.Gold[level.L4] {
		a.ExpectedCalls = append(a.ExpectedCalls, scenarios.ExpectedCall{Tool: g.Tool, Arguments: g.JSON(), Reason: "gold"})
		a.Assertions = append(a.Assertions, scenarios.Assertion{Kind: "tool_call", Tool: g.Tool, Arguments: g.JSON(), Severity: "blocker", Note: "gold"})
	}
	for i := 1; i < len(a.ExpectedCalls); i++ {
		a.Turns[1].Calls = append(a.Turns[1].Calls, i)
	}
	a.MockOutputs = scenarios.Executor(dom, level.L4)(a.ExpectedCalls)
	return a
}

// TestModelPlaysMultiTurnArtifact drives a scripted model through Ollama's
// wire format over a two-turn artifact: the second user turn is asked
// only after the first is answered, the replay answers every call with
// its recorded output, and the trial passes. A model that sends arguments
// the schema rejects, or names a tool that does not exist, fails the
// blocker, and its calls are classified.
func TestModelPlaysMultiTurnArtifact(t *testing.T) {
	spec, lookup := tinySpec(t)
	dom, _ := lookup(spec.Domains[0].Name)
	a := multiTurn(t, spec, dom)
	path := writeArtifacts(t, []scenarios.Artifact{a}, nil)
	good := func(req ollamatest.Request, _ int) ollamatest.Step {
		users, done := 0, len(req.ToolResults())
		for _, m := range req.Messages {
			var msg struct{ Role string }
			_ = json.Unmarshal(m, &msg)
			if msg.Role == "user" {
				users++
			}
		}
		switch {
		case users == 1 && done == 0:
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: a.ExpectedCalls[0].Tool, Args: string(a.ExpectedCalls[0].Arguments)}}}
		case users == 1:
			return ollamatest.Step{Content: "first part done"}
		case done < len(a.ExpectedCalls):
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: a.ExpectedCalls[done].Tool, Args: string(a.ExpectedCalls[done].Arguments)}}}
		}
		return ollamatest.Step{Content: "all done"}
	}
	f := ollamatest.NewServer(t, []string{"m"}, good)
	recs, err := runTrials(t, artifactConfig(path, f.URL, "m"), spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if r.Metrics.TC != 1 || r.FinalAnswer != "all done" || len(r.Calls) != len(a.ExpectedCalls) || r.Turns != len(a.ExpectedCalls)+2 {
		t.Fatalf("tc %v, answer %q, %d calls, %d turns; roles %v", r.Metrics.TC, r.FinalAnswer, len(r.Calls), r.Turns, roles)
	}
	if roles[1] != "user" || roles[4] != "assistant" || roles[5] != "user" || r.Messages[5].Content != "then the rest" {
		t.Errorf("roles %v: the second user turn must follow the first answer", roles)
	}
	for i, c := range r.Calls {
		if c.Result != a.MockOutputs[i].Output {
			t.Errorf("call %d answered %q, recorded %q", i, c.Result, a.MockOutputs[i].Output)
		}
	}

	// The oracle follows the artifact's split: the first call, an
	// answer, the second user turn, the other calls.
	recs, err = runTrials(t, artifactConfig(path, "", agent.Oracle), spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	roles = roles[:0]
	for _, m := range recs[0].Messages {
		roles = append(roles, m.Role)
	}
	if recs[0].Metrics.TC != 1 || strings.Join(roles[:5], " ") != "user assistant tool assistant user" || recs[0].Turns != len(a.ExpectedCalls)+2 {
		t.Errorf("oracle: tc %v, %d turns, roles %v", recs[0].Metrics.TC, recs[0].Turns, roles)
	}

	bad := ollamatest.NewServer(t, []string{"m"}, func(req ollamatest.Request, _ int) ollamatest.Step {
		switch len(req.ToolResults()) {
		case 0:
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: a.ExpectedCalls[0].Tool, Args: `{"no_such_argument": 1}`}}}
		case 1:
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: "no_such_tool", Args: `{}`}}}
		}
		return ollamatest.Step{Content: "done"}
	})
	recs, err = runTrials(t, artifactConfig(path, bad.URL, "m"), spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	r = recs[0]
	if r.Metrics.TC != 0 || r.Metrics.BlockersFailed != len(a.Assertions) || r.ErrorClass != results.ErrSchema ||
		r.Calls[0].ErrorClass != results.ErrSchema || r.Calls[1].ErrorClass != results.ErrUnknown {
		t.Errorf("tc %v, blockers failed %d, error %q, calls %+v", r.Metrics.TC, r.Metrics.BlockersFailed, r.ErrorClass, r.Calls)
	}
	if r.Assertions[0].Passed || r.Assertions[0].Why == "" {
		t.Errorf("verdict %+v", r.Assertions[0])
	}
}

// TestArtifactRunsShardAndResume: shards of an artifact run merge into
// the whole run, and resuming a finished run runs nothing.
func TestArtifactRunsShardAndResume(t *testing.T) {
	spec, lookup := tinySpec(t)
	dom, _ := lookup(spec.Domains[0].Name)
	arts, err := scenarios.Offline("domain:"+dom.Name+"/L4", scenarios.FromDomain(dom, level.L4), 0)
	if err != nil {
		t.Fatal(err)
	}
	path := writeArtifacts(t, arts, nil)
	cfg := artifactConfig(path, "", agent.Oracle)
	cfg.Repetitions = 2
	var dirs []string
	for i := range 2 {
		out := t.TempDir()
		if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: lookup, Shard: Shard{i, 2}}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, out)
	}
	merged := t.TempDir()
	sum, err := results.Merge(merged, dirs)
	if err != nil || sum.Records != 2*len(arts) || sum.Missing != 0 {
		t.Fatalf("merge: %+v, %v", sum, err)
	}
	again, err := Run(context.Background(), cfg, spec, Options{Out: dirs[0], Lookup: lookup, Shard: Shard{0, 2}, Resume: true})
	if err != nil || again.Ran != 0 || again.Resumed != again.Planned {
		t.Fatalf("resume: %+v, %v", again, err)
	}
	// Another artifacts file is another run.
	other := writeArtifacts(t, arts[:1], nil)
	cfg2 := artifactConfig(other, "", agent.Oracle)
	cfg2.Repetitions = 2
	if _, err := Run(context.Background(), cfg2, spec, Options{Out: dirs[0], Lookup: lookup, Shard: Shard{0, 2}, Resume: true}); err == nil || !strings.Contains(err.Error(), "another config") {
		t.Errorf("resume with other artifacts: %v", err)
	}
}

// TestArtifactInputsRefused: artifacts whose tools cannot be found, or
// that name tools their tools file lacks, and configs that mix artifacts
// with the benchmark's grid, fail with what to fix.
func TestArtifactInputsRefused(t *testing.T) {
	spec, lookup := tinySpec(t)
	external, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := scenarios.Offline("tools:x.json", scenarios.Listed(external), 2)
	if err != nil {
		t.Fatal(err)
	}
	noTools := writeArtifacts(t, arts, nil)
	if _, err := LoadArtifacts(context.Background(), artifactConfig(noTools, ""), lookup); err == nil || !strings.Contains(err.Error(), "no tools for its source tools:x.json; expected them in "+scenarios.ToolsFile(noTools)) {
		t.Errorf("no tools file: %v", err)
	}
	fewer := writeArtifacts(t, arts, external[len(external)-1:])
	if _, err := LoadArtifacts(context.Background(), artifactConfig(fewer, ""), lookup); err == nil || !strings.Contains(err.Error(), "expected call 0 names tool") || !strings.Contains(err.Error(), "does not list") {
		t.Errorf("tool missing from the tools file: %v", err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "exp.yaml")
	yaml := "name: x\nmodels: [builtin:oracle]\nartifacts: a.jsonl\ndomains: [" + spec.Domains[0].Name + "]\nartifact_tools: t.json\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(cfgPath, spec)
	if err == nil || !strings.Contains(err.Error(), cfgPath+":4:10: $.domains: found domains beside artifacts") {
		t.Errorf("artifacts with domains: %v", err)
	}
	if err := os.WriteFile(cfgPath, []byte("name: x\nmodels: [builtin:oracle]\nartifacts: a.jsonl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(cfgPath, spec)
	if err != nil || cfg.Artifacts != filepath.Join(dir, "a.jsonl") || len(cfg.Granularities) != 0 {
		t.Errorf("artifacts path relative to the config: %+v, %v", cfg, err)
	}
}

// TestReplayStructuredContent: a tool with an output schema answers with
// structured content beside the text, as the MCP spec asks; one without
// answers with text only.
func TestReplayStructuredContent(t *testing.T) {
	tools, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, false} {
		var tool *toolsrc.Tool
		for i := range tools {
			if (len(tools[i].OutputSchema) > 0) == want {
				tool = &tools[i]
			}
		}
		a := &scenarios.Artifact{ExpectedCalls: []scenarios.ExpectedCall{{Tool: tool.Name, Arguments: json.RawMessage(`{}`)}},
			MockOutputs: []scenarios.MockOutput{{Call: 0, Output: `{"n":1}`}}}
		// Skip schema validation: the point is the shape of the answer.
		loose := *tool
		loose.InputSchema = json.RawMessage(`{"type":"object"}`)
		ts, err := newToolSet([]toolsrc.Tool{loose}, system{})
		if err != nil {
			t.Fatal(err)
		}
		r := &replay{art: a, ts: ts, used: []bool{false}}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool.Name, map[string]any{}
		res := r.answer(ts.byName[tool.Name], req)
		if res.IsError || (res.StructuredContent != nil) != want || res.Content[0].(mcp.TextContent).Text != `{"n":1}` {
			t.Errorf("%s (output schema %v): %+v", tool.Name, want, res)
		}
	}
}

// TestLostKeywordsPerToolSet: run.json's lost keywords come from one
// pass over the grid, keyed by domain/level for benchmark trials and by
// source for artifacts, and name what Ollama drops.
func TestLostKeywordsPerToolSet(t *testing.T) {
	spec, lookup := tinySpec(t)
	dom, _ := lookup(spec.Domains[0].Name)
	grid, err := Plan(context.Background(), testConfig("lost", "", agent.Oracle), spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	lost := lostKeywords(grid)
	if len(lost) == 0 {
		t.Fatal("the tiny domain's tools lose no keyword; the test needs some")
	}
	for _, l := range level.Levels {
		key := dom.Name + "/" + string(l)
		if want := agent.ToolLoss(agent.Default(), dom.Tools[l]); len(want) > 0 && !reflect.DeepEqual(lost[key], want) || len(want) == 0 && lost[key] != nil {
			t.Errorf("%s: %v, want %v", l, lost[key], want)
		}
	}
	external, err := toolsrc.LoadTools("../scenarios/testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := scenarios.Offline("tools:x.json", scenarios.Listed(external), 0)
	if err != nil {
		t.Fatal(err)
	}
	grid, err = Plan(context.Background(), artifactConfig(writeArtifacts(t, arts, external), "", agent.Oracle), spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	got := lostKeywords(grid)["tools:x.json"]
	if !slices.Contains(got["fetch"], "url: format") || len(lostKeywords(grid)) != 1 {
		t.Errorf("external tools lose: %v", lostKeywords(grid))
	}
}

// TestToolCallRefusedFails: a call the server refused as a schema
// violation does not satisfy a tool_call assertion, even when the harness
// would read its arguments as the asserted ones; it still breaks a
// not_call assertion, refused or not.
func TestToolCallRefusedFails(t *testing.T) {
	tool := toolsrc.Tool{Name: "fetch", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","pattern":"^[a-z]+$"}},"required":["url"]}`)}
	ts, err := newToolSet([]toolsrc.Tool{tool}, system{})
	if err != nil {
		t.Fatal(err)
	}
	a := &scenarios.Artifact{ID: "a", Source: "s", Assertions: []scenarios.Assertion{
		{Kind: "tool_call", Tool: "fetch", Arguments: json.RawMessage(`{"url":"x"}`), Severity: "blocker"},
		{Kind: "not_call", Tool: "fetch", Arguments: json.RawMessage(`{"url":" X "}`), Severity: "warning"}}}
	set := &ArtifactSet{sources: map[string]*toolSet{"s": ts}, golds: map[string]*score.Gold{"a": {}}}
	refused := results.Call{Tool: "fetch", Arguments: json.RawMessage(`{"url":" X "}`), IsError: true, Result: "invalid arguments"}
	m, v := set.Score(&results.Record{StopReason: results.StopAnswer, Calls: []results.Call{refused}}, a)
	if v[0].Passed || !strings.Contains(v[0].Why, "call 1 of fetch was refused") || m.TC != 0 {
		t.Errorf("tool_call after a refused call: %+v, tc %v", v[0], m.TC)
	}
	if v[1].Passed {
		t.Errorf("not_call passed though the call was sent: %+v", v[1])
	}
	ok := results.Call{Tool: "fetch", Arguments: json.RawMessage(`{"url":"x"}`)}
	m, v = set.Score(&results.Record{StopReason: results.StopAnswer, Calls: []results.Call{refused, ok}}, a)
	if !v[0].Passed {
		t.Errorf("tool_call with a good call after the refused one: %+v", v[0])
	}
}
