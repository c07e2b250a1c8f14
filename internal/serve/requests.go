package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// requestTypes are the methods whose params vet decodes the way mcp-go
// will, so that a mismatch is answered in JSON terms before mcp-go answers
// it in Go's (struct fields and Go types).
var requestTypes = map[string]func() any{
	string(mcp.MethodInitialize): func() any { return new(mcp.InitializeRequest) },
	string(mcp.MethodPing):       func() any { return new(mcp.PingRequest) },
	string(mcp.MethodToolsList):  func() any { return new(mcp.ListToolsRequest) },
	string(mcp.MethodToolsCall):  func() any { return new(mcp.CallToolRequest) },
}

// post is what granite reads of a POST body before mcp-go does, from one
// decoding of it.
type post struct {
	method string
	// modern is true for protocol 2026-07-28 or later (by header or by
	// params._meta), which has no sessions.
	modern bool
	// request is true for a message with a method and an id, whose id
	// is id.
	request bool
	id      any
	// typed is true when mcp-go will decode params into the method's Go
	// type (requestTypes): vetTypes checks that it can.
	typed bool
}

// vet answers a POST body mcp-go would answer badly (see vetMessage); it
// reports what the body is and whether the request may go on.
func (h *Handler) vet(w http.ResponseWriter, r *http.Request, body []byte) (post, bool) {
	p, status, reply := vetMessage(body, mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)))
	if reply == nil {
		return p, true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(reply)
	return p, false
}

// vetMessage reads a JSON-RPC message and answers one mcp-go would answer
// badly, in Go terms or not at all: empty, a batch, not an object, params
// that are not an object or hold numbers no float64 holds, or params of
// the wrong JSON types. It returns what the message is, and the HTTP status
// and reply, or a nil reply when mcp-go may take the message. modern says
// the header already named protocol 2026-07-28 or later, where a JSON-RPC
// error is also an HTTP 400.
func vetMessage(body []byte, modern bool) (post, int, []byte) {
	p, status, reply := vetJSON(body, modern)
	if reply == nil {
		status, reply = vetTypes(p, body)
	}
	return p, status, reply
}

// vetJSON is vetMessage's first half: everything but the Go types. A
// message no one decodes into them (a call a Forwarder takes) needs no
// more.
func vetJSON(body []byte, modern bool) (post, int, []byte) {
	p := post{modern: modern}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return p, http.StatusBadRequest, rpcError(nil, mcp.INVALID_REQUEST, "empty request body: send one JSON-RPC message")
	case trimmed[0] == '[':
		return p, http.StatusBadRequest, rpcError(nil, mcp.INVALID_REQUEST, "batch requests are not supported: send one JSON-RPC message at a time")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return p, http.StatusBadRequest, rpcError(nil, mcp.PARSE_ERROR, "parse error: the request body is not well-formed JSON ("+mcpdomain.Clip(err.Error())+")")
	}
	msg, ok := doc.(map[string]any)
	if !ok {
		return p, http.StatusBadRequest, rpcError(nil, mcp.INVALID_REQUEST, "a JSON-RPC message is an object, not "+kindOf(doc))
	}
	p.method, _ = msg["method"].(string)
	params, has := msg["params"]
	if obj, ok := params.(map[string]any); ok {
		meta, _ := obj["_meta"].(map[string]any)
		v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
		p.modern = p.modern || mcp.IsModernProtocol(v)
	}
	id, hasID := msg["id"]
	p.request, p.id = p.method != "" && hasID, id
	if p.method == "" || !hasID || !has || params == nil {
		return p, 0, nil // responses, notifications and bare requests carry nothing to check
	}
	status := http.StatusOK
	if p.modern {
		status = http.StatusBadRequest
	}
	if _, ok := params.(map[string]any); !ok {
		return p, status, rpcError(id, mcp.INVALID_PARAMS, fmt.Sprintf("params of %s must be an object, not %s", p.method, kindOf(params)))
	}
	if path, num := outOfRange(params, "params"); path != "" {
		if arg, ok := strings.CutPrefix(path, "params.arguments."); ok && p.method == string(mcp.MethodToolsCall) {
			// The caller's mistake with one argument: a tool error the
			// model can read and correct, as a schema violation would be.
			if i := strings.IndexAny(arg, ".["); i >= 0 {
				arg = arg[:i]
			}
			res := mcp.NewToolResultError(fmt.Sprintf("argument %q: %s is out of range: a number must be at most about 1.8e308 in magnitude", arg, num))
			return p, status, encode(struct {
				JSONRPC string              `json:"jsonrpc"`
				ID      any                 `json:"id"`
				Result  *mcp.CallToolResult `json:"result"`
			}{"2.0", id, res})
		}
		return p, status, rpcError(id, mcp.INVALID_PARAMS, fmt.Sprintf("%s: number %s is out of range", path, num))
	}
	_, p.typed = requestTypes[p.method]
	return p, 0, nil
}

// vetTypes is vetMessage's second half: params mcp-go will decode into a
// Go type must decode, or be answered in JSON terms.
func vetTypes(p post, body []byte) (int, []byte) {
	if !p.typed {
		return 0, nil
	}
	if err := json.Unmarshal(body, requestTypes[p.method]()); err != nil {
		status := http.StatusOK
		if p.modern {
			status = http.StatusBadRequest
		}
		return status, rpcError(p.id, mcp.INVALID_PARAMS, fmt.Sprintf("invalid %s request: %s", p.method, jsonProblem(err)))
	}
	return 0, nil
}

// outOfRange returns the path and a short prefix of the first number in v
// that no float64 holds, or "" if there is none. The path is built once,
// from the number back up: a body nested thousands deep costs memory in
// proportion to its size, not to the square of its depth.
func outOfRange(v any, path string) (string, string) {
	segs, num, found := numberOutOfRange(v)
	if !found {
		return "", ""
	}
	var b strings.Builder
	b.WriteString(path)
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteString(segs[i])
	}
	return b.String(), num
}

// numberOutOfRange finds the first number in v that no float64 holds, and
// the path to it, innermost segment first.
func numberOutOfRange(v any) ([]string, string, bool) {
	switch v := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) {
			return nil, mcpdomain.Clip(string(v)), true
		}
	case map[string]any:
		for k, e := range v {
			if segs, n, ok := numberOutOfRange(e); ok {
				return append(segs, "."+k), n, true
			}
		}
	case []any:
		for i, e := range v {
			if segs, n, ok := numberOutOfRange(e); ok {
				return append(segs, "["+strconv.Itoa(i)+"]"), n, true
			}
		}
	}
	return nil, "", false
}

// jsonProblem says what a decoding error found in JSON terms: the field
// path without Go's struct names, and JSON types instead of Go types.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return "params do not match the method's schema"
	}
	var path []string
	for _, part := range strings.Split(te.Field, ".") {
		// Embedded Go structs show up as capitalized segments.
		if part != "" && !unicode.IsUpper(rune(part[0])) {
			path = append(path, part)
		}
	}
	got, _, _ := strings.Cut(te.Value, " ")
	return fmt.Sprintf("%s must be %s, not %s", strings.Join(path, "."), jsonKind(te.Type), article(got))
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "":
		return "something else"
	}
	return "a " + kind
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// rpcError encodes a JSON-RPC error object.
func rpcError(id any, code int, msg string) []byte {
	type details struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	return encode(struct {
		JSONRPC string  `json:"jsonrpc"`
		ID      any     `json:"id"`
		Error   details `json:"error"`
	}{"2.0", id, details{code, msg}})
}

// encode renders a message as one line of JSON.
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}
