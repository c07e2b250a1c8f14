package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// MaxSourceLine bounds one line of a source's output, in bytes: the
// bound on a tool result (mcpdomain.MaxResultBytes) and room for its
// framing. A variable, so that a caller (or a test) can set another.
var MaxSourceLine = mcpdomain.MaxResultBytes + 64<<10

// Relay forwards a proxy's stdio tool calls to a source command over the
// source's own stdio, line for line, as a Forwarder. The rest of the
// protocol (initialize, tools/list, ping) is the proxy's server's own,
// answered by mcp-go; only calls cross to the source.
//
// A call is routed as the proxy's handlers route it (the same Route, the
// same refusals, the same pass-through of a tool without a route), then
// written to the source under an id of the relay's own. The source's answer goes back to the
// client with the client's id and the source's result or error as the
// source wrote them, byte for byte. Nothing on the way waits on another
// goroutine: the client's line is forwarded by the loop that read it, and
// the source's answer by the loop that reads the source. That is what
// keeps a regrouped call within 200 µs of a direct one, where mcp-go's
// client and server, with their queues and hand-offs, added about 500 µs
// (BenchmarkRegroupedCallOverStdio).
//
// From the source, progress notifications reach the client unchanged (the
// progress token is the client's own: it travels in the call's _meta); a
// ping is answered; other requests (sampling, elicitation, roots) are
// refused, since the regrouped server offers its client none of them; other
// notifications are dropped. A client's notifications/cancelled reaches the
// source under the source's id for the call. When the source ends, every
// call under way and every later call is answered with a JSON-RPC error
// saying how it ended.
//
// The source is held to bounds, so that no server makes the relay wait or
// grow. What is written to its input never blocks the relay: a source
// that does not read has up to 1 MiB kept for it, then a call is refused
// with an error and an answer it is owed (to a ping, a refused sampling
// request) is dropped, and stderr says so. A line of its output over
// MaxSourceLine is not kept: the call it answers (named by the id at the
// line's start, or at its end once the line ends) fails with an error
// naming the limit, and the relay reads on. The source runs in a process
// group of its own, which Close and the end of StartRelay's context kill
// whole: a server behind sh, npx or uvx ends with it.
type Relay struct {
	routes map[string]Route
	cmd    *exec.Cmd
	stdin  *input
	stderr io.Writer
	// dropped is set once an answer the source was owed has been
	// dropped, so that stderr says so once.
	dropped atomic.Bool

	mu       sync.Mutex
	next     int64
	pending  map[int64]*waiting // by the relay's id
	byClient map[string]int64   // the relay's id of a client's request id
	notify   func([]byte)       // the client's line writer, once a call came
	gone     string             // how the source ended, once it has

	calls sync.WaitGroup // forwarded calls not yet answered
	sent  atomic.Int64
	ended chan struct{} // closed when the source's output has ended
}

// waiting is a request the source has not answered yet: a client's call
// (send set), or one of the relay's own (answer set).
type waiting struct {
	id     json.RawMessage
	send   func([]byte)
	answer chan []byte
}

// StartRelay starts the source command (split as toolsrc.SplitCommand
// splits it, in dir when dir is not empty, its standard error on stderr)
// and initialises it, within toolsrc.InitTimeout, for a relay of the
// tools routes names (see Proxy.Routes). Close ends it, and so does the
// end of ctx.
func StartRelay(ctx context.Context, routes map[string]Route, command, dir string, stderr io.Writer) (*Relay, error) {
	words, err := toolsrc.SplitCommand(command)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, words[0], words[1:]...)
	cmd.Dir, cmd.Stderr, cmd.Env = dir, stderr, toolsrc.SourceEnv(dir)
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	// The source's input stays non-blocking on granite's side (os.Pipe
	// makes it so; exec makes the child's end blocking), so that a
	// write the pipe cannot take returns at once (see input).
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = stdinR
	stdin, err := newInput(stdinW)
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	// The source's output is read with blocking reads (Fd makes the pipe
	// blocking), on a thread that waits in read(2) and writes the answer
	// on as soon as it wakes: through Go's poller instead, each answer
	// cost another thread's wake-up, about 100 µs a call on this 2-core
	// VM (BenchmarkRegroupedCallOverStdio).
	stdout, pw, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdin.close()
		return nil, err
	}
	stdout.Fd()
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close()
	stdinR.Close()
	if err != nil {
		stdout.Close()
		stdin.close()
		return nil, fmt.Errorf("start %s: %w", words[0], err)
	}
	r := &Relay{
		routes: routes, cmd: cmd, stdin: stdin, stderr: stderr,
		pending: map[int64]*waiting{}, byClient: map[string]int64{},
		ended: make(chan struct{}),
	}
	go r.readSource(stdout)
	if err := r.initialize(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	return r, nil
}

