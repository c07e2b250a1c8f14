package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Option changes how NewServer, Open and DomainFactory serve a domain.
type Option func(*options)

type options struct {
	faults *faults.Schedule
}

// WithFaults injects the faults a schedule draws (package faults) where
// the domain's server runs a call, after the call was resolved to its
// operation and its arguments checked: every subject (a model, an agent
// command served the session, a recorded client, granite serve) meets
// the same fault on the same call to the same operation, whatever
// interface it calls through. A nil schedule, or one of rate 0, injects
// nothing.
func WithFaults(s *faults.Schedule) Option {
	return func(o *options) { o.faults = s }
}

// injector is one server's fault state: how many calls each operation
// has had, and the entities that stopped answering.
type injector struct {
	sched *faults.Schedule
	mu    sync.Mutex
	calls map[string]int
	// offline holds the key of each entity taken offline (namedEntity).
	offline map[string]bool
}

// newInjector is the fault state of a fresh server, or nil where o asks
// for no faults.
func newInjector(o options) *injector {
	if o.faults == nil || o.faults.Setting.None() {
		return nil
	}
	return &injector{sched: o.faults, calls: map[string]int{}, offline: map[string]bool{}}
}

// faultNoteKey keys the note a call's context carries for the fault
// injected into it (noting).
type faultNoteKey struct{}

// noting is ctx carrying a note of the fault the server injects into the
// call made with it: what a session's result and an observed HTTP call
// read, each of its own call, however many run at once.
func noting(ctx context.Context) (context.Context, *faults.Kind) {
	note := new(faults.Kind)
	return context.WithValue(ctx, faultNoteKey{}, note), note
}

// handler is tool t's handler with the schedule's faults injected into
// the calls it runs, each noted in the call's context where it carries
// a note.
func (in *injector) handler(t *mcpdomain.Tool, call mcpdomain.CallFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var kind faults.Kind
		res, err := t.Handler(in.wrap(call, &kind))(ctx, req)
		if note, ok := ctx.Value(faultNoteKey{}).(*faults.Kind); ok && kind != "" {
			*note = kind
		}
		return res, err
	}
}

// wrap is call with the schedule's faults injected, the fault injected
// set in *injected.
func (in *injector) wrap(call mcpdomain.CallFunc, injected *faults.Kind) mcpdomain.CallFunc {
	return func(op *mcpdomain.Operation, args []byte) (any, error) {
		var err error
		out, kind, failed := inject(in, op.Name, namedEntities(op, args), func() (any, bool) {
			var out any
			out, err = call(op, args)
			return out, err != nil
		}, cutReply)
		*injected = kind
		if failed != "" {
			return nil, mcpdomain.Errorf("%s", failed)
		}
		return out, err
	}
}

// inject runs a call to operation op, naming the entities named, under
// the fault the schedule draws for it: the one place a generated
// domain's server and a relay to an external server (FaultCaller) decide
// and apply a fault, so that both inject alike. run makes the call and
// reports whether it failed on its own (an error, a tool error); cut
// cuts its reply (ok false where nothing can be cut). It returns the
// reply, the fault injected ("" for none) and, for a fault that fails
// the call, the error text the agent reads instead of the reply. Calls
// are run one at a time, so that the k-th call to an operation is the
// k-th to reach the store.
func inject[R any](in *injector, op string, named []namedEntity, run func() (R, bool), cut func(R) (R, bool)) (reply R, kind faults.Kind, failed string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.calls[op]++
	for _, e := range named {
		if in.offline[e.key] {
			return reply, faults.Offline, faults.OfflineText(e.entity, e.id)
		}
	}
	kind = in.sched.Draw(op, in.calls[op])
	switch kind {
	case faults.Transient:
		return reply, kind, faults.TransientText
	case faults.RateLimit:
		return reply, kind, faults.RateLimitText
	case faults.Offline:
		if len(named) > 0 {
			e := named[0]
			in.offline[e.key] = true
			return reply, kind, faults.OfflineText(e.entity, e.id)
		}
		// A call that names no entity has none to lose.
		kind = ""
	}
	reply, failedAlone := run()
	if failedAlone || kind == "" {
		return reply, "", "" // a call that fails on its own is not faulted after
	}
	switch kind {
	case faults.Timeout:
		return reply, kind, faults.TimeoutText
	case faults.Partial:
		if short, ok := cut(reply); ok {
			return short, kind, ""
		}
	}
	return reply, "", ""
}

// namedEntity is an entity a call names by ID; key tells it from the
// server's other entities (what offline holds).
type namedEntity struct{ entity, id, key string }

// namedEntities are the entities a call's arguments name by ID, in the
// operation's argument order: the rows it reaches (Operation.Names, by
// which the scorer finds the rows a trial's offline faults took).
func namedEntities(op *mcpdomain.Operation, args []byte) []namedEntity {
	var out []namedEntity
	for _, n := range op.Names(args) {
		out = append(out, namedEntity{n.Entity, n.ID, n.Entity + "/" + n.ID})
	}
	return out
}

// cutReply is a successful result cut short: a list keeps its first half
// and ends with a marker; an object cuts its longest list that way, or,
// holding none, keeps its id and the first half of its other fields and
// names the rest under "_cut". ok is false where nothing can be cut (a
// scalar, an empty list, an object of one field).
func cutReply(out any) (any, bool) {
	raw, err := json.Marshal(out)
	if err != nil {
		return out, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out, false
	}
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return out, false
		}
		return cutList(v), true
	case map[string]any:
		longest := ""
		for k, x := range v {
			if l, ok := x.([]any); ok && len(l) > 0 && (longest == "" || len(l) > len(v[longest].([]any)) || len(l) == len(v[longest].([]any)) && k < longest) {
				longest = k
			}
		}
		if longest != "" {
			v[longest] = cutList(v[longest].([]any))
			v["_cut"] = fmt.Sprintf("%s: %s lists only some items", faults.PartialMarker, longest)
			return v, true
		}
		var keys []string
		for k := range v {
			if k != "id" {
				keys = append(keys, k)
			}
		}
		if len(keys) < 2 {
			return out, false
		}
		sort.Strings(keys)
		gone := keys[(len(keys)+1)/2:]
		for _, k := range gone {
			delete(v, k)
		}
		v["_cut"] = fmt.Sprintf("%s: fields missing", faults.PartialMarker)
		return v, true
	}
	return out, false
}

// cutList keeps the first half of a list (none of a list of one) and
// ends it with a marker saying how many items were left out.
func cutList(l []any) []any {
	kept := slices.Clone(l[:len(l)/2])
	return append(kept, fmt.Sprintf("%s: %d of %d items not shown", faults.PartialMarker, len(l)-len(kept), len(l)))
}
