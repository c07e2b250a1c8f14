package speclang

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/opkind"
)

// TestWorkflowIR loads the golden tiny spec with two more workflows: one
// that only reads, and one that calls dim_room. Each workflow's steps are
// resolved and its annotations and category follow from what they do.
func TestWorkflowIR(t *testing.T) {
	base, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra := `  look:
    kind: workflow
    description: Look at the lamps of a room.
    arguments:
      room: {field: lamp.room}
    steps:
      - {call: list_lamps, with: {room: $room, limit: 5}}
  dim_twice:
    kind: workflow
    description: Dim the hall, then the den.
    arguments:
      lamp: {field: timer.lamp}
    required: [lamp]
    steps:
      - {call: dim_room, with: {room: hall, level: 10, lamp: $lamp}}
      - {call: dim_room, with: {room: den, level: 10, lamp: $lamp}}
`
	spec, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": string(base) + extra}))
	if err != nil {
		t.Fatal(err)
	}
	d := spec.Domains[0]
	ops := map[string]*Operation{}
	for _, o := range d.Operations {
		ops[o.Name] = o
	}
	type traits struct {
		Category                          string
		ReadOnly, Destructive, Idempotent bool
	}
	for name, want := range map[string]traits{
		"dim_room":  {"action_execution", false, true, false},
		"look":      {"status_query", true, false, true},
		"dim_twice": {"action_execution", false, true, false},
	} {
		o := ops[name]
		got := traits{o.Category, o.ReadOnly, o.Destructive, o.Idempotent}
		if diff := cmp.Diff(want, got); o.Kind != opkind.Workflow || o.Entity != nil || diff != "" {
			t.Errorf("%s: kind %s, entity %v, traits (-want +got):\n%s", name, o.Kind, o.Entity, diff)
		}
	}
	dim := ops["dim_room"]
	if got := dim.Steps[1].WithJSON(); got != `{"lamp_id":"$item.id","level":"$level"}` || dim.Steps[1].ForEach != "$lit.items" || dim.Steps[0].As != "lit" {
		t.Errorf("dim_room step 2: %s, for_each %q", got, dim.Steps[1].ForEach)
	}
	if got := ops["dim_twice"].Steps[1].WithJSON(); got != `{"room":"den","level":10,"lamp":"$lamp"}` {
		t.Errorf("dim_twice step 2: %s", got)
	}
	if got := ops["look"].Example; got != `{"room":"hall"}` { // its optional argument too
		t.Errorf("look example: %s", got)
	}
	// A workflow is a tool of its own at L4 and an action of its
	// category's tool at L3, as any operation.
	for _, lv := range d.Levels {
		if lv.Level != level.L3 {
			continue
		}
		for _, tl := range lv.Tools {
			if tl.Name == "tiny_status_query" && !slices.Contains(OpNames(tl.Operations), "look") {
				t.Errorf("L3 %s lacks look: %v", tl.Name, OpNames(tl.Operations))
			}
		}
	}
}

// TestResultShapesMatchTheRuntime checks the shapes a workflow's bindings
// are checked against with the JSON of the runtime's result types, every
// optional part filled in: the same keys, lists and scalars.
func TestResultShapesMatchTheRuntime(t *testing.T) {
	one := 1.0
	e := &Entity{Name: "thing"}
	for _, c := range []struct {
		kind   opkind.Kind
		result any
	}{
		{opkind.List, mcpdomain.ListResult[map[string]any]{Items: []map[string]any{{"id": "TH001"}}}},
		{opkind.UpdateWhere, mcpdomain.NewBulkResult("thing", "night", []string{"TH001"})},
		{opkind.Preset, mcpdomain.NewBulkResult("thing", "night", []string{"TH001"})},
		{opkind.Delete, mcpdomain.DeleteResult{}},
		{opkind.Aggregate, mcpdomain.AggregateResult{Field: "n", GroupBy: "g", Value: &one, Groups: []mcpdomain.AggregateGroup{{Value: &one}}}},
		{opkind.Workflow, mcpdomain.WorkflowResult{Calls: []mcpdomain.WorkflowCall{{Args: []byte(`{}`), Result: 1}}}},
	} {
		raw, err := json.Marshal(c.result)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		fits(t, string(c.kind), resultShape(&Operation{Kind: c.kind, Entity: e}), v)
	}
}

// fits reports where v differs from shape s: an object's keys, a list, or
// a scalar. A nil s (unknown shape) fits anything.
func fits(t *testing.T, at string, s *shape, v any) {
	t.Helper()
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if s.keys == nil {
			t.Errorf("%s: the runtime gives an object, the shape says otherwise", at)
			return
		}
		got, want := slices.Sorted(maps.Keys(v)), slices.Sorted(maps.Keys(s.keys))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: keys (-shape +runtime):\n%s", at, diff)
		}
		for k, x := range v {
			fits(t, at+"."+k, s.keys[k], x)
		}
	case []any:
		if !s.list || len(v) == 0 {
			t.Errorf("%s: the runtime gives a list, the shape says otherwise", at)
			return
		}
		fits(t, at+"[0]", s.elem, v[0])
	default:
		if !s.scalar {
			t.Errorf("%s: the runtime gives a scalar, the shape says otherwise", at)
		}
	}
}
