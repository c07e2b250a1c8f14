package speclang

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// node is a YAML value with its position and JSON path, in document order.
// The loader works on nodes so that every later error can say where it is.
type node struct {
	pos  Pos
	path string
	// Exactly one of the following describes the value.
	keys   []*node // mapping keys (their scalar is the key string)
	vals   []*node // mapping values, parallel to keys
	items  []*node // sequence items
	scalar any     // string, int64, float64, bool or nil
	isMap  bool
	isSeq  bool
}

// get returns the value of key k in a mapping, or nil.
func (n *node) get(k string) *node {
	if n == nil || !n.isMap {
		return nil
	}
	for i, key := range n.keys {
		if key.scalar == k {
			return n.vals[i]
		}
	}
	return nil
}

// list returns a sequence's items (nil for a missing node).
func (n *node) list() []*node {
	if n == nil {
		return nil
	}
	return n.items
}

// str returns a scalar as a string ("" for nil).
func (n *node) str() string {
	if n == nil || n.scalar == nil {
		return ""
	}
	if s, ok := n.scalar.(string); ok {
		return s
	}
	return fmt.Sprint(n.scalar)
}

// strs returns a sequence of scalars as strings.
func (n *node) strs() []string {
	if n == nil {
		return nil
	}
	out := make([]string, len(n.items))
	for i, it := range n.items {
		out[i] = it.str()
	}
	return out
}

// toAny converts the node to the plain JSON-like value the schema
// validator takes.
func (n *node) toAny() any {
	switch {
	case n == nil:
		return nil
	case n.isMap:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k.str()] = n.vals[i].toAny()
		}
		return m
	case n.isSeq:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = it.toAny()
		}
		return s
	default:
		return n.scalar
	}
}

// parseYAML parses one YAML document keeping positions. Duplicate keys and
// constructs with no JSON meaning (anchors are resolved; tags ignored) are
// reported as errors.
func parseYAML(file string, data []byte) (*node, ErrorList) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, ErrorList{yamlError(file, err)}
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, ErrorList{{Pos: Pos{File: file, Line: 1, Col: 1}, Path: "$", Msg: "empty file: expected a domain spec mapping"}}
	}
	if len(f.Docs) > 1 {
		d := f.Docs[1]
		return nil, ErrorList{{Pos: posOf(file, d), Path: "$", Msg: "found a second YAML document; expected one document per file"}}
	}
	c := &converter{file: file, anchors: map[string]ast.Node{}}
	n := c.convert(f.Docs[0].Body, "$")
	return n, c.errs
}

func yamlError(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		tk := ye.GetToken()
		p := tk.Position
		// A flow sequence or mapping left open fails where the parser meets
		// something else, often lines later; the bracket to fix is the
		// unclosed one, so point there and say where the parser stopped.
		if open := unclosed(tk); open != nil && strings.HasSuffix(ye.GetMessage(), "' must be specified") {
			closer := map[string]string{"[": "]", "{": "}"}[open.Value]
			return &Error{Pos: Pos{File: file, Line: open.Position.Line, Col: open.Position.Column},
				Msg: fmt.Sprintf("invalid YAML: found %q that is never closed; expected %q to close it before %d:%d, where the parser stopped (%s)",
					open.Value, closer, p.Line, p.Column, ye.GetMessage())}
		}
		return &Error{Pos: Pos{File: file, Line: p.Line, Col: p.Column}, Msg: "invalid YAML: " + ye.GetMessage()}
	}
	return &Error{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "invalid YAML: " + err.Error()}
}

func posOf(file string, n ast.Node) Pos {
	t := n.GetToken()
	if t == nil || t.Position == nil {
		return Pos{File: file, Line: 1, Col: 1}
	}
	return Pos{File: file, Line: t.Position.Line, Col: t.Position.Column}
}

type converter struct {
	file    string
	anchors map[string]ast.Node
	errs    ErrorList
}

