package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
)

// Observed is one tools/call a Handler answered, as the client sent it
// and as the reply gave it back: what a recording of an agent's session
// keeps.
type Observed struct {
	// Session is the Mcp-Session-Id the call came with ("" without one).
	Session   string
	Tool      string
	Arguments json.RawMessage
	// Text is the tool result's text content and IsError its isError.
	Text    string
	IsError bool
	// RPCError is the JSON-RPC error's message when the call got no tool
	// result (an unknown tool, params of the wrong shape), with its code.
	RPCError string
	RPCCode  int
	// Fault is the fault the server injected into the call (see
	// WithFaults), "" for none.
	Fault    faults.Kind
	Start    time.Time
	Duration time.Duration
	// ArgumentsBytes and TextBytes are the lengths of what was sent and
	// answered when an observer keeps Arguments and Text cut (0: whole).
	ArgumentsBytes, TextBytes int
}

// maxObserved bounds the reply bytes kept to read a call's result from;
// the generated tools' results are far smaller (see mcpdomain's limits).
const maxObserved = 4 << 20

// Existing is the factory of one server built beforehand, for NewHandler
// with SharedStore: every session is served by srv and shares its state.
// A caller that must read that state afterwards (the store a trial is
// scored on) builds the server itself and hands it over this way.
func Existing(srv *server.MCPServer) Factory {
	return func() (*server.MCPServer, func(), error) { return srv, func() {}, nil }
}

// observing tees the reply of an authorised POST when OnCall is set, and
// returns the writer to answer through, the request to serve (its
// context notes a fault injected into the call) and what to run once
// answered.
func (h *Handler) observing(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, *http.Request, func()) {
	if h.o.OnCall == nil || r.Method != http.MethodPost {
		return w, r, func() {}
	}
	tw := &teeWriter{ResponseWriter: w}
	start := time.Now()
	ctx, fault := noting(r.Context())
	return tw, r.WithContext(ctx), func() {
		if c, ok := observe(body, tw.buf.Bytes(), tw.Header().Get("Content-Type"), tw.status); ok {
			c.Session, c.Start, c.Duration, c.Fault = r.Header.Get(server.HeaderKeySessionID), start, time.Since(start), *fault
			h.o.OnCall(c)
		}
	}
}

// observe reads a tools/call request and its reply (JSON, or an event
// stream holding the response among notifications).
func observe(body, reply []byte, contentType string, status int) (Observed, bool) {
	var req struct {
		Method string `json:"method"`
		ID     json.RawMessage
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != string(mcp.MethodToolsCall) {
		return Observed{}, false
	}
	c := Observed{Tool: req.Params.Name, Arguments: req.Params.Arguments}
	var msgs [][]byte
	if strings.HasPrefix(contentType, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(reply))
		sc.Buffer(nil, maxObserved)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				msgs = append(msgs, []byte(strings.TrimSpace(data)))
			}
		}
	} else {
		msgs = append(msgs, reply)
	}
	for _, m := range msgs {
		var resp struct {
			ID     json.RawMessage
			Result *mcp.CallToolResult `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(m, &resp) != nil || (resp.Result == nil && resp.Error == nil) {
			continue
		}
		if resp.Error != nil {
			c.RPCError, c.RPCCode = resp.Error.Message, resp.Error.Code
			return c, true
		}
		var b strings.Builder
		for _, content := range resp.Result.Content {
			if t, ok := content.(mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		c.Text, c.IsError = b.String(), resp.Result.IsError
		return c, true
	}
	c.RPCError = "no JSON-RPC response to the call (HTTP " + http.StatusText(status) + ")"
	return c, true
}

// teeWriter keeps a bounded copy of a reply.
type teeWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
}

func (t *teeWriter) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	if room := maxObserved - t.buf.Len(); room > 0 {
		t.buf.Write(b[:min(len(b), room)])
	}
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
