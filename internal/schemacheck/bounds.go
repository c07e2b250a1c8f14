package schemacheck

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The bounds on one JSON Schema that granite reads from a server it does
// not trust (a tool's input or output schema). Each is far above what a
// real MCP server publishes, whose schemas nest a few levels, whose enums
// list tens or hundreds of values and whose text runs to kilobytes; the
// size is above what any model's context holds. Within them, reading,
// compiling, regrouping, transforming and measuring a schema cost time
// linear in its size: the schema compiler and Ollama's tool types, which
// read each nested level's text again, cost at most MaxSchemaDepth times
// that. Without them one tool nesting 1,000 objects, or one enum of
// 300,000 values, held `granite list --interfaces` for tens of seconds.
const (
	// MaxSchemaDepth is how deeply objects and arrays may nest in one
	// schema, the schema itself being the first level: 128, which is 64
	// levels of nested arguments ({"properties": {"a": {"properties":
	// …}}} takes two levels per argument).
	MaxSchemaDepth = 128
	// MaxEnumValues is how many values one enum keyword may list.
	MaxEnumValues = 100_000
	// MaxSchemaBytes is how long one schema may be, as JSON text: 4 MiB,
	// about a million tokens, more than a model's context holds.
	MaxSchemaBytes = 4 << 20
)

// BoundsError is a schema beyond one of the bounds: where it crossed it
// and which.
type BoundsError struct {
	// Path leads to the value that crossed the bound, as members and
	// items joined by dots ("properties.a.properties.b", "anyOf[2]"); ""
	// for the schema as a whole.
	Path string
	// Msg says which bound was crossed, and the bound.
	Msg string
}

// Error reads "at PATH: MSG", or MSG for the schema as a whole, to follow
// what the schema is ("inputSchema at properties.a: nested deeper
// than …").
func (e *BoundsError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return "at " + e.Path + ": " + e.Msg
}

// CheckBounds checks a schema's JSON text against MaxSchemaDepth,
// MaxEnumValues (CheckNesting) and MaxSchemaBytes, and returns a
// *BoundsError for the first bound it crosses, a nesting or an enum
// before the length, which says less of where. It checks no syntax: text
// that is not JSON passes, for the parser to refuse.
func CheckBounds(raw []byte) error {
	if err := CheckNesting(raw); err != nil {
		return err
	}
	if len(raw) > MaxSchemaBytes {
		return &BoundsError{Msg: fmt.Sprintf("is %d bytes long; expected at most %d (%d MiB): granite reads no longer schema", len(raw), MaxSchemaBytes, MaxSchemaBytes>>20)}
	}
	return nil
}

// CheckNesting checks a schema's JSON text against MaxSchemaDepth and
// MaxEnumValues, whatever its length, in one pass over its bytes: for a
// schema built of others already checked, like a coarse tool's, which
// joins many tools' arguments.
func CheckNesting(raw []byte) error {
	var stack []frame
	wantKey := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			if len(stack) == MaxSchemaDepth {
				return &BoundsError{Path: boundsPath(stack), Msg: fmt.Sprintf("nested deeper than %d levels of objects and arrays; expected at most %d (64 levels of nested arguments): granite reads no deeper schema", MaxSchemaDepth, MaxSchemaDepth)}
			}
			// In an object, an array opens right after its key.
			enum := raw[i] == '[' && len(stack) > 0 && stack[len(stack)-1].object && string(stack[len(stack)-1].key) == `"enum"`
			stack = append(stack, frame{object: raw[i] == '{', enum: enum})
			wantKey = raw[i] == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			wantKey = false
		case ',':
			if len(stack) == 0 {
				continue
			}
			top := &stack[len(stack)-1]
			if top.object {
				wantKey = true
				continue
			}
			// The comma before item index+1: index+1 items so far.
			if top.index++; top.enum && top.index >= MaxEnumValues {
				return &BoundsError{Path: boundsPath(stack[:len(stack)-1]), Msg: fmt.Sprintf("enum lists more than %d values; expected at most %d: granite reads no longer enum", MaxEnumValues, MaxEnumValues)}
			}
		case '"':
			end := stringEnd(raw, i)
			if wantKey && len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = raw[i:end]
				wantKey = false
			}
			i = end - 1
		}
	}
	return nil
}

// frame is an object or array open at a point of CheckBounds's pass: the
// member an object is at (its key's raw JSON, quotes included), the
// index of the item an array is at, and whether the array is an enum
// keyword's.
type frame struct {
	object bool
	key    []byte
	index  int
	enum   bool
}

// stringEnd is the offset just past the JSON string that starts at
// raw[start] (a quote), or len(raw) when it never ends.
func stringEnd(raw []byte, start int) int {
	for j := start + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// boundsPathShown is how many steps of a long path a message gives, at
// its start and at its end.
const boundsPathShown = 4

// boundsPath writes the path through the open frames: each object's
// member, each array's item. A long path keeps its first and last steps
// and says how many it leaves out.
func boundsPath(stack []frame) string {
	steps := make([]string, 0, len(stack))
	for _, f := range stack {
		if f.object {
			steps = append(steps, pathKey(f.key))
		} else {
			steps = append(steps, "["+strconv.Itoa(f.index)+"]")
		}
	}
	if len(steps) > 2*boundsPathShown+1 {
		left := len(steps) - 2*boundsPathShown
		steps = append(append(steps[:boundsPathShown:boundsPathShown], fmt.Sprintf("…(%d more)…", left)), steps[len(steps)-boundsPathShown:]...)
	}
	var b strings.Builder
	for i, s := range steps {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// pathKey is a member's name as a path step: as it is when it is a plain
// word, else quoted (a server's key may hold dots, spaces or control
// characters), and clipped.
func pathKey(raw []byte) string {
	var k string
	if json.Unmarshal(raw, &k) != nil {
		k = string(raw)
	}
	if len(k) > 40 {
		k = k[:40] + "…"
	}
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return k
	}
	return strconv.Quote(k)
}
