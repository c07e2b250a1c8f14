package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	// stage is the scenario stage contract the generator emitted for the
	// tool's level (generated domains only).
	stage                 string
	compiled, compiledOut *jsonschema.Schema
}

// FromDomain lists a generated domain's tools at a level, each with its
// operations' examples and a way to execute calls on a fresh store.
func FromDomain(d *mcpdomain.Domain, level mcpdomain.Level) []Tool {
	var out []Tool
	exec := Executor(d, level)
	for _, t := range d.Tools[level] {
		tool := Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema), stage: d.StageSchemas[level]}
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
		tool.run = func(args []byte) (string, bool) {
			m := exec([]ExpectedCall{{Tool: name, Arguments: args}})[0]
			return m.Output, m.IsError
		}
		out = append(out, tool)
	}
	return out
}

// LoadTools reads a tools/list result ({"tools": [...]}) or a bare list.
func LoadTools(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &wrapped); err != nil || wrapped.Tools == nil {
		var list []Tool
		if err2 := json.Unmarshal(data, &list); err2 != nil {
			return nil, fmt.Errorf("%s: expected a tools/list result or a list of tools: %v", path, err)
		}
		wrapped.Tools = list
	}
	for i, t := range wrapped.Tools {
		if t.Name == "" || len(t.InputSchema) == 0 {
			return nil, fmt.Errorf("%s: tool %d: expected a name and an inputSchema", path, i)
		}
	}
	return wrapped.Tools, nil
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

// Offline synthesizes scenarios from the schemas alone: for each tool, a
// call with its required arguments, one with every argument, and calls
// with deliberately invalid values an agent should refuse or repair. Tools
// are taken least-used first, so with count >= the number of tools every
// tool is used; count 0 means one round of every variant.
func Offline(source string, tools []Tool, count int) ([]Artifact, error) {
	var variants [][]Artifact
	for i := range tools {
		v, err := variantsOf(source, &tools[i])
		if err != nil {
			return nil, err
		}
		variants = append(variants, v)
	}
	total := 0
	for _, v := range variants {
		total += len(v)
	}
	if count <= 0 || count > total {
		count = total
	}
	var out []Artifact
	for round := 0; len(out) < count; round++ {
		for _, v := range variants {
			if round < len(v) && len(out) < count {
				a := v[round]
				a.ID = fmt.Sprintf("%s-offline-%04d", strings.NewReplacer(":", "-", "/", "-").Replace(source), len(out)+1)
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// variantsOf lists a tool's scenarios, valid ones first.
func variantsOf(source string, t *Tool) ([]Artifact, error) {
	if err := t.Compile(); err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(t.InputSchema, &root); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	doc := schemaDoc{root: root}
	var valid []json.RawMessage
	var kinds []string // what each valid call is, for its title
	for range t.examples {
		kinds = append(kinds, "an operation's example")
	}
	valid = append(valid, t.examples...)
	for _, all := range []bool{false, true} {
		b, _ := json.Marshal(doc.valid(root, all, 0))
		if t.Valid(b) && !containsJSON(valid, b) {
			valid = append(valid, b)
			kinds = append(kinds, map[bool]string{false: "required arguments", true: "every argument"}[all])
		}
	}
	var out []Artifact
	for i, args := range valid {
		if !t.Valid(args) {
			continue
		}
		// A tool that can run (a generated one) keeps only calls its
		// operations accept: its input schema at a coarse level is the
		// union of its actions', wider than any one action.
		if t.run != nil && i >= len(t.examples) {
			if _, isErr := t.run(args); isErr {
				continue
			}
		}
		a := t.artifact(source, args, fmt.Sprintf("call %s with %s", t.Name, describe(args)))
		a.Assertions = append(a.Assertions, Assertion{Kind: "tool_call", Tool: t.Name, Arguments: args, Severity: "blocker", Note: "the agent must make this call"})
		if len(t.OutputSchema) > 0 {
			a.Assertions = append(a.Assertions, Assertion{Kind: "output_schema", Tool: t.Name, Severity: "warning", Note: "the result must fit the tool's output schema"})
		}
		if t.run != nil {
			outText, isErr := t.run(args)
			a.MockOutputs = []MockOutput{{Call: 0, Output: outText, IsError: isErr, Grounding: "executed"}}
		} else {
			a.MockOutputs = []MockOutput{{Call: 0, Output: mockFromSchema(t), Grounding: t.Grounding()}}
		}
		if i > 0 {
			a.Tier = "complex"
		}
		a.Title = t.Name + " with " + kinds[i]
		out = append(out, a)
	}
	// Invalid inputs: one per required argument that has a refusable value.
	if len(valid) > 0 {
		var base map[string]any
		_ = json.Unmarshal(valid[0], &base)
		for _, ex := range t.examples { // prefer an example that has arguments
			var m map[string]any
			if json.Unmarshal(ex, &m) == nil && len(m) > 1 {
				base = m
				break
			}
		}
		props, _ := root["properties"].(map[string]any)
		names := asList(root["required"])
		if len(t.examples) > 0 {
			// A coarse tool requires little but its action; corrupt the
			// arguments its operation example gives instead.
			names = sortedKeys(base)
		}
		for _, name := range names {
			ps, _ := props[name].(map[string]any)
			if ps == nil || name == "action" {
				continue
			}
			for _, bad := range doc.invalid(ps) {
				m := map[string]any{}
				for k, v := range base {
					m[k] = v
				}
				m[name] = bad.value
				b, _ := json.Marshal(m)
				if t.Valid(b) {
					continue
				}
				a := t.artifact(source, b, fmt.Sprintf("call %s with %s (%s: %s)", t.Name, describe(b), name, bad.why))
				a.ExpectedCalls = nil
				a.Assertions = []Assertion{{Kind: "not_call", Tool: t.Name, Arguments: b, Severity: "blocker",
					Note: fmt.Sprintf("argument %q is %s; a good agent refuses or repairs it", name, bad.why)}}
				a.Tier = "simple"
				a.Title = fmt.Sprintf("%s with %s: %s (to refuse or repair)", t.Name, name, bad.why)
				out = append(out, a)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tool %s: no valid call could be derived from its schema", t.Name)
	}
	return out, nil
}

func (t *Tool) artifact(source string, args json.RawMessage, reason string) Artifact {
	desc := strings.TrimSpace(t.Description)
	if i := strings.IndexAny(desc, ".\n"); i > 0 {
		desc = desc[:i]
	}
	prompt := fmt.Sprintf("%s. Use these values: %s.", strings.TrimSuffix(desc, "."), describe(args))
	if desc == "" {
		prompt = fmt.Sprintf("Run %s with these values: %s.", t.Name, describe(args))
	}
	return Artifact{Version: ArtifactVersion, Source: source, Tier: "simple",
		Turns:         []Turn{{Prompt: prompt}},
		ExpectedCalls: []ExpectedCall{{Tool: t.Name, Arguments: args, Reason: reason}},
		Provenance:    Provenance{Backend: "offline", Stage: "scenario"}}
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
