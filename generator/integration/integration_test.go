package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/stage"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/specs"
)

// wantTools is each level's tool count by definition, its workflows
// aside.
var wantTools = map[level.Level][2]int{level.L4: {8, 10}, level.L3: {4, 4}, level.L2: {2, 2}, level.L1: {1, 1}}

func TestListToolsMatchesDefinition(t *testing.T) {
	spec, err := speclang.Load(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, w := range spec.Warnings {
		warnings = append(warnings, w.Error())
	}
	for _, d := range gen.Domains {
		for _, level := range level.Levels {
			t.Run(d.Name+"/"+string(level), func(t *testing.T) {
				s := newSession(t, d, level)
				res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, tool := range res.Tools {
					got = append(got, tool.Name)
					if tool.Annotations.ReadOnlyHint == nil || tool.Annotations.OpenWorldHint == nil || *tool.Annotations.OpenWorldHint {
						t.Errorf("tool %s: annotations %+v: want readOnlyHint set and openWorldHint false", tool.Name, tool.Annotations)
					}
				}
				var want []string
				for _, tool := range d.Tools[level] {
					want = append(want, tool.Name)
				}
				slices.Sort(got)
				slices.Sort(want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("tools/list names (-want +got):\n%s", diff)
				}
				// The definition counts the tools besides the workflows, which
				// compose them (composition atomic takes them away).
				atomic := 0
				for _, tool := range d.Tools[level] {
					if len(tool.Operations) > 1 || tool.Operations[0].Kind != opkind.Workflow {
						atomic++
					}
				}
				// Outside the definition only where the loader warned (fine
				// if deliberate: warehouse's eleventh L4 tool, set_dock,
				// gives its dock modes an atomic form).
				said := fmt.Sprintf("%s has %d tools besides its workflows", level, atomic)
				if r := wantTools[level]; (atomic < r[0] || atomic > r[1]) && !slices.ContainsFunc(warnings, func(w string) bool {
					return strings.Contains(w, d.Name+"/domain.yaml") && strings.Contains(w, said)
				}) {
					t.Errorf("%d tools at %s besides workflows, want %d..%d or the loader's warning", atomic, level, r[0], r[1])
				}
			})
		}
	}
}

// TestEveryOperationReachableOncePerLevel checks that each level is a view
// over all operations: each appears in exactly one tool.
func TestEveryOperationReachableOncePerLevel(t *testing.T) {
	for _, d := range gen.Domains {
		for _, level := range level.Levels {
			seen := map[string]int{}
			for _, tool := range d.Tools[level] {
				for _, op := range tool.Operations {
					seen[op.Name]++
				}
			}
			for _, op := range d.Operations {
				if seen[op.Name] != 1 {
					t.Errorf("%s %s: operation %s is in %d tools, want 1", d.Name, level, op.Name, seen[op.Name])
				}
			}
		}
	}
}

// TestValidCallEqualsDirectOperation calls every tool (every action) with
// its operation's example through MCP and checks that the result and the
// store change equal calling the operation directly on another store.
func TestValidCallEqualsDirectOperation(t *testing.T) {
	for _, d := range gen.Domains {
		for _, level := range level.Levels {
			for _, tool := range d.Tools[level] {
				for _, op := range tool.Operations {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", d.Name, level, tool.Name, op.Name), func(t *testing.T) {
						s := newSession(t, d, level)
						before := s.st.Snapshot()
						text, isErr := s.call(t, tool.Name, withAction(t, tool, op, op.Example))
						if isErr {
							t.Fatalf("valid call %s returned a tool error: %s", op.Example, text)
						}
						direct := d.NewStore()
						want, err := direct.Call(op.Name, []byte(op.Example))
						if err != nil {
							t.Fatalf("direct call: %v", err)
						}
						wantText, _ := json.Marshal(want)
						if diff := cmp.Diff(string(wantText), text); diff != "" {
							t.Errorf("result via MCP differs from direct call (-direct +mcp):\n%s", diff)
						}
						if diff := cmp.Diff(string(direct.Snapshot()), string(s.st.Snapshot())); diff != "" {
							t.Errorf("store via MCP differs from direct call (-direct +mcp):\n%s", diff)
						}
						if changed := string(before) != string(s.st.Snapshot()); changed && op.ReadOnly {
							t.Errorf("read-only operation %s changed the store", op.Name)
						}
					})
				}
			}
		}
	}
}

