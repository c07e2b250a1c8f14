package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
func StdioServer(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer) error {
	// Replies come from two writers, the filter and the server, one whole
	// line per Write.
	lw := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				if _, _, reply := vetMessage(line, false); reply != nil {
					_, _ = lw.Write(reply)
				} else if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	err := server.NewStdioServer(srv).Listen(ctx, pr, lw)
	pr.Close()
	return err
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
