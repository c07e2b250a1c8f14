package toolsrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
)

// toolFields are the Tool fields decoded by name; every other member of a
// published tool object (title, execution, _meta, ...) is kept as it came
// and written back, so that a tools file granite writes is the tools/list
// the server sent.
var toolFields = map[string]bool{"name": true, "description": true, "inputSchema": true,
	"outputSchema": true, "annotations": true, "outputExamples": true}

// UnmarshalJSON decodes a published tool object, keeping the members
// granite does not read.
func (t *Tool) UnmarshalJSON(b []byte) error {
	type plain Tool
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k := range all {
		if toolFields[k] {
			delete(all, k)
		}
	}
	if len(all) == 0 {
		all = nil
	}
	// Keep the schemas compiled before, as decoding set no new ones.
	p.compiled, p.compiledOut = t.compiled, t.compiledOut
	*t = Tool(p)
	t.extra = all
	return nil
}

// MarshalJSON writes the tool as published: the members granite reads
// and every other member the server sent.
func (t Tool) MarshalJSON() ([]byte, error) {
	type plain Tool
	b, err := json.Marshal(plain(t))
	if err != nil || len(t.extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range t.extra {
		if _, known := all[k]; !known {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// LoadTools reads a tools file: a tools/list result ({"tools": [...]}), a
// full JSON-RPC response carrying one, or a bare list of tools. Every
// problem is reported at once, each at the file, line and column of the
// tool it concerns; tools with the same name are refused, naming both, and
// so are schemas beyond schemacheck's bounds (nesting, enum values,
// bytes), naming where. One bad tool refuses the file, as it refuses a
// listing: a caller gets a server's tools whole or not at all.
func LoadTools(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTools(path, data)
}

// ParseTools is LoadTools on a file's bytes; file names it in messages.
func ParseTools(file string, data []byte) ([]Tool, error) {
	at := func(off int64) speclang.Pos { return posAt(file, data, off) }
	fail := func(off int64, format string, args ...any) error {
		return &speclang.Error{Pos: at(off), Msg: fmt.Sprintf(format, args...)}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fail(0, "the file is empty; expected a tools/list result ({\"tools\": [...]}) or a list of tools")
	}
	if !json.Valid(trimmed) {
		var serr *json.SyntaxError
		err := json.Unmarshal(trimmed, new(any))
		if errors.As(err, &serr) {
			return nil, fail(int64(bytes.Index(data, trimmed))+serr.Offset-1, "not JSON: %v", serr)
		}
		return nil, fail(0, "not JSON: %v", err)
	}
	// Find the tools array, following {"tools": ...}, {"result": {"tools":
	// ...}} (a JSON-RPC response) or a bare array.
	base := int64(bytes.Index(data, trimmed))
	body := trimmed
	switch trimmed[0] {
	case '[':
	case '{':
		var top map[string]json.RawMessage
		_ = json.Unmarshal(trimmed, &top)
		if _, isRPC := top["jsonrpc"]; isRPC {
			switch {
			case top["error"] != nil:
				return nil, fail(base, "found a JSON-RPC error response (%s); expected a tools/list result", oneLine(top["error"]))
			case top["method"] != nil:
				return nil, fail(base, "found a JSON-RPC request (method %s); expected the response to tools/list, or its result", oneLine(top["method"]))
			case top["result"] == nil:
				return nil, fail(base, "found a JSON-RPC message without a result; expected the response to tools/list")
			}
			off, raw := member(trimmed, "result")
			base += off
			body = raw
			top = nil
			_ = json.Unmarshal(body, &top)
		}
		if top == nil || top["tools"] == nil {
			return nil, fail(base, "found an object without \"tools\"; expected a tools/list result ({\"tools\": [...]}), a JSON-RPC response carrying one, or a list of tools")
		}
		off, raw := member(body, "tools")
		base += off
		body = raw
		if body[0] != '[' {
			return nil, fail(base, "found \"tools\": %s; expected a list of tool objects", kindOf(body))
		}
	default:
		return nil, fail(base, "found %s; expected a tools/list result ({\"tools\": [...]}) or a list of tools", kindOf(trimmed))
	}
	var errs speclang.ErrorList
	var out []Tool
	first := map[string]speclang.Pos{}
	for _, el := range elements(body) {
		off, raw := base+el.off, el.raw
		var obj map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("tool %d: found %s; expected a tool object with a name and an inputSchema", el.index, kindOf(raw))})
			continue
		}
		var name string
		if json.Unmarshal(obj["name"], &name) != nil || name == "" {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("tool %d: found no name (a non-empty string); expected every tool to have one", el.index)})
			continue
		}
		who := fmt.Sprintf("tool %d (%q)", el.index, name)
		schema := bytes.TrimSpace(obj["inputSchema"])
		switch {
		case len(schema) == 0:
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: who + ": found no inputSchema; expected a JSON Schema object (at least {\"type\": \"object\"})"})
			continue
		case schema[0] != '{':
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("%s: found inputSchema %s; expected a JSON Schema object (at least {\"type\": \"object\"})", who, kindOf(schema))})
			continue
		}
		if osch := bytes.TrimSpace(obj["outputSchema"]); len(osch) > 0 && osch[0] != '{' && string(osch) != "null" {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("%s: found outputSchema %s; expected a JSON Schema object", who, kindOf(osch))})
			continue
		}
		if err := checkBounds(schema, obj["outputSchema"]); err != nil {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("%s: %v", who, err)})
			continue
		}
		var t Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("%s: %v", who, unmarshalWhy(err))})
			continue
		}
		if string(bytes.TrimSpace(t.OutputSchema)) == "null" {
			t.OutputSchema = nil
		}
		if p, dup := first[name]; dup {
			errs = append(errs, &speclang.Error{Pos: at(off), Msg: fmt.Sprintf("%s: found the name again (first at %d:%d); expected tool names unique, as a client cannot tell the two apart", who, p.Line, p.Col)})
			continue
		}
		first[name] = at(off)
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// checkBounds refuses a tool whose input or output schema is beyond
// schemacheck's bounds (nesting, enum values, bytes), before anything
// reads it further: compiling, regrouping, transforming and measuring a
// schema within them costs time linear in its size.
func checkBounds(input, output []byte) error {
	if err := schemacheck.CheckBounds(input); err != nil {
		return fmt.Errorf("inputSchema %w", err)
	}
	if err := schemacheck.CheckBounds(output); err != nil {
		return fmt.Errorf("outputSchema %w", err)
	}
	return nil
}

