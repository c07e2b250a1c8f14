package speclang

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on one YAML file. The reader builds every value in memory and
// expands aliases in full, so without them a few hundred bytes of nested
// aliases (billion laughs) or an anchor holding its own alias could take
// the harness down. Granite's own files are under 30 KB and 10 levels deep.
const (
	// MaxYAMLBytes is the largest file read: goccy's lexer and parser
	// spend about 600 bytes of memory per token, so a 1 MiB flow list of
	// numbers already costs some 600 MB and a second to read.
	MaxYAMLBytes = 1 << 20
	// MaxYAMLDepth is how deep mappings and sequences may nest, aliases
	// expanded. goccy's parser recurses once per level.
	MaxYAMLDepth = 100
	// MaxYAMLAliasNodes is how many values the aliases of one file may
	// expand to, all together.
	MaxYAMLAliasNodes = 100_000
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
	// raw is a number as the file wrote it (60.0, 1e3), for errors that
	// show the value: its scalar alone would print 60.
	raw   string
	isMap bool
	isSeq bool
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
// reported as errors. A file beyond the bounds above gets one error, found
// before the parser or the expansion of aliases costs much.
func parseYAML(file string, data []byte) (*node, ErrorList) {
	if len(data) > MaxYAMLBytes {
		return nil, ErrorList{tooBig(file)}
	}
	tokens := lexer.Tokenize(string(data))
	if e := nestingError(file, tokens); e != nil {
		return nil, ErrorList{e}
	}
	f, err := parser.Parse(tokens, 0)
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
	r := resolve(file, f.Docs[0].Body)
	if r.fatal != nil {
		return nil, ErrorList{r.fatal}
	}
	c := &converter{file: file, targets: r.targets}
	n := c.convert(f.Docs[0].Body, "$")
	errs := append(r.errs, c.errs...)
	errs.sort()
	return n, errs
}

func tooBig(file string) *Error {
	return &Error{Pos: Pos{File: file, Line: 1, Col: 1},
		Msg: fmt.Sprintf("found more than %s of YAML; expected at most %[1]s (granite reads each spec, config and groups file whole; real ones are under 30 KB)", mib(MaxYAMLBytes))}
}

func mib(n int) string { return fmt.Sprintf("%d MiB", n>>20) }

// ReadYAMLFile reads a YAML file for the loaders of this package, reading
// no more than MaxYAMLBytes of it: a bigger file (or /dev/zero) is
// refused with a positioned error instead of filling memory.
func ReadYAMLFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(name, f)
}

// readYAMLFS is ReadYAMLFile in a spec folder.
func readYAMLFS(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(name, f)
}

func readBounded(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxYAMLBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > MaxYAMLBytes {
		return nil, ErrorList{tooBig(name)}
	}
	return data, nil
}

// blockLevel is a block mapping or sequence still open, at the column of
// its keys or "-" entries.
type blockLevel struct {
	col int
	seq bool
}

// nestingError returns an error at the first token nested deeper than
// MaxYAMLDepth, or nil. It reads tokens, before the parser: the parser
// recurses once per level, so a file of "[" would cost it its stack, and
// the converter's paths grow with depth. Flow levels are counted by their
// brackets, block levels by the columns of their items; aliases, which
// can nest deeper still, are checked as they are expanded.
func nestingError(file string, tokens token.Tokens) *Error {
	var block []blockLevel
	flow := 0
	for i, tk := range tokens {
		if tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
			continue
		case token.DocumentHeaderType, token.DocumentEndType:
			block, flow = block[:0], 0
			continue
		case token.SequenceEntryType, token.MappingKeyType:
			if flow > 0 {
				continue
			}
			block = openBlock(block, tk.Position.Column, tk.Type == token.SequenceEntryType)
		case token.MappingValueType:
			// The key is the token before the ":".
			if flow > 0 || i == 0 || tokens[i-1].Position == nil {
				continue
			}
			block = openBlock(block, tokens[i-1].Position.Column, false)
			tk = tokens[i-1]
		default:
			continue
		}
		if d := len(block) + flow; d > MaxYAMLDepth {
			return &Error{Pos: Pos{File: file, Line: tk.Position.Line, Col: tk.Position.Column}, Msg: tooDeep(d)}
		}
	}
	return nil
}

func tooDeep(d int) string {
	return fmt.Sprintf("found a mapping or sequence nested %d levels deep; expected at most %d levels", d, MaxYAMLDepth)
}

