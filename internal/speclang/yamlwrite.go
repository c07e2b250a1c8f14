package speclang

import (
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/mcpgranite/granite/internal/oneline"
)

// MarshalYAML writes v as YAML that reads back as v: the encoder's
// (goccy's) output, with each string it would leave plain double-quoted
// unless it is plain text beyond doubt. The encoder's own test misses
// strings the decoder reads as something else (".inf" a number, "? key"
// a mapping), and it writes a CR, a tab or ESC raw, or a line break in a
// block that loses a leading blank; what granite writes holds names and
// text from servers and models, any of which can be such a string.
func MarshalYAML(v any, opts ...yaml.EncodeOption) ([]byte, error) {
	node, err := yaml.ValueToNode(v, opts...)
	if err != nil {
		return nil, err
	}
	ast.Walk(quoter{}, node)
	return []byte(node.String() + "\n"), nil
}

// plainText is a string read as itself anywhere in a block: a letter
// first, then letters, digits and punctuation that starts nothing in
// YAML, so that ": " and " #" cannot occur; a keyword (true, null) the
// encoder has quoted already.
var plainText = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ .,;()/'-]*$`)

// quoter double-quotes the plain strings that are not plainText; a value
// of several lines stays a literal block where the block holds it as it
// is.
type quoter struct{}

func (q quoter) Visit(n ast.Node) ast.Visitor {
	if kv, ok := n.(*ast.MappingValueNode); ok {
		// A key is never a block: one of several lines is quoted.
		if k, ok := kv.Key.(*ast.StringNode); ok && strings.Contains(k.Value, "\n") && k.Token.Type != token.DoubleQuoteType {
			k.Token.Type = token.DoubleQuoteType
		}
		return q
	}
	s, ok := n.(*ast.StringNode)
	// A string the encoder quoted (strconv.Quote, which escapes every
	// character that is not printable) starts with a quote; one it left
	// plain never does, whatever token it made of it (".inf" an
	// infinity).
	if !ok || s.Token.Type == token.DoubleQuoteType || s.Token.Type == token.SingleQuoteType || strings.HasPrefix(s.Value, `"`) {
		return q
	}
	multi := strings.Contains(s.Value, "\n")
	if multi && !blockSafe(s.Value) || !multi && (!plainText.MatchString(s.Value) || strings.HasSuffix(s.Value, " ")) {
		// Printed as strconv.Quote(s.Value): Go's escapes (\n, \x1b,
		// \u202e) are YAML's too.
		s.Token.Type = token.DoubleQuoteType
	}
	return q
}

// blockSafe reports whether the encoder's literal block (|-) holds a
// value as it is: no character oneline.Escape rewrites but the line
// breaks, lines that start with no blank (the block's indentation is
// read off its first line) and no line break at the end, which |- would
// chomp.
func blockSafe(v string) bool {
	for _, line := range strings.Split(v, "\n") {
		if line == "" || line[0] == ' ' || strings.ContainsFunc(line, oneline.Unsafe) {
			return false
		}
	}
	return true
}