func (c *converter) errorf(n ast.Node, path, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: posOf(c.file, n), Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (c *converter) convert(n ast.Node, path string) *node {
	out := &node{pos: posOf(c.file, n), path: path}
	switch v := n.(type) {
	case *ast.MappingNode:
		out.isMap = true
		seen := map[string]bool{}
		for _, mv := range v.Values {
			c.addPair(out, mv, path, seen)
		}
	case *ast.MappingValueNode:
		out.isMap = true
		c.addPair(out, v, path, map[string]bool{})
	case *ast.SequenceNode:
		out.isSeq = true
		for i, it := range v.Values {
			out.items = append(out.items, c.convert(it, fmt.Sprintf("%s[%d]", path, i)))
		}
	case *ast.AnchorNode:
		c.anchors[v.Name.GetToken().Value] = v.Value
		return c.convert(v.Value, path)
	case *ast.AliasNode:
		target, ok := c.anchors[v.Value.GetToken().Value]
		if !ok {
			c.errorf(n, path, "found alias *%s; expected an anchor defined before it", v.Value.GetToken().Value)
			return out
		}
		res := c.convert(target, path)
		res.pos = out.pos
		return res
	case *ast.TagNode:
		return c.convert(v.Value, path)
	case *ast.NullNode:
	case *ast.StringNode:
		out.scalar = v.Value
	case *ast.LiteralNode:
		out.scalar = v.Value.Value
	case *ast.IntegerNode:
		switch i := v.Value.(type) {
		case int64:
			out.scalar = i
		case uint64:
			if i <= 1<<63-1 {
				out.scalar = int64(i)
			} else {
				out.scalar = float64(i)
			}
		default:
			out.scalar = i
		}
	case *ast.FloatNode:
		out.scalar = v.Value
	case *ast.BoolNode:
		out.scalar = v.Value
	default:
		c.errorf(n, path, "found a YAML %s; expected a mapping, sequence or plain value", n.Type())
	}
	return out
}

func (c *converter) addPair(m *node, mv *ast.MappingValueNode, path string, seen map[string]bool) {
	if mv.Key == nil {
		return
	}
	key := mv.Key.GetToken().Value
	if _, merge := mv.Key.(*ast.MergeKeyNode); merge {
		c.errorf(mv.Key, path, "found a merge key (<<); expected plain keys")
		return
	}
	kp := childPath(path, key)
	if seen[key] {
		c.errorf(mv.Key, kp, "found key %q a second time; expected each key once", key)
		return
	}
	seen[key] = true
	m.keys = append(m.keys, &node{pos: posOf(c.file, mv.Key), path: kp, scalar: key})
	m.vals = append(m.vals, c.convert(mv.Value, kp))
}

// childPath appends a key to a JSON path, quoting keys that are not plain
// identifiers.
func childPath(path, key string) string {
	for _, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return path + "[" + strconv.Quote(key) + "]"
		}
	}
	return path + "." + key
}

// pointerToPath turns a JSON pointer's tokens into a JSON path.
func pointerToPath(tokens []string, root *node) (string, *node) {
	path, n := "$", root
	for _, t := range tokens {
		switch {
		case n != nil && n.isSeq:
			i, _ := strconv.Atoi(t)
			path = fmt.Sprintf("%s[%d]", path, i)
			if i >= 0 && i < len(n.items) {
				n = n.items[i]
			} else {
				n = nil
			}
		default:
			path = childPath(path, t)
			n = n.get(t)
		}
	}
	return path, n
}

// keyNode returns the key node of k in mapping n, or nil.
func (n *node) keyNode(k string) *node {
	if n == nil || !n.isMap {
		return nil
	}
	for _, key := range n.keys {
		if key.scalar == k {
			return key
		}
	}
	return nil
}

// jsonText renders a scalar or small value for an error message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// Document is a YAML file parsed with positions and validated against a
// JSON Schema, for loaders outside this package (experiment configs) that
// want the same positioned errors as domain specs.
type Document struct {
	File string
	root *node
}

// ParseDocument parses a YAML file and validates it against sch. It
// returns every error at once, each with its position.
func ParseDocument(file string, data []byte, sch *jsonschema.Schema) (*Document, ErrorList) {
	root, errs := parseValidated(file, data, sch)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Document{File: file, root: root}, nil
}

// parseValidated parses a YAML file and validates it against a schema,
// returning every error, sorted, at once.
func parseValidated(file string, data []byte, sch *jsonschema.Schema) (*node, ErrorList) {
	root, errs := parseYAML(file, data)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := validateNode(sch, root); len(errs) > 0 {
		errs.sort()
		return nil, errs
	}
	return root, nil
}

// Decode stores the document's value in v, as encoding/json would.
func (d *Document) Decode(v any) error {
	b, err := json.Marshal(d.root.toAny())
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Errorf returns an error positioned at the value the path leads to (map
// keys as strings, sequence indexes as ints), or at the nearest existing
// parent.
func (d *Document) Errorf(path []any, format string, args ...any) *Error {
	n := d.root
	for _, p := range path {
		var next *node
		switch k := p.(type) {
		case string:
			next = n.get(k)
		case int:
			if items := n.list(); k >= 0 && k < len(items) {
				next = items[k]
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return &Error{Pos: n.pos, Path: n.path, Msg: fmt.Sprintf(format, args...)}
}

// CompileSchema compiles a JSON Schema document (with format assertions)
// for ParseDocument.
func CompileSchema(name string, data []byte) (*jsonschema.Schema, error) {
	return compileSpecSchema(name, data)
}

// unclosed returns the "[" or "{" that is still open at tk, the token a
// flow collection's parse failed at, or nil when tk is not such a failure
// or no bracket is open.
func unclosed(tk *token.Token) *token.Token {
	if tk.Position == nil {
		return nil
	}
	depth := 0
	for t := tk.Prev; t != nil; t = t.Prev {
		switch t.Type {
		case token.SequenceEndType, token.MappingEndType:
			depth++
		case token.SequenceStartType, token.MappingStartType:
			if depth == 0 {
				if t.Position == nil || t.Position.Line == tk.Position.Line && t.Position.Column == tk.Position.Column {
					return nil
				}
				return t
			}
			depth--
		}
	}
	return nil
}