// WriteTools writes tools as a tools/list result, every member each
// server sent kept, so that LoadTools reads back what was listed.
func WriteTools(path string, tools []Tool) error {
	b, err := json.MarshalIndent(map[string][]Tool{"tools": tools}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// CheckDuplicates refuses tools listed twice under one name, naming both
// positions in the list (a live server's tools/list, all pages joined).
func CheckDuplicates(origin string, tools []Tool) error {
	first := map[string]int{}
	var msgs []string
	for i, t := range tools {
		if j, dup := first[t.Name]; dup {
			msgs = append(msgs, fmt.Sprintf("%s: tools %d and %d are both named %q; expected tool names unique, as a client cannot tell them apart", origin, j, i, t.Name))
			continue
		}
		first[t.Name] = i
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

type element struct {
	index int
	off   int64
	raw   json.RawMessage
}

// elements splits a JSON array into its elements, each with its offset.
func elements(arr []byte) []element {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if _, err := dec.Token(); err != nil { // [
		return nil
	}
	var out []element
	for i := 0; dec.More(); i++ {
		off := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		// InputOffset is before the separator and blanks; move to the value.
		for off < int64(len(arr)) && strings.ContainsRune(", \t\r\n", rune(arr[off])) {
			off++
		}
		out = append(out, element{i, off, raw})
	}
	return out
}

// member finds an object member's value and its offset in the object.
func member(obj []byte, key string) (int64, []byte) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return 0, nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, nil
		}
		off := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, nil
		}
		if tok == key {
			for off < int64(len(obj)) && strings.ContainsRune(": \t\r\n", rune(obj[off])) {
				off++
			}
			return off, raw
		}
	}
	return 0, nil
}

// posAt turns a byte offset into a file:line:col position.
func posAt(file string, data []byte, off int64) speclang.Pos {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return speclang.Pos{File: file, Line: line, Col: col}
}

// kindOf names the JSON kind of a value, with the value when short.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string " + oneLine(raw)
	}
	return oneLine(raw)
}

// oneLine shortens a JSON value to one line for a message.
func oneLine(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// unmarshalWhy words a decoding error by the field it concerns.
func unmarshalWhy(err error) string {
	var terr *json.UnmarshalTypeError
	if errors.As(err, &terr) {
		return fmt.Sprintf("found %s %s; expected %s", terr.Field, terr.Value, terr.Type)
	}
	return err.Error()
}
