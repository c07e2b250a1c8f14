package serve

import (
	"net"
	"sync/atomic"
)

// ConnLimit is a listener that keeps at most a fixed number of its
// connections open at once. A connection beyond them is accepted and
// closed at once, with a reset: it holds a descriptor of the server's
// for an instant only, and the backlog keeps draining, so a client that
// opens thousands costs the process no more than the cap, and the client
// learns at once that it was refused. (netutil.LimitListener would stop
// accepting instead: the excess would wait in the kernel's backlog, and a
// client that holds its connections would wait there forever.)
type ConnLimit struct {
	net.Listener
	max     int64
	open    atomic.Int64
	refused atomic.Int64
}

// LimitConns wraps ln so that at most n of its connections are open at
// once (at least one).
func LimitConns(ln net.Listener, n int) *ConnLimit {
	return &ConnLimit{Listener: ln, max: int64(max(1, n))}
}

// Accept waits for the next connection within the cap, refusing those
// beyond it on the way.
func (l *ConnLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refused.Add(1)
		refuse(c)
	}
}

// Open is how many of its connections are open now.
func (l *ConnLimit) Open() int { return int(l.open.Load()) }

// Refused is how many connections it has refused for being over the cap.
func (l *ConnLimit) Refused() int64 { return l.refused.Load() }

// refuse closes a connection with a reset rather than a FIN, so that
// neither side keeps it in TIME_WAIT.
func refuse(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// limitedConn gives its place under the cap back when closed (once,
// however often Close is called).
type limitedConn struct {
	net.Conn
	l      *ConnLimit
	closed atomic.Bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return err
}
