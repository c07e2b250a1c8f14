package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Tool is a tool as a server lists it, with what synthesis needs.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  map[string]any  `json:"annotations,omitempty"`
	// OutputExamples are example results (JSON values), a granite
	// extension of a tools/list file: mock outputs must have the shape
	// of one of them, and they ground outputs best.
	OutputExamples []json.RawMessage `json:"outputExamples,omitempty"`

	// examples are known-good argument objects (a generated domain's
	// operation examples, valid against its seed data).
	examples []json.RawMessage
	run      func(args []byte) (string, bool) // executes a call on a fresh store
	// runSeq executes calls of the domain's tools in order on one fresh
	// store (generated domains only).
	runSeq                func([]ExpectedCall) []MockOutput
	compiled, compiledOut *jsonschema.Schema
	// extra holds the members of a published tool object granite does
	// not read (title, execution, _meta, ...), written back as they came.
	extra map[string]json.RawMessage
}

// FromDomain lists a generated domain's tools at a level, each with its
// operations' examples and a way to execute calls on a fresh store.
func FromDomain(d *mcpdomain.Domain, level mcpdomain.Level) []Tool {
	var out []Tool
	exec := Executor(d, level)
	for _, t := range d.Tools[level] {
		tool := Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema)}
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

// Compile compiles the tool's input and output schemas, once; call it
// before sharing the tool between goroutines.
func (t *Tool) Compile() error {
	if t.compiled != nil {
		return nil
	}
	in, err := mcpdomain.CompileSchema("tool:"+t.Name, string(t.InputSchema))
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	if len(t.OutputSchema) > 0 {
		if t.compiledOut, err = mcpdomain.CompileSchema("tool-output:"+t.Name, string(t.OutputSchema)); err != nil {
			return fmt.Errorf("tool %s: output schema: %w", t.Name, err)
		}
	}
	t.compiled = in
	return nil
}

// OutputFits checks that a result is JSON text fitting the tool's output
// schema; any text fits a tool without one.
func (t *Tool) OutputFits(output string) error {
	if err := t.Compile(); err != nil || t.compiledOut == nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(output))
	if err != nil {
		return fmt.Errorf("the output is not JSON text")
	}
	return reasons(t.compiledOut.Validate(v))
}

// Valid reports whether arguments satisfy the tool's input schema.
func (t *Tool) Valid(args json.RawMessage) bool { return t.Validate(args) == nil }

// Validate checks arguments against the tool's input schema and says what
// is wrong, as the validator words it.
func (t *Tool) Validate(args json.RawMessage) error {
	if err := t.Compile(); err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	return reasons(t.compiled.Validate(v))
}

var printer = message.NewPrinter(language.English)

// reasons words a validation error as one "at /path: problem" per problem,
// joined by "; ", as an agent or a person can act on.
func reasons(err error) error {
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	var parts []string
	for _, e := range mcpdomain.Leaves(verr) {
		what := e.ErrorKind.LocalizedString(printer)
		if size, bound, ok := mcpdomain.SizeBound(e.ErrorKind, "field"); ok {
			what = fmt.Sprintf("the value %s; %s", size, bound)
		}
		parts = append(parts, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), what))
	}
	return errors.New(strings.Join(parts, "; "))
}

// describe renders arguments as "a=1, b=x" in key order.
func describe(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || len(m) == 0 {
		return "no arguments"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
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