// badCall is one class of invalid call, built from an operation's example.
type badCall struct {
	class string
	// make returns the arguments, and a word the error must contain; ok
	// is false when the class does not apply to the operation.
	make func(tool *mcpdomain.Tool, op *mcpdomain.Operation, ex map[string]any) (args map[string]any, mention string, ok bool)
}

var badCalls = []badCall{
	{"unknown argument", func(_ *mcpdomain.Tool, _ *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		ex["bogus_argument"] = 1
		return ex, `"bogus_argument"`, true
	}},
	{"missing required", func(_ *mcpdomain.Tool, op *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		for _, a := range op.Args {
			if a.Required {
				delete(ex, a.Name)
				return ex, `"` + a.Name + `"`, true
			}
		}
		return nil, "", false
	}},
	{"wrong type", func(_ *mcpdomain.Tool, op *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		for _, a := range op.Args {
			switch a.Type {
			case "string", "object", "array":
				ex[a.Name] = 12345
			default:
				ex[a.Name] = "not a " + a.Type
			}
			return ex, `"` + a.Name + `"`, true
		}
		return nil, "", false
	}},
	{"outside enum", func(_ *mcpdomain.Tool, op *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		for _, a := range op.Args {
			if len(a.Enum) > 0 {
				ex[a.Name] = "no_such_value"
				return ex, "is not one of " + strings.Join(a.Enum, ", "), true
			}
		}
		return nil, "", false
	}},
	{"unknown ID", func(_ *mcpdomain.Tool, op *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		for _, a := range op.Args {
			if a.Entity != "" && a.Required {
				id, _ := ex[a.Name].(string)
				ex[a.Name] = id[:len(id)-3] + "999"
				return ex, "valid " + a.Entity + " IDs include", true
			}
		}
		return nil, "", false
	}},
	{"unknown action", func(tool *mcpdomain.Tool, _ *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		if !tool.HasAction() {
			return nil, "", false
		}
		ex["action"] = "self_destruct"
		return ex, `"action": "self_destruct" is not one of`, true
	}},
	{"missing action", func(tool *mcpdomain.Tool, _ *mcpdomain.Operation, ex map[string]any) (map[string]any, string, bool) {
		if !tool.HasAction() {
			return nil, "", false
		}
		delete(ex, "action")
		return ex, `missing required argument "action"`, true
	}},
}

// TestBadCallsAreToolErrorsAndChangeNothing sends every class of bad call
// to every tool and action: each must come back as isError with a message
// naming the argument, and leave the store byte-identical.
func TestBadCallsAreToolErrorsAndChangeNothing(t *testing.T) {
	applied := map[string]int{}
	for _, d := range gen.Domains {
		for _, level := range level.Levels {
			s := newSession(t, d, level)
			for _, tool := range d.Tools[level] {
				for _, op := range tool.Operations {
					for _, bc := range badCalls {
						ex := map[string]any{}
						if err := json.Unmarshal(withAction(t, tool, op, op.Example), &ex); err != nil {
							t.Fatal(err)
						}
						args, mention, ok := bc.make(tool, op, ex)
						if !ok {
							continue
						}
						applied[bc.class]++
						raw, _ := json.Marshal(args)
						before := s.st.Snapshot()
						text, isErr := s.call(t, tool.Name, raw)
						where := fmt.Sprintf("%s %s %s/%s %s %s", d.Name, level, tool.Name, op.Name, bc.class, raw)
						if !isErr {
							t.Errorf("%s: want isError, got success: %s", where, text)
							continue
						}
						if !strings.Contains(text, mention) {
							t.Errorf("%s: error %q does not mention %q", where, text, mention)
						}
						if string(before) != string(s.st.Snapshot()) {
							t.Errorf("%s: store changed by a refused call", where)
						}
					}
				}
			}
		}
	}
	for _, bc := range badCalls {
		if applied[bc.class] == 0 {
			t.Errorf("bad-call class %q never applied to any tool", bc.class)
		}
	}
}

