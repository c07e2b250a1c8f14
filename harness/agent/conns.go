package agent

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
)

// MaxTrialConns is how many connections an agent may hold open to its
// trial's server at once. An MCP client needs one or two (its POSTs and
// a GET stream), a few more when it sends calls in parallel; past the
// cap a connection is refused at once (see serve.LimitConns). An agent
// that opens thousands so holds no more of granite's descriptors than
// this, and the servers and agent commands of the trials beside it
// still find theirs.
const MaxTrialConns = 32

// Timeouts of a trial's server, each of which closes the connection and
// so frees its place under the cap: a connection must send its request
// head within trialHeaderTimeout and the whole request within
// trialReadTimeout (net/http lifts that deadline once the body is read,
// so a GET event stream or a slow call runs on), and its next request
// within trialIdleTimeout of its last reply. The idle timeout is longer
// than a model usually thinks between two calls, so an honest client
// seldom has to reconnect. There is no write timeout: it would end an
// event stream, and a client that never reads its replies holds only its
// own trial's places.
const (
	trialHeaderTimeout = 10 * time.Second
	trialReadTimeout   = 30 * time.Second
	trialIdleTimeout   = time.Minute
)

// Descriptors granite counts on when it checks that a run's parallel
// agent commands fit its open-file limit: per trial, its server's
// connections and trialFDs more (its listener, the agent's stdout and
// stderr pipes and the sandbox's, the process handle, files written for
// the agent); and ownFDs for granite itself (the journal, the stores,
// model and metrics connections, the Go runtime).
const (
	trialFDs = 16
	ownFDs   = 256
)

// listenTrial listens on a loopback port of its own for a trial's
// server, admitting at most MaxTrialConns connections at once.
func listenTrial() (*serve.ConnLimit, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serve.LimitConns(ln, MaxTrialConns), nil
}

// trialHTTPServer is the http.Server of a trial's server.
func trialHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: trialHeaderTimeout, ReadTimeout: trialReadTimeout, IdleTimeout: trialIdleTimeout}
}

// checkDescriptors reports, before the run starts, an entry whose
// parallel agent commands could need more descriptors at once than
// granite may open, naming the parallel that fits and how to raise the
// limit. Go raises the soft limit to the hard one as the process starts
// (syscall's init), so the hard limit is the one to raise. Entries run
// one after another, so each must fit alone; one agent at a time (parallel
// 1) always may, as the cap bounds what it can take.
func checkDescriptors(entries []results.ModelEntry) error {
	limit, ok := openFileLimit()
	if !ok {
		return nil
	}
	return fitDescriptors(entries, limit)
}

// fitDescriptors is checkDescriptors under an open-file limit.
func fitDescriptors(entries []results.ModelEntry, limit uint64) error {
	per := uint64(MaxTrialConns + trialFDs)
	for _, e := range entries {
		n := uint64(e.Workers())
		if n <= 1 || ownFDs+n*per <= limit {
			continue
		}
		fits := "run it with parallel 1"
		if limit > ownFDs+per {
			fits = fmt.Sprintf("lower its parallel to %d", (limit-ownFDs)/per)
		}
		return fmt.Errorf("model %s: parallel %d needs up to %d open files at once (%d a trial: %d connections to its server and %d for its agent command; %d for granite itself), but granite may open %d; %s, or raise the hard limit on open files (ulimit -Hn; LimitNOFILE= under systemd)",
			e.Name, n, ownFDs+n*per, per, MaxTrialConns, trialFDs, ownFDs, limit, fits)
	}
	return nil
}