// initialize makes the handshake with the source: initialize, at the
// newest protocol version that has one, then notifications/initialized.
func (r *Relay) initialize(ctx context.Context) error {
	params, _ := json.Marshal(mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "granite", Version: "1"},
	})
	ictx, cancel := context.WithTimeout(ctx, toolsrc.InitTimeout)
	defer cancel()
	if _, err := r.roundTrip(ictx, string(mcp.MethodInitialize), params); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("initialize: no answer within %s; is it an MCP server?", toolsrc.InitTimeout)
		}
		return fmt.Errorf("initialize: %w", err)
	}
	return r.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

// roundTrip sends a request of the relay's own and waits for the source's
// result; a JSON-RPC error comes back as an error naming its code. A
// request ctx ends is cancelled at the source (initialize cannot be).
func (r *Relay) roundTrip(ctx context.Context, method string, params json.RawMessage) (*json.RawMessage, error) {
	w := &waiting{answer: make(chan []byte, 1)}
	id, err := r.request(method, params, w)
	if err != nil {
		return nil, err
	}
	var answer []byte
	select {
	case answer = <-w.answer:
	case <-ctx.Done():
		if r.forget(id) != nil && method != string(mcp.MethodInitialize) {
			r.cancelled(id, ctx.Err().Error())
		}
		return nil, ctx.Err()
	}
	var m struct {
		Result *json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	switch {
	case answer == nil:
		return nil, errors.New(r.how() + " before it answered")
	case json.Unmarshal(answer, &m) != nil:
		return nil, fmt.Errorf("the source server's answer is not JSON-RPC: %s", mcpdomain.Clip(string(bytes.TrimSpace(answer))))
	case m.Error != nil:
		return nil, fmt.Errorf("%s (error %d from the source server)", m.Error.Message, m.Error.Code)
	case m.Result == nil:
		return nil, fmt.Errorf("the source server's answer has neither a result nor an error: %s", mcpdomain.Clip(string(bytes.TrimSpace(answer))))
	}
	return m.Result, nil
}

// Forward forwards a client's tools/call of a tool the routes name, and a
// client's notifications/cancelled of a forwarded call (Forwarder).
// Everything else is the proxy's server's: a call of a tool it does not
// have, for one, gets mcp-go's own "tool not found".
func (r *Relay) Forward(_ context.Context, msg []byte, send func([]byte)) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	switch {
	case m.Method == string(mcp.MethodNotificationCancelled):
		return r.cancel(m.Params)
	case m.Method != string(mcp.MethodToolsCall) || len(m.ID) == 0:
		return false
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}
	if json.Unmarshal(m.Params, &p) != nil || (len(p.Meta) > 0 && p.Meta[0] != '{') {
		return false // the server's vetting answers it
	}
	route, ok := r.routes[p.Name]
	if !ok {
		return false
	}
	params := m.Params // a tool without a route: the call as it came
	if route != nil {
		name, args, refused, err := route(p.Arguments)
		switch {
		case refused != "":
			send(resultLine(m.ID, mcp.NewToolResultError(refused)))
			return true
		case err != nil:
			send(rpcError(m.ID, mcp.INTERNAL_ERROR, err.Error()))
			return true
		}
		p.Name, p.Arguments = name, args
		params, _ = json.Marshal(p)
	}
	w := &waiting{id: m.ID, send: send}
	r.calls.Add(1)
	if _, err := r.request(string(mcp.MethodToolsCall), params, w); err != nil {
		r.calls.Done()
		send(rpcError(m.ID, mcp.INTERNAL_ERROR, err.Error()))
	}
	return true
}