// TestErrorSentences pins the text of each kind of tool error. It runs on
// the tiny test fixture (internal/testdomain/tiny, generated from the golden
// tiny spec), so that no test depends on a benchmark domain's content.
func TestErrorSentences(t *testing.T) {
	s := newSession(t, tiny.Domain, level.L4)
	cases := []struct {
		tool, args, want string
	}{
		{"scene", `{"room":"den","scene":"loud"}`, `argument "scene": "loud" is not one of bright, dark`},
		{"set_lamp", `{"lamp_id":"LP01","level":150}`, `argument "level": 150 is above the maximum 100`},
		{"set_lamp", `{"lamp_id":"LP01"}`, `nothing to change: give at least one of "on", "level", "config"`},
		{"get_lamp", `{"lamp_id":"LP99"}`, `argument "lamp_id": lamp "LP99" does not exist; valid lamp IDs include LP01, LP02`},
		{"get_lamp", `{"lamp_id":"lamp"}`, `argument "lamp_id": "lamp" is not a lamp ID like LP01`},
		{"get_lamp", `{}`, `missing required argument "lamp_id" (lamp ID like LP01)`},
		{"get_lamp", `[1,2]`, `arguments must be a JSON object of named arguments, got an array`},
		{"add_timer", `{"lamp":"LP01","at":"yesterday"}`, `argument "at": "yesterday" is not a valid date-time (RFC 3339 timestamp like 2026-01-01T00:00:00Z)`},
		{"add_timer", `{"lamp":"LP09"}`, `argument "lamp": lamp "LP09" does not exist; valid lamp IDs include LP01, LP02`},
		{"list_lamps", `{"limit":"ten"}`, `argument "limit": expected integer, got string`},
		{"list_lamps", `{"limit":11}`, `argument "limit": 11 is above the maximum 10`},
	}
	for _, c := range cases {
		text, isErr := s.call(t, c.tool, []byte(c.args))
		if !isErr || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s %s:\n got %q (isError %v)\nwant prefix %q", c.tool, c.args, text, isErr, c.want)
		}
	}
}

// TestUnsetIsNotZero: an optional field never set has no value, not its
// zero value. The tiny fixture's LP02 has no watts, tags or config: they
// are left out of its output, no range filter matches it, and aggregates
// skip it. A value given later is a value like any other.
func TestUnsetIsNotZero(t *testing.T) {
	s := newSession(t, tiny.Domain, level.L4)
	text, isErr := s.call(t, "get_lamp", []byte(`{"lamp_id":"LP02"}`))
	var lamp map[string]any
	if err := json.Unmarshal([]byte(text), &lamp); isErr || err != nil {
		t.Fatalf("get_lamp LP02: %s (isError %v, %v)", text, isErr, err)
	}
	for _, k := range []string{"watts", "tags", "config"} {
		if v, ok := lamp[k]; ok {
			t.Errorf("LP02 shows unset %s as %v; want it left out", k, v)
		}
	}
	ids := func(tool, args string) []string {
		t.Helper()
		text, isErr := s.call(t, tool, []byte(args))
		var res struct{ Items []struct{ ID string } }
		if err := json.Unmarshal([]byte(text), &res); isErr || err != nil {
			t.Fatalf("%s %s: %s (isError %v, %v)", tool, args, text, isErr, err)
		}
		var out []string
		for _, it := range res.Items {
			out = append(out, it.ID)
		}
		return out
	}
	for _, args := range []string{`{"max_watts":100}`, `{"min_watts":0}`, `{"min_watts":0,"max_watts":0}`} {
		want := []string{"LP01"}
		if strings.Contains(args, `"max_watts":0`) {
			want = nil // 0 W is a value LP02 does not have
		}
		if diff := cmp.Diff(want, ids("list_lamps", args)); diff != "" {
			t.Errorf("list_lamps %s (-want +got):\n%s", args, diff)
		}
	}
	text, _ = s.call(t, "lamp_stats", []byte(`{"function":"avg","field":"watts"}`))
	if !strings.Contains(text, `"count":1,"value":6.5`) {
		t.Errorf("avg watts counts the lamp without watts: %s", text)
	}
	text, _ = s.call(t, "lamp_stats", []byte(`{"function":"avg","field":"level","group_by":"room"}`))
	if !strings.Contains(text, `{"key":"den","count":1,"value":0}`) {
		t.Errorf("level 0 is a value and must be averaged: %s", text)
	}
	if _, isErr := s.call(t, "set_lamp", []byte(`{"lamp_id":"LP02","config":{"color":"cold"}}`)); isErr {
		t.Fatal("set_lamp config refused")
	}
	text, _ = s.call(t, "get_lamp", []byte(`{"lamp_id":"LP02"}`))
	if !strings.Contains(text, `"config":{"color":"cold"}`) {
		t.Errorf("a merge into an unset object sets it: %s", text)
	}
}

// TestIntegralFloatsDecodeAsIntegers checks that 55.0 is accepted for an
// integer argument, as JSON Schema says it is an integer.
func TestIntegralFloatsDecodeAsIntegers(t *testing.T) {
	s := newSession(t, tiny.Domain, level.L1)
	text, isErr := s.call(t, "tiny", []byte(`{"action":"set_lamp","lamp_id":"LP02","level":55.0,"on":true}`))
	if isErr || !strings.Contains(text, `"level":55`) {
		t.Fatalf("got %s (isError %v)", text, isErr)
	}
}

