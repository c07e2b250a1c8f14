package mcpdomain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Arg describes one argument of an operation.
type Arg struct {
	Name string
	// Type is the JSON type: string, integer, number, boolean, object, array.
	Type     string
	Required bool
	// Enum lists the allowed values of an enum argument.
	Enum []string
	// Entity is set when the argument carries the ID of a row of that entity.
	Entity string
	// Hint says in a few words what the argument holds, for error messages.
	Hint string
}

// Operation is the generated description of one atomic operation.
type Operation struct {
	Name     string
	Kind     opkind.Kind
	Category string
	// Entity is the entity the operation acts on; "" for a workflow, which
	// acts through the operations its steps call.
	Entity      string
	Description string
	// ReadOnly, Destructive and Idempotent are the truthful MCP annotations
	// of the operation: reads change nothing; writes that overwrite or remove
	// state are destructive; writes whose repetition changes nothing more
	// are idempotent.
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	Args        []Arg
	// Schema is the JSON Schema of the operation's arguments.
	Schema string
	// Example is a valid argument object against the seed data.
	Example string

	once     sync.Once
	compiled *jsonschema.Schema
	err      error
	// maxLen is the maxLength of each top-level property, 0 for none.
	maxLen map[string]int
}

// Arg returns the argument with the given name, or nil.
func (o *Operation) Arg(name string) *Arg {
	for i := range o.Args {
		if o.Args[i].Name == name {
			return &o.Args[i]
		}
	}
	return nil
}

// Named is a row an argument names by its ID.
type Named struct{ Entity, ID string }

// Names lists the rows a call's arguments (as Tool.Prepare returns them)
// name by ID, in the operation's argument order: the rows the call
// reaches.
func (o *Operation) Names(args []byte) []Named {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []Named
	for _, a := range o.Args {
		if id, ok := m[a.Name].(string); ok && a.Entity != "" {
			out = append(out, Named{a.Entity, id})
		}
	}
	return out
}

func (o *Operation) argNames() []string {
	names := make([]string, len(o.Args))
	for i, a := range o.Args {
		names[i] = a.Name
	}
	return names
}

func (o *Operation) schema() (*jsonschema.Schema, error) {
	o.once.Do(o.compile)
	return o.compiled, o.err
}

func (o *Operation) compile() {
	o.compiled, o.err = schemacheck.Compile("granite:op/"+o.Name, o.Schema)
	o.maxLen = maxLengths(o.Schema)
}

// Tool is one generated MCP tool at one level: a single operation, or
// several chosen by an "action" argument.
type Tool struct {
	Level       level.Level
	Name        string
	Description string
	// InputSchema is the schema the model sees: for a tool with an action,
	// the union of its operations' arguments, which NewDomain computes when
	// generated code leaves it out.
	InputSchema string
	Operations  []*Operation
}

// HasAction reports whether the tool takes an "action" argument.
func (t *Tool) HasAction() bool { return len(t.Operations) > 1 }

// Actions returns the tool's action names (its operations' names).
func (t *Tool) Actions() []string {
	names := make([]string, len(t.Operations))
	for i, o := range t.Operations {
		names[i] = o.Name
	}
	return names
}

// Operation returns the operation an action names, or nil.
func (t *Tool) Operation(action string) *Operation {
	for _, o := range t.Operations {
		if o.Name == action {
			return o
		}
	}
	return nil
}

// ReadOnly reports whether every operation of the tool only reads.
func (t *Tool) ReadOnly() bool {
	for _, o := range t.Operations {
		if !o.ReadOnly {
			return false
		}
	}
	return true
}

// MCP returns the mcp-go tool with its schema and truthful annotations.
func (t *Tool) MCP() mcp.Tool {
	tool := mcp.NewToolWithRawSchema(t.Name, t.Description, json.RawMessage(t.InputSchema))
	readOnly, destructive, idempotent := t.ReadOnly(), false, true
	for _, o := range t.Operations {
		destructive = destructive || o.Destructive
		idempotent = idempotent && o.Idempotent
	}
	openWorld := false
	tool.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint:    &readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  &idempotent,
		OpenWorldHint:   &openWorld,
	}
	return tool
}

