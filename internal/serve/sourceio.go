package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
)

// inputBacklog bounds, in bytes, what a relay keeps for a source that
// does not read its input. Past it a call is refused and an answer the
// source is owed is dropped, rather than the relay waiting on the source.
const inputBacklog = 1 << 20

// input is a source's standard input. A write never blocks: a line the
// pipe takes at once goes straight in (the hot path of a call, with no
// goroutine crossed), and the rest waits in a bounded backlog that a
// goroutine of its own writes as the source reads.
type input struct {
	f   *os.File
	raw syscall.RawConn

	mu      sync.Mutex
	backlog []byte // bytes the pipe has not taken yet, in order
	writing bool   // drain holds bytes taken from backlog
	closed  bool
	err     error // the first write error; every later write gets it
	wake    chan struct{}
}

// errNotReading is a write refused because the source has not read the
// backlog.
var errNotReading = fmt.Errorf("the source server is not reading its input: %d bytes already wait for it", inputBacklog)

func newInput(f *os.File) (*input, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	in := &input{f: f, raw: raw, wake: make(chan struct{}, 1)}
	go in.drain()
	return in, nil
}

// write takes a whole line, or refuses it with errNotReading when the
// backlog is full; it never waits for the source.
func (in *input) write(line []byte) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.err != nil:
		return in.err
	case in.closed:
		return os.ErrClosed
	case len(in.backlog) == 0 && !in.writing:
		n, err := writeNow(in.raw, line)
		if err != nil {
			in.err = err
			return err
		}
		// What the pipe did not take follows whatever the bound: a line
		// cut short would garble every later one.
		if line = line[n:]; len(line) == 0 {
			return nil
		}
	case len(in.backlog)+len(line) > inputBacklog:
		return errNotReading
	}
	in.backlog = append(in.backlog, line...)
	select {
	case in.wake <- struct{}{}:
	default:
	}
	return nil
}

// drain writes the backlog as the source reads it, until the input is
// closed or fails.
func (in *input) drain() {
	for range in.wake {
		for {
			in.mu.Lock()
			b, closed := in.backlog, in.closed
			more := len(b) > 0 && !closed
			in.backlog, in.writing = nil, more
			in.mu.Unlock()
			if closed {
				return
			}
			if !more {
				break
			}
			// Waits in Go's poller until the source reads; close ends
			// the wait.
			if _, err := in.f.Write(b); err != nil {
				in.mu.Lock()
				in.err, in.writing = err, false
				in.mu.Unlock()
				return
			}
		}
	}
}

// close closes the source's input; what the backlog still held is
// dropped.
func (in *input) close() error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil
	}
	in.closed = true
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	return in.f.Close()
}

// tailBytes is how much of the end of an over-long line is kept to find
// the id it answers.
const tailBytes = 256

// readLine reads one line of at most max bytes, a client's or a source's.
// A longer line is read to its end without being kept: over is set,
// atLimit (when not nil) sees its first max bytes the moment the line
// passes max, and tail holds its last bytes.
func readLine(br *bufio.Reader, max int, atLimit func(head []byte)) (line, tail []byte, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case over:
		case len(line)+len(chunk) <= max:
			line = append(line, chunk...)
		default:
			over = true
			if atLimit != nil {
				atLimit(append(line, chunk[:max-len(line)]...))
			}
			line = nil
		}
		if over {
			tail = append(tail, chunk...)
			if len(tail) > tailBytes {
				tail = append(tail[:0], tail[len(tail)-tailBytes:]...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tail, over, err
		}
	}
}

// headID is the relay's id a line names as its first members, before a
// value cut by the limit: as mcp-go and the Python SDK write an answer.
func headID(head []byte) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if key == "id" {
			var id int64
			err := dec.Decode(&id)
			return id, err == nil
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0, false
		}
	}
	return 0, false
}

// lastID matches an id that is a line's last member, as the TypeScript
// SDK writes an answer: the one closing brace after it ends the line's
// object, so the member is the line's own.
var lastID = regexp.MustCompile(`"id"\s*:\s*(\d+)\s*\}\s*$`)

// tailID is the relay's id a line names as its last member.
func tailID(tail []byte) (int64, bool) {
	m := lastID.FindSubmatch(tail)
	if m == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(string(m[1]), 10, 64)
	return id, err == nil
}
