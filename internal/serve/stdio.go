package serve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Stdio serves d at level over MCP stdio on a fresh store until in ends or
// ctx is cancelled. Messages mcp-go would answer in Go terms (numbers no
// float64 holds, params of the wrong shape) are answered here, as over
// HTTP.
func Stdio(ctx context.Context, d *mcpdomain.Domain, level mcpdomain.Level, in io.Reader, out io.Writer) error {
	srv, err := d.NewServer(level, d.NewStore())
	if err != nil {
		return err
	}
	return StdioServer(ctx, srv, in, out)
}

// StdioServer serves any MCP server over stdio as Stdio serves a domain.
// Each line is vetted as mcp-go reads it, in mcp-go's own reader: a
// separate filter goroutine and pipe cost every call two more handoffs.
func StdioServer(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer) error {
	// Replies come from two writers, the vetting reader and the server,
	// one whole line per Write.
	lw := &lockedWriter{w: out}
	return server.NewStdioServer(srv).Listen(ctx, &vettingReader{r: bufio.NewReader(in), w: lw}, lw)
}

// vettingReader passes on the lines mcp-go may read and answers the
// others itself.
type vettingReader struct {
	r    *bufio.Reader
	w    io.Writer
	line []byte // what is left of the line being passed on
	err  error  // the input's end, returned once line is passed on
}

func (v *vettingReader) Read(p []byte) (int, error) {
	for len(v.line) == 0 {
		if v.err != nil {
			return 0, v.err
		}
		line, err := v.r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if _, _, reply := vetMessage(line, false); reply != nil {
				if _, werr := v.w.Write(reply); werr != nil {
					return 0, werr
				}
			} else {
				v.line = line
			}
		}
		if err != nil {
			v.err = err
		}
	}
	n := copy(p, v.line)
	v.line = v.line[n:]
	return n, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
