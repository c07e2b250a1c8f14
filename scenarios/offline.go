package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// Tool is a tool as a server lists it, with what synthesis needs beside
// it: a generated domain's tools carry known-good arguments and execute
// calls on a fresh store, which no listed tool can.
type Tool struct {
	toolsrc.Tool

	// examples are known-good argument objects (a generated domain's
	// operation examples, valid against its seed data).
	examples []json.RawMessage
	run      func(args []byte) (string, bool) // executes a call on a fresh store
	// runSeq executes calls of the domain's tools in order on one fresh
	// store (generated domains only).
	runSeq func([]ExpectedCall) []MockOutput
}

// Listed wraps tools a server lists (a tools file, a live server) for
// synthesis; they carry no examples and execute nothing.
func Listed(tools []toolsrc.Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		out[i] = Tool{Tool: t}
	}
	return out
}

// Sources are the tools as a server lists them, without what synthesis
// keeps beside them.
func Sources(tools []Tool) []toolsrc.Tool {
	out := make([]toolsrc.Tool, len(tools))
	for i, t := range tools {
		out[i] = t.Tool
	}
	return out
}

// FromDomain lists a generated domain's tools at a level, each with its
// operations' examples and a way to execute calls on a fresh store.
func FromDomain(d *mcpdomain.Domain, level level.Level) []Tool {
	var out []Tool
	exec := Executor(d, level)
	listed := toolsrc.FromDomain(d, level)
	for i, t := range d.Tools[level] {
		tool := Tool{Tool: listed[i]}
		for _, op := range t.Operations {
			ex := map[string]any{}
			_ = json.Unmarshal([]byte(op.Example), &ex)
			if t.HasAction() {
				ex["action"] = op.Name
			}
			b, _ := json.Marshal(ex)
			tool.examples = append(tool.examples, b)
		}
		name := t.Name
		tool.runSeq = exec
		tool.run = func(args []byte) (string, bool) {
			m := exec([]ExpectedCall{{Tool: name, Arguments: args}})[0]
			return m.Output, m.IsError
		}
		out = append(out, tool)
	}
	return out
}

// describe renders arguments as "a=1, b=x" in key order.
func describe(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || len(m) == 0 {
		return "no arguments"
	}
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		b, _ := json.Marshal(m[k])
		parts[i] = k + "=" + string(b)
	}
	return strings.Join(parts, ", ")
}

func containsJSON(list []json.RawMessage, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// mockFromSchema is the tool's first example output, else the smallest
// value of its output schema, else an empty object: a mock for an
// external tool, grounded as well as that material allows.
func mockFromSchema(t *Tool) string {
	if len(t.OutputExamples) > 0 {
		return string(t.OutputExamples[0])
	}
	if len(t.OutputSchema) == 0 {
		return "{}"
	}
	var root map[string]any
	if json.Unmarshal(t.OutputSchema, &root) != nil {
		return "{}"
	}
	b, _ := json.Marshal(schemaDoc{root: root}.valid(root, true, 0))
	return string(b)
}

// Grounding is the best grounding tier the tool's reference material
// allows a mock output: high with example outputs, medium with an output
// schema, low with neither.
func (t *Tool) Grounding() string {
	switch {
	case len(t.OutputExamples) > 0:
		return "high"
	case len(t.OutputSchema) > 0:
		return "medium"
	}
	return "low"
}

// ShapeMismatch says how an output differs in shape from every one of the
// tool's example outputs ("" when it matches one, or there are none). The
// shape is the JSON type; an object's keys, each with its value's shape;
// an array's first element's shape.
func (t *Tool) ShapeMismatch(output string) string {
	if len(t.OutputExamples) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(output), &v) != nil {
		return "the output is not JSON text"
	}
	var first string
	for _, ex := range t.OutputExamples {
		var e any
		if json.Unmarshal(ex, &e) != nil {
			continue
		}
		why := shapeDiff("$", e, v)
		if why == "" {
			return ""
		}
		if first == "" {
			first = why
		}
	}
	return first
}

func shapeDiff(at string, example, v any) string {
	kind := func(x any) string {
		switch x.(type) {
		case map[string]any:
			return "an object"
		case []any:
			return "an array"
		case string:
			return "a string"
		case float64:
			return "a number"
		case bool:
			return "a boolean"
		}
		return "null"
	}
	if kind(example) != kind(v) {
		return fmt.Sprintf("%s is %s; the example has %s", at, kind(v), kind(example))
	}
	switch e := example.(type) {
	case map[string]any:
		got := v.(map[string]any)
		for _, k := range sortedKeys(e) {
			gv, ok := got[k]
			if !ok {
				return fmt.Sprintf("%s lacks %q, which the example has", at, k)
			}
			if why := shapeDiff(at+"."+k, e[k], gv); why != "" {
				return why
			}
		}
	case []any:
		got := v.([]any)
		if len(e) > 0 && len(got) > 0 {
			return shapeDiff(at+"[0]", e[0], got[0])
		}
	}
	return ""
}

// Coverage is the share of tools some artifact calls, and the calls that
// fit their tool's schema.
type Coverage struct {
	Tools, Used, Calls, ValidCalls int
}

// Measure computes the coverage and schema validity of artifacts.
func Measure(tools []Tool, arts []Artifact) Coverage {
	byName := map[string]*Tool{}
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	used := map[string]bool{}
	c := Coverage{Tools: len(tools)}
	for _, a := range arts {
		for _, call := range a.ExpectedCalls {
			c.Calls++
			if t, ok := byName[call.Tool]; ok {
				used[call.Tool] = true
				if t.Valid(call.Arguments) {
					c.ValidCalls++
				}
			}
		}
	}
	c.Used = len(used)
	return c
}