// openBlock records a block item at column col: it closes the collections
// whose items are further right, and opens a collection unless the item
// continues the innermost one. A sequence may sit at its key's column
// ("key:\n- item"); a key at that column closes it.
func openBlock(open []blockLevel, col int, seq bool) []blockLevel {
	for len(open) > 0 {
		top := open[len(open)-1]
		if top.col > col || top.col == col && top.seq && !seq {
			open = open[:len(open)-1]
			continue
		}
		if top.col == col && top.seq == seq {
			return open
		}
		break
	}
	return append(open, blockLevel{col, seq})
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

// resolver walks a file's nodes once, in order, before anything is
// built: it gives each alias the anchor it names and refuses, before they
// cost anything, aliases that would expand into too many values or too
// deep, and nesting deeper than the token scan saw.
type resolver struct {
	file    string
	anchors map[string]*ast.AnchorNode
	// open holds the anchors whose value is being walked: an alias to one
	// of them is inside its own anchor.
	open map[*ast.AnchorNode]bool
	// sizes and levels are each finished anchor's value as its aliases
	// expand it: how many values, nested how many levels.
	sizes   map[*ast.AnchorNode]int
	levels  map[*ast.AnchorNode]int
	targets map[*ast.AliasNode]*ast.AnchorNode
	// expanded counts the values every alias so far expands to.
	expanded int
	// steps is the path to the node being walked (string keys, int
	// indexes), rendered only for an error.
	steps []any
	errs  ErrorList
	// fatal is a bound exceeded: the only error reported, and the end of
	// the walk.
	fatal *Error
}

func resolve(file string, body ast.Node) *resolver {
	r := &resolver{file: file, anchors: map[string]*ast.AnchorNode{}, open: map[*ast.AnchorNode]bool{},
		sizes: map[*ast.AnchorNode]int{}, levels: map[*ast.AnchorNode]int{}, targets: map[*ast.AliasNode]*ast.AnchorNode{}}
	r.walk(body, 0)
	return r
}

func (r *resolver) path() string {
	p := "$"
	for _, s := range r.steps {
		if i, ok := s.(int); ok {
			p = fmt.Sprintf("%s[%d]", p, i)
		} else {
			p = childPath(p, s.(string))
		}
	}
	return p
}

func (r *resolver) errorf(n ast.Node, format string, args ...any) *Error {
	return &Error{Pos: posOf(r.file, n), Path: r.path(), Msg: fmt.Sprintf(format, args...)}
}

// walk returns how many values n expands to, aliases included, and how
// many levels of mappings and sequences they nest; depth is how many
// enclose n.
func (r *resolver) walk(n ast.Node, depth int) (size, levels int) {
	if r.fatal != nil || n == nil {
		return 0, 0
	}
	switch v := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		if depth+1 > MaxYAMLDepth {
			r.fatal = r.errorf(n, "%s", tooDeep(depth+1))
			return 0, 0
		}
		var pairs []*ast.MappingValueNode
		switch v := v.(type) {
		case *ast.MappingNode:
			pairs = v.Values
		case *ast.MappingValueNode:
			pairs = []*ast.MappingValueNode{v}
		case *ast.SequenceNode:
			for i, it := range v.Values {
				r.steps = append(r.steps, i)
				s, l := r.walk(it, depth+1)
				r.steps = r.steps[:len(r.steps)-1]
				size, levels = size+s, max(levels, l)
			}
		}
		for _, mv := range pairs {
			// A key may hold an anchor that a later alias names.
			ks, _ := r.walk(mv.Key, depth+1)
			r.steps = append(r.steps, mv.Key.GetToken().Value)
			s, l := r.walk(mv.Value, depth+1)
			r.steps = r.steps[:len(r.steps)-1]
			size, levels = size+ks+s, max(levels, l)
		}
		return size + 1, levels + 1
	case *ast.MappingKeyNode:
		return r.walk(v.Value, depth)
	case *ast.TagNode:
		return r.walk(v.Value, depth)
	case *ast.AnchorNode:
		// The anchor is defined where it starts, as YAML has it, so an
		// alias inside its own value names it.
		r.anchors[v.Name.GetToken().Value] = v
		r.open[v] = true
		size, levels = r.walk(v.Value, depth)
		delete(r.open, v)
		r.sizes[v], r.levels[v] = size, levels
		return size, levels
	case *ast.AliasNode:
		return r.alias(v, depth)
	}
	return 1, 0
}

// alias checks an alias and returns what it expands to.
func (r *resolver) alias(v *ast.AliasNode, depth int) (size, levels int) {
	name := v.Value.GetToken().Value
	a := r.anchors[name]
	switch {
	case a == nil:
		r.errs = append(r.errs, r.errorf(v, "found alias *%s; expected an anchor defined before it", name))
		return 1, 0
	case r.open[a]:
		at := posOf(r.file, a)
		r.errs = append(r.errs, r.errorf(v, "found alias *%s inside the value of its own anchor &%[1]s (%d:%d); expected an alias to a value complete before it (a value that contains itself has no JSON form)", name, at.Line, at.Col))
		return 1, 0
	}
	size, levels = r.sizes[a], r.levels[a]
	if depth+levels > MaxYAMLDepth {
		r.fatal = r.errorf(v, "found alias *%s that expands to %s", name, strings.TrimPrefix(tooDeep(depth+levels), "found "))
		return 0, 0
	}
	// Every anchor's size was added here when its own aliases were met,
	// so no size can grow past this bound and overflow.
	if r.expanded += size; r.expanded > MaxYAMLAliasNodes {
		r.fatal = r.errorf(v, "found alias *%s that, with the aliases before it, expands to more than %d values; expected aliases that repeat small parts of the file (each alias is expanded in full, so nested ones multiply)", name, MaxYAMLAliasNodes)
		return 0, 0
	}
	r.targets[v] = a
	return size, levels
}

// converter builds nodes from a file resolve accepted.
type converter struct {
	file    string
	targets map[*ast.AliasNode]*ast.AnchorNode
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
		return c.convert(v.Value, path)
	case *ast.AliasNode:
		// resolve reported an alias it gave no anchor.
		a := c.targets[v]
		if a == nil {
			return out
		}
		res := c.convert(a.Value, path)
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
		out.raw = v.GetToken().Value
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
		out.scalar, out.raw = v.Value, v.GetToken().Value
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
// text is the node's value for an error message: a number as written,
// anything else as JSON (cut at 60 characters).
func (n *node) text() string {
	if n != nil && n.raw != "" {
		return n.raw
	}
	return jsonText(n.toAny())
}

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
