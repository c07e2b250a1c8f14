package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ollama/ollama/api"
)

// ollamaLost is what Ollama's tool types drop of an input schema: what
// LostKeywords says of ollamaParams' conversion, in time linear in the
// schema. Ollama's types decode and encode each nested argument by
// reading its whole text again, so converting a schema whole costs its
// size times its nesting, and measuring every interface of a server
// converts each of its schemas a score of times: 63 nested arguments
// over an enum of 100,000 values held `granite list --interfaces` for
// over a minute. Here each schema object goes through Ollama's own types
// alone, its nested arguments (properties' and anyOf's objects) replaced
// by empty objects and converted in turn, which keeps what Ollama keeps
// and refuses what it refuses: an object's members decode as they
// would, whatever its arguments hold.
func ollamaLost(raw []byte) ([]string, error) {
	if !json.Valid(raw) {
		_, l, err := ollamaParams(raw) // the decoder's own words for the syntax error
		return l, err
	}
	p := &jsonLevels{raw: raw}
	root := p.value()
	if root.kind != '{' {
		_, l, err := ollamaParams(raw)
		return l, err
	}
	var lost []string
	if err := ollamaLevel(raw, root, true, "", &lost); err != nil {
		return nil, fmt.Errorf("Ollama cannot read the input schema: %w", err)
	}
	sort.Strings(lost)
	return lost, nil
}