// CallTool calls a source tool through the relay and waits for its
// result (Caller), for callers other than the stdio loop: a protocol
// error of the source's is returned as an error, as mcp-go's client
// returns it.
func (r *Relay) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	res, err := r.roundTrip(ctx, string(mcp.MethodToolsCall), params)
	if err != nil {
		return nil, err
	}
	return mcp.ParseCallToolResult(res)
}

// Drain returns once every forwarded call has been answered (or
// cancelled by its client).
func (r *Relay) Drain() { r.calls.Wait() }

// Sent is how many calls have reached the source.
func (r *Relay) Sent() int64 { return r.sent.Load() }

// Close ends the source: its input closes, and 2 s later, or as soon as
// the source has exited, its process group is killed, with whatever the
// source started and left behind. Calls under way get an error. Close
// returns within 4 s even if the source's output stays open (a child
// that left the group holding it).
func (r *Relay) Close() error {
	err := r.stdin.close()
	select {
	case <-r.ended:
	case <-time.After(2 * time.Second):
	}
	_ = killGroup(r.cmd.Process)
	select {
	case <-r.ended:
	case <-time.After(2 * time.Second):
	}
	return err
}

// request writes a request to the source under a new id of the relay's,
// which w waits on.
func (r *Relay) request(method string, params json.RawMessage, w *waiting) (int64, error) {
	r.mu.Lock()
	if r.gone != "" {
		defer r.mu.Unlock()
		return 0, errors.New(r.gone)
	}
	r.next++
	id := r.next
	r.pending[id] = w
	if w.send != nil {
		r.byClient[string(w.id)] = id
		if r.notify == nil {
			r.notify = w.send
		}
	}
	r.mu.Unlock()
	line := make([]byte, 0, len(params)+64)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"method":`...)
	line = strconv.AppendQuote(line, method)
	line = append(line, `,"params":`...)
	line = append(line, params...)
	line = append(line, "}\n"...)
	if method == string(mcp.MethodToolsCall) {
		r.sent.Add(1) // before it is sent, so that it is counted before it is answered
	}
	if err := r.write(line); err != nil && r.forget(id) != nil {
		r.sent.Add(-1)
		if errors.Is(err, errNotReading) {
			return 0, fmt.Errorf("%w; the call was not sent", err)
		}
		return 0, fmt.Errorf("the source server does not take input: %w", err)
	}
	// Sent, or answered already: the source ended and readSource told
	// w so.
	return id, nil
}

// write writes a line to the source without waiting for it (see input).
func (r *Relay) write(line []byte) error { return r.stdin.write(line) }

// owe writes a line the source is owed (an answer to its request, a
// cancellation); one the source has no room for is dropped, and stderr
// says so once.
func (r *Relay) owe(line []byte) {
	if err := r.write(line); errors.Is(err, errNotReading) && !r.dropped.Swap(true) && r.stderr != nil {
		fmt.Fprintf(r.stderr, "granite serve: %v; dropping the answers it is owed until it reads\n", err)
	}
}

// forget drops a request the source will not be asked about again.
func (r *Relay) forget(id int64) *waiting {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.pending[id]
	delete(r.pending, id)
	if w != nil && w.send != nil {
		delete(r.byClient, string(w.id))
	}
	return w
}

// cancel passes a client's notifications/cancelled of a forwarded call to
// the source. The call counts as answered: a cancelled request gets no
// answer, and one the source sends anyway is dropped.
func (r *Relay) cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason,omitempty"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	r.mu.Lock()
	id, ok := r.byClient[string(p.RequestID)]
	r.mu.Unlock()
	if !ok {
		return false
	}
	if r.forget(id) != nil {
		r.calls.Done()
	}
	r.cancelled(id, p.Reason)
	return true
}

// cancelled tells the source that the relay's request id is cancelled.
func (r *Relay) cancelled(id int64, reason string) {
	note, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", string(mcp.MethodNotificationCancelled), struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}{id, reason}})
	r.owe(append(note, '\n'))
}

// readSource reads the source's lines until its output ends, then answers
// whatever is still waiting.
func (r *Relay) readSource(f *os.File) {
	defer close(r.ended)
	defer f.Close()
	out := bufio.NewReaderSize(f, 64<<10)
	for {
		failed := false
		line, tail, over, err := readLine(out, MaxSourceLine, func(head []byte) {
			if id, ok := headID(head); ok {
				failed = r.tooLong(id)
			}
		})
		switch {
		case over && !failed && err == nil:
			if id, ok := tailID(tail); ok {
				r.tooLong(id)
			}
		case !over && len(bytes.TrimSpace(line)) > 0:
			r.fromSource(line)
		}
		if err != nil {
			break
		}
	}
	how := "the source server ended"
	if err := r.cmd.Wait(); err != nil {
		how += " (" + err.Error() + ")"
	}
	r.mu.Lock()
	r.gone = how
	left := r.pending
	r.pending, r.byClient = map[int64]*waiting{}, map[string]int64{}
	r.mu.Unlock()
	for _, w := range left {
		r.deliver(w, nil)
	}
}

// fromSource handles one line of the source's.
func (r *Relay) fromSource(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return // not a JSON-RPC message: nothing to answer or pass on
	}
	switch {
	case m.Method == string(mcp.MethodPing) && len(m.ID) > 0:
		r.owe(resultLine(m.ID, struct{}{}))
	case m.Method != "" && len(m.ID) > 0:
		r.owe(rpcError(m.ID, mcp.METHOD_NOT_FOUND, "granite serve relays tool calls only: it does not pass "+m.Method+" on to its client"))
	case m.Method == string(mcp.MethodNotificationProgress):
		r.mu.Lock()
		notify := r.notify
		r.mu.Unlock()
		if notify != nil {
			notify(line)
		}
	case m.Method == "":
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		if w := r.forget(id); w != nil {
			r.deliver(w, line)
		}
	}
}

// tooLong fails the request id with an error naming the line limit, if
// it still waits, and says whether it did.
func (r *Relay) tooLong(id int64) bool {
	w := r.forget(id)
	if w != nil {
		msg := fmt.Sprintf("the source server's answer is a line over %d bytes, more than granite takes from a source: not passed on", MaxSourceLine)
		r.deliver(w, rpcError(json.RawMessage(strconv.FormatInt(id, 10)), mcp.INTERNAL_ERROR, msg))
	}
	return w != nil
}

// deliver gives the source's answer to what waited on it: the line itself
// to the relay's own request, the result or error under the client's id
// to a client's call. A nil answer means the source ended first.
func (r *Relay) deliver(w *waiting, answer []byte) {
	if w.answer != nil {
		w.answer <- answer
		return
	}
	defer r.calls.Done()
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	switch {
	case answer == nil:
		w.send(rpcError(w.id, mcp.INTERNAL_ERROR, r.how()+" before it answered"))
	case json.Unmarshal(answer, &m) != nil || (m.Result == nil) == (m.Error == nil):
		w.send(rpcError(w.id, mcp.INTERNAL_ERROR, "the source server's answer has neither a result nor an error: "+mcpdomain.Clip(string(bytes.TrimSpace(answer)))))
	default:
		line := make([]byte, 0, len(answer)+len(w.id)+32)
		line = append(line, `{"jsonrpc":"2.0","id":`...)
		line = append(line, w.id...)
		if m.Error != nil {
			line = append(append(line, `,"error":`...), m.Error...)
		} else {
			line = append(append(line, `,"result":`...), m.Result...)
		}
		w.send(append(line, "}\n"...))
	}
}

// how says how the source ended.
func (r *Relay) how() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone == "" {
		return "the source server ended"
	}
	return r.gone
}

// resultLine is a JSON-RPC result message, as one line.
func resultLine(id json.RawMessage, result any) []byte {
	return encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}
