package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DrainTimeout bounds how long Stdio waits, once its input has
// ended, for the requests under way to be answered; the rest are given
// up. A variable, so that a caller (or a test) can set another.
var DrainTimeout = 10 * time.Second

// MaxLine bounds one message a stdio client sends, as MaxBody bounds an
// HTTP request (granite serve's --max-body sets both): a longer line is
// not kept, and is answered with a JSON-RPC error once it ends.
var MaxLine int64 = 1 << 20

// A Forwarder takes messages off a stdio server's read loop before the
// server sees them: a proxy forwards its tool calls over its
// own connection to the source (see Relay).
type Forwarder interface {
	// Forward takes a vetted message and returns true, or leaves it to
	// the server with false. A request it takes must be answered, now
	// or later, through send, which writes one line to the client and
	// may be kept and called from any goroutine. Forward runs on the
	// read loop: it must not wait for an answer.
	Forward(ctx context.Context, msg []byte, send func(line []byte)) bool
	// Drain returns once every request taken has been answered.
	Drain()
}

// Stdio serves an MCP server (a domain's, NewServer; a relay's) over
// stdio until in ends or ctx is cancelled: one line per message each way.
// Messages mcp-go would answer in Go terms (numbers no float64 holds,
// params of the wrong shape) are answered here, as over HTTP. Each line is vetted as an HTTP body is
// (see vetMessage), offered to fwd when there is one, and otherwise handed
// straight to srv; requests run concurrently, each answered when it is
// done, and notifications in the order they came. When in ends, the
// requests under way are answered before Stdio returns, for up to
// DrainTimeout: those still unanswered then are cancelled and given up,
// with an error saying so. When ctx ends, they are cancelled and it
// returns ctx's error.
//
// It reads and answers the lines itself instead of through mcp-go's
// StdioServer, which passes every message through a reader goroutine per
// line and tool calls through a worker queue. A forwarded call crosses no
// goroutine on its way in: that is what keeps a regrouped call within
// 200 µs of a direct one (BenchmarkRegroupedCallOverStdio).
func Stdio(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, fwd Forwarder) error {
	sess := &stdioSession{notes: make(chan mcp.JSONRPCNotification, 100)}
	if err := srv.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register session: %w", err)
	}
	defer srv.UnregisterSession(ctx, sess.SessionID())
	sctx, cancel := context.WithCancel(srv.WithContext(ctx, sess))
	defer cancel()

	w := &lineWriter{w: out}
	defer w.close()
	go func() {
		for {
			select {
			case n := <-sess.notes:
				w.writeJSON(n)
			case <-sctx.Done():
				return
			}
		}
	}()
	l := &stdioLoop{srv: srv, w: w, fwd: fwd}
	ended := make(chan error, 1)
	go func() { ended <- l.read(sctx, bufio.NewReader(in)) }()
	var err error
	select {
	case err = <-ended:
	case <-ctx.Done():
		return ctx.Err()
	}
	// The input has ended: answer what is under way, unless ctx ends
	// first or it takes too long (a call the source never answers must
	// not keep the process alive).
	answered := make(chan struct{})
	go func() {
		l.requests.Wait()
		if fwd != nil {
			fwd.Drain()
		}
		close(answered)
	}()
	drain := time.NewTimer(DrainTimeout)
	defer drain.Stop()
	select {
	case <-answered:
	case <-ctx.Done():
		return ctx.Err()
	case <-drain.C:
		return errors.Join(err, fmt.Errorf("requests still unanswered %s after the input ended: gave up on them", DrainTimeout))
	}
	return errors.Join(err, w.failed())
}

// stdioLoop answers the lines of one stdio client.
type stdioLoop struct {
	srv      *server.MCPServer
	w        *lineWriter
	fwd      Forwarder
	requests sync.WaitGroup
}

// read answers lines until in ends (nil) or fails.
func (l *stdioLoop) read(ctx context.Context, r *bufio.Reader) error {
	for ctx.Err() == nil {
		line, _, long, err := readLine(r, int(MaxLine), nil)
		switch {
		case long:
			l.w.write(rpcError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("the message is a line over %d bytes; it was not read", MaxLine)))
		case len(bytes.TrimSpace(line)) > 0:
			l.answer(ctx, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// answer answers one message: a vetting refusal at once; what the
// forwarder takes, its way; a request to the server on its own goroutine;
// a notification in line. The forwarder decodes what it takes itself, so
// only what it leaves is checked against mcp-go's Go types.
func (l *stdioLoop) answer(ctx context.Context, line []byte) {
	p, _, reply := vetJSON(line, false)
	switch {
	case reply != nil:
		l.w.write(reply)
	case l.fwd != nil && l.fwd.Forward(ctx, line, l.w.write):
	default:
		l.serve(ctx, p, line)
	}
}

// serve hands a message to the server.
func (l *stdioLoop) serve(ctx context.Context, p post, line []byte) {
	if _, reply := vetTypes(p, line); reply != nil {
		l.w.write(reply)
		return
	}
	switch {
	case p.request:
		l.requests.Go(func() {
			if resp := handleMessage(ctx, l.srv, p.id, line); resp != nil {
				l.w.writeJSON(resp)
			}
		})
	default:
		if resp := handleMessage(ctx, l.srv, p.id, line); resp != nil {
			l.w.writeJSON(resp)
		}
	}
}

// handleMessage runs srv on one message; a handler's panic is the
// request's internal error, not the end of the process.
func handleMessage(ctx context.Context, srv *server.MCPServer, id any, line []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			resp = nil
			if id != nil {
				resp = mcp.NewJSONRPCError(mcp.NewRequestId(id), mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r), nil)
			}
		}
	}()
	return srv.HandleMessage(ctx, line)
}

// stdioSession is the one client of a stdio server.
type stdioSession struct {
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
}

func (s *stdioSession) SessionID() string                                   { return "stdio" }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *stdioSession) Initialize()                                         { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool                                   { return s.initialized.Load() }

// lineWriter writes whole lines from several goroutines, and keeps the
// first write error. Once closed it drops what it is given: an answer that
// comes after the server has returned has no one to read it.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	closed bool
}

func (l *lineWriter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		l.fail(err)
		return
	}
	l.write(append(b, '\n'))
}

func (l *lineWriter) write(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil && !l.closed {
		_, l.err = l.w.Write(b)
	}
}

func (l *lineWriter) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

func (l *lineWriter) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
}

func (l *lineWriter) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