// ollamaLevel converts one schema object n through Ollama's types (the
// parameters' at the top, an argument's below), its nested arguments
// stubbed, and adds the keywords it drops to lost, named as
// LostKeywords names them ("argument: keyword"), unless lost is nil (an
// anyOf branch or a duplicate argument, which Ollama converts and
// LostKeywords does not report). Then it does the same for each nested
// argument.
func ollamaLevel(raw []byte, n *jsonNode, top bool, at string, lost *[]string) error {
	shallow := n.stubbed(raw, top)
	var kept []byte
	var err error
	if top {
		var p api.ToolFunctionParameters
		if err = json.Unmarshal(shallow, &p); err == nil {
			kept, err = json.Marshal(p)
		}
	} else {
		var p api.ToolProperty
		if err = json.Unmarshal(shallow, &p); err == nil {
			kept, err = json.Marshal(p)
		}
	}
	if err != nil {
		return err
	}
	var keptKeys map[string]json.RawMessage
	if err := json.Unmarshal(kept, &keptKeys); err != nil {
		return err
	}
	// The last of a duplicated member is the one a map of the schema
	// holds, and the one LostKeywords reads.
	last := map[string]int{}
	for i, m := range n.members {
		last[m.key] = i
	}
	for i, m := range n.members {
		if lost != nil && last[m.key] == i {
			if _, ok := keptKeys[m.key]; !ok {
				*lost = append(*lost, strings.TrimPrefix(at+": "+m.key, ": "))
			}
		}
		switch {
		case isProperties(m.key) && m.val.kind == '{':
			// Every object argument is converted, as Ollama converts
			// each; the last of each name is reported, where the
			// schema keeps properties at all, as LostKeywords reports.
			_, kept := keptKeys["properties"]
			report := lost != nil && last[m.key] == i && kept && m.key == "properties"
			args := map[string]int{}
			for j, a := range m.val.members {
				args[a.key] = j
			}
			for j, a := range m.val.members {
				if a.val.kind != '{' {
					continue
				}
				var into *[]string
				if report && args[a.key] == j {
					into = lost
				}
				if err := ollamaLevel(raw, a.val, false, strings.TrimPrefix(at+"."+a.key, "."), into); err != nil {
					return err
				}
			}
		case isAnyOf(m.key) && !top && m.val.kind == '[':
			for _, b := range m.val.items {
				if b.kind == '{' {
					if err := ollamaLevel(raw, b, false, at, nil); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// isProperties and isAnyOf report whether a member is one that
// encoding/json decodes into Ollama's properties or anyOf: it matches
// names without regard to case, as bytes.EqualFold does. (Where two
// members fold to one name, Ollama keeps the later; LostKeywords then
// compares the exact name's arguments with the later's, and ollamaLost
// with their own: a difference no real schema shows.)
func isProperties(k string) bool { return strings.EqualFold(k, "properties") }

func isAnyOf(k string) bool { return strings.EqualFold(k, "anyOf") }

// jsonNode is a JSON value of a schema, read once: its span in the text
// and, for an object, its members in order (duplicates kept), for an
// array its items.
type jsonNode struct {
	kind       byte // '{', '[' or 0 for a scalar
	start, end int
	members    []jsonMember
	items      []*jsonNode
}

// jsonMember is one member of an object: its name, the span of its raw
// key (quotes and escapes as written) and its value.
type jsonMember struct {
	key              string
	keyStart, keyEnd int
	val              *jsonNode
}

// stubbed writes object n as it is but for its nested arguments: each
// object among its properties, and (below the top, where Ollama reads
// anyOf) each object of its anyOf, written as {}.
func (n *jsonNode) stubbed(raw []byte, top bool) []byte {
	out := make([]byte, 0, n.end-n.start)
	out = append(out, '{')
	for i, m := range n.members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(out, raw[m.keyStart:m.keyEnd]...), ':')
		switch {
		case isProperties(m.key) && m.val.kind == '{':
			out = append(out, '{')
			for j, a := range m.val.members {
				if j > 0 {
					out = append(out, ',')
				}
				out = append(append(out, raw[a.keyStart:a.keyEnd]...), ':')
				out = a.val.stub(raw, out)
			}
			out = append(out, '}')
		case isAnyOf(m.key) && !top && m.val.kind == '[':
			out = append(out, '[')
			for j, b := range m.val.items {
				if j > 0 {
					out = append(out, ',')
				}
				out = b.stub(raw, out)
			}
			out = append(out, ']')
		default:
			out = append(out, raw[m.val.start:m.val.end]...)
		}
	}
	return append(out, '}')
}

// stub appends {} for an object, else the value as written.
func (n *jsonNode) stub(raw, out []byte) []byte {
	if n.kind == '{' {
		return append(out, "{}"...)
	}
	return append(out, raw[n.start:n.end]...)
}

// jsonLevels reads JSON text json.Valid accepted into jsonNodes, in one
// pass; it checks nothing.
type jsonLevels struct {
	raw []byte
	i   int
}

func (p *jsonLevels) space() {
	for p.i < len(p.raw) && (p.raw[p.i] == ' ' || p.raw[p.i] == '\t' || p.raw[p.i] == '\n' || p.raw[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonLevels) value() *jsonNode {
	p.space()
	n := &jsonNode{start: p.i}
	switch c := p.raw[p.i]; c {
	case '{', '[':
		n.kind = c
		p.i++
		for p.space(); p.raw[p.i] != c+2; p.space() { // '}' is '{'+2, ']' is '['+2
			if c == '{' {
				m := jsonMember{keyStart: p.i}
				p.i = p.stringEnd()
				m.keyEnd = p.i
				m.key = unquote(p.raw[m.keyStart:m.keyEnd])
				p.space()
				p.i++ // the colon
				m.val = p.value()
				n.members = append(n.members, m)
			} else {
				n.items = append(n.items, p.value())
			}
			p.space()
			if p.raw[p.i] == ',' {
				p.i++
			}
		}
		p.i++
	case '"':
		p.i = p.stringEnd()
	default:
		for p.i < len(p.raw) && !strings.ContainsRune(",}] \t\n\r", rune(p.raw[p.i])) {
			p.i++
		}
	}
	n.end = p.i
	return n
}

// stringEnd is the offset past the string at p.i.
func (p *jsonLevels) stringEnd() int {
	j := p.i + 1
	for ; p.raw[j] != '"'; j++ {
		if p.raw[j] == '\\' {
			j++
		}
	}
	return j + 1
}

// unquote reads a JSON string as encoding/json does.
func unquote(q []byte) string {
	body := q[1 : len(q)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}
