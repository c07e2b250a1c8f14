package surface

import (
	"encoding/json"
	"slices"

	"github.com/mcpgranite/granite/internal/combine"
)

// compositionTransform: what one call does. as-written offers the level's
// operations as the spec wrote them; atomic offers no composite operation
// (no preset, no workflow: a tool of one leaves the interface, an action
// of one leaves its tool, whose schema is combined again from the actions
// left), and the harness expands the gold's composite calls into the
// atomic calls they perform (gold.Atomic); composite offers the level's
// operations, workflows among them, and the harness calls a workflow in
// the gold wherever a run of its calls is one (gold.Composite). Only the
// gold tells composite from as-written.
var compositionTransform = newTransform("composition", "what one call does: the operations as written, atomic ones only, or workflows wherever a task's steps are one",
	func(t *Transforms) *string { return &t.Composition },
	option{value: "as-written"},
	option{value: "atomic", keep: atomicTool, gold: true},
	option{value: "composite", gold: true},
)

// atomicTool is t without its composite operations; false when none is
// left.
func atomicTool(t Tool) (Tool, bool, error) {
	if len(t.Actions) == 0 {
		return t, t.Composite == "", nil
	}
	kept := slices.DeleteFunc(slices.Clone(t.Actions), func(a Action) bool { return a.Composite != "" })
	switch len(kept) {
	case len(t.Actions):
		return t, true, nil
	case 0:
		return Tool{}, false, nil
	}
	ops := make([]combine.Op, len(kept))
	for i, a := range kept {
		ops[i] = combine.Op{Name: a.Name, Description: a.Description, Schema: string(a.Schema)}
	}
	schema, err := combine.Schema(ops)
	if err != nil {
		return Tool{}, false, err
	}
	t.Actions, t.InputSchema = kept, json.RawMessage(schema)
	return t, true, nil
}