// Prepare checks raw arguments against the tool and the chosen operation's
// schema. It returns the operation and its arguments (without the action)
// re-encoded so that they decode into the operation's generated argument
// struct; every error is a ToolError.
func (t *Tool) Prepare(raw []byte) (*Operation, []byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, Errorf("arguments are not valid JSON: %v", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	args, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, Errorf("arguments must be a JSON object of named arguments, got %s", jsonType(doc))
	}
	op := t.Operations[0]
	if t.HasAction() {
		action, ok := args["action"]
		if !ok {
			return nil, nil, Errorf("missing required argument \"action\": one of %s", strings.Join(t.Actions(), ", "))
		}
		name, _ := action.(string)
		if op = t.Operation(name); op == nil {
			return nil, nil, Errorf("argument \"action\": %s is not one of %s", display(action), strings.Join(t.Actions(), ", "))
		}
		delete(args, "action")
	}
	sch, err := op.schema()
	if err != nil {
		return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	if err := sch.Validate(args); err != nil {
		verr, ok := err.(*jsonschema.ValidationError)
		if !ok {
			return nil, nil, Errorf("invalid arguments: %v", err)
		}
		return nil, nil, &ToolError{Msg: strings.Join(t.sentences(op, verr), "; ")}
	}
	if err := op.checkStrings(args); err != nil {
		return nil, nil, err
	}
	canonicalNumbers(args)
	out, err := json.Marshal(args)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode arguments: %w", err)
	}
	return op, out, nil
}

// CallFunc runs an operation on prepared arguments.
type CallFunc func(op *Operation, args []byte) (any, error)

// Call prepares raw arguments and runs the operation. A ToolError means the
// call was refused or failed on the caller's account; the store is unchanged.
func (t *Tool) Call(raw []byte, call CallFunc) (any, error) {
	op, args, err := t.Prepare(raw)
	if err != nil {
		return nil, err
	}
	return call(op, args)
}

// Handler adapts the tool to mcp-go. No panic reaches the client: it turns
// into a tool error.
func (t *Tool) Handler(call CallFunc) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if r := recover(); r != nil {
				res = mcp.NewToolResultError(fmt.Sprintf("internal error in tool %s: %v", t.Name, r))
			}
		}()
		raw := []byte(req.Params.RawArguments)
		if len(raw) == 0 && req.Params.Arguments != nil {
			var err error
			if raw, err = json.Marshal(req.Params.Arguments); err != nil {
				return mcp.NewToolResultError("arguments are not valid JSON: " + err.Error()), nil
			}
		}
		out, err := t.Call(raw, call)
		if err != nil {
			if IsToolError(err) {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultError(fmt.Sprintf("internal error in tool %s: %v", t.Name, err)), nil
		}
		text, err := json.Marshal(out)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("internal error in tool %s: encode result: %v", t.Name, err)), nil
		}
		if len(text) > MaxResultBytes {
			return mcp.NewToolResultError(fmt.Sprintf("the result is %d bytes, over the limit of %d: ask for less (filters, a smaller limit)", len(text), MaxResultBytes)), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(string(text))},
			StructuredContent: json.RawMessage(text),
		}, nil
	}
}

// Register adds every tool to s. A call runs the operation Prepare picked
// (for a tool with an action, the one the action names) on st, so generated
// code needs no dispatcher of its own.
func Register(s *server.MCPServer, tools []*Tool, st Store) {
	call := func(op *Operation, args []byte) (any, error) { return st.Call(op.Name, args) }
	for _, t := range tools {
		s.AddTool(t.MCP(), t.Handler(call))
	}
}