// TestStoreCloneResetSnapshot checks the store contract the harness relies on.
func TestStoreCloneResetSnapshot(t *testing.T) {
	for _, d := range gen.Domains {
		st := d.NewStore()
		seed := st.Snapshot()
		clone := st.CloneStore()
		var changed bool
		for _, op := range d.Operations {
			if op.ReadOnly {
				continue
			}
			if _, err := st.Call(op.Name, []byte(op.Example)); err != nil {
				t.Fatalf("%s %s: %v", d.Name, op.Name, err)
			}
			changed = true
		}
		if changed && string(st.Snapshot()) == string(seed) {
			t.Errorf("%s: write examples changed nothing", d.Name)
		}
		if string(clone.Snapshot()) != string(seed) {
			t.Errorf("%s: clone saw writes made to the original", d.Name)
		}
		st.Reset()
		if diff := cmp.Diff(string(seed), string(st.Snapshot())); diff != "" {
			t.Errorf("%s: Reset did not restore the seed (-seed +reset):\n%s", d.Name, diff)
		}
		if !json.Valid(seed) {
			t.Errorf("%s: snapshot is not JSON", d.Name)
		}
	}
}

// TestStageContractRefusesUnknownTools: the scenario stage contract built at
// run time from a generated domain's level accepts a reply calling its
// tools with valid arguments, and refuses an unknown tool or arguments
// its schema refuses.
func TestStageContractRefusesUnknownTools(t *testing.T) {
	reply := `{"title":"t","instruction":"How bright is the hall lamp?","calls":[{"tool":"get_lamp","arguments":{"lamp_id":"LP01"},"reason":"read it"}],"novelty":"n","follow_up":"f"}`
	contract, err := scenarios.ScenarioSchema(scenarios.FromDomain(tiny.Domain, level.L4))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemacheck.Compile("stage", string(contract))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]bool{
		reply: true,
		strings.Replace(reply, `"get_lamp"`, `"launch_rockets"`, 1): false,
		strings.Replace(reply, `"LP01"`, `"lamp one"`, 1):           false,
	} {
		var v any
		_ = json.Unmarshal([]byte(doc), &v)
		if got := sch.Validate(v) == nil; got != want {
			t.Errorf("valid=%v, want %v: %s", got, want, doc)
		}
	}
}

// TestStageContractsAsTheGeneratorBuiltThem: the scenario stage contract
// the synthesizer builds at run time from a generated domain's level is,
// byte for byte, the one the generator used to emit into synth_gen.go:
// stage.ScenarioSchema over the spec IR's tools of that level, in order.
// Each tool's input schema is the IR's too, byte for byte, those of tools
// with an action among them, which the runtime computes when the domain
// registers instead of reading them from generated constants.
func TestStageContractsAsTheGeneratorBuiltThem(t *testing.T) {
	spec, err := speclang.Load(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"tiny/domain.yaml": {Data: golden}}
	for _, name := range []string{speclang.SchemaFile, speclang.ScenarioSchemaFile} {
		b, err := fs.ReadFile(specs.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: b}
	}
	tinySpec, err := speclang.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]*mcpdomain.Domain{tiny.Domain.Name: tiny.Domain}
	for _, d := range gen.Domains {
		built[d.Name] = d
	}
	domains := append(spec.Domains, tinySpec.Domains...)
	if len(domains) != len(built) {
		t.Fatalf("%d spec domains, %d generated", len(domains), len(built))
	}
	for _, d := range domains {
		for _, lv := range d.Levels {
			st := make([]toolsrc.Tool, len(lv.Tools))
			for i, tl := range lv.Tools {
				st[i] = toolsrc.Tool{Name: tl.Name, InputSchema: json.RawMessage(tl.Schema)}
				if got := built[d.Name].Tool(lv.Level, tl.Name); got == nil || got.InputSchema != tl.Schema {
					t.Errorf("%s %s tool %s: the input schema the runtime holds differs from the spec language's", d.Name, lv.Level, tl.Name)
				}
			}
			want, err := stage.ScenarioSchema(st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := scenarios.ScenarioSchema(scenarios.FromDomain(built[d.Name], lv.Level))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s %s: the stage contract built at run time differs from the generator's", d.Name, lv.Level)
			}
		}
	}
}
