// Package toolsrc holds where tools come from: a tool as a server lists
// it, read from a tools/list file or listed by a live server (a command
// speaking stdio or a streamable HTTP endpoint, with headers such as a
// bearer token), and the checks a tool's schemas make of arguments and
// results. The synthesizer, the regrouper and the harness all read tools
// through it, so none of them imports another for its tools.
package toolsrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Tool is a tool as a server lists it: what tools/list carries, every
// member the server sent kept, and its schemas compiled once for the
// checks a caller makes of arguments and results.
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

	compiled, compiledOut *jsonschema.Schema
	// extra holds the members of a published tool object granite does
	// not read (title, execution, _meta, ...), written back as they came.
	extra map[string]json.RawMessage
}

// Compile compiles the tool's input and output schemas, once; call it
// before sharing the tool between goroutines.
func (t *Tool) Compile() error {
	if t.compiled != nil {
		return nil
	}
	// The name is the schema's URL path, escaped: a '#' in it read as a
	// fragment, a control character as no URL at all, and either refused
	// the tool, and with it the whole server.
	at := url.PathEscape(t.Name)
	in, err := schemacheck.Compile("tool:"+at, string(t.InputSchema))
	if err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	if len(t.OutputSchema) > 0 {
		if t.compiledOut, err = schemacheck.Compile("tool-output:"+at, string(t.OutputSchema)); err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
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
	for _, e := range schemacheck.Leaves(verr) {
		what := e.ErrorKind.LocalizedString(printer)
		if size, bound, ok := schemacheck.SizeBound(e.ErrorKind, "field"); ok {
			what = fmt.Sprintf("the value %s; %s", size, bound)
		}
		parts = append(parts, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), what))
	}
	return errors.New(strings.Join(parts, "; "))
}
