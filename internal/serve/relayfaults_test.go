package serve_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// shelfTools are an invented external server's tools: stow_crate names an
// crate by crate_id, peek_crate by id, list_crates names none.
var shelfTools = []toolsrc.Tool{
	{Name: "stow_crate", InputSchema: json.RawMessage(`{"type":"object","properties":{"shelf":{"type":"string"},"crate_id":{"type":"string"},"binId":{"type":"string"}}}`)},
	{Name: "peek_crate", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
	{Name: "list_crates", InputSchema: json.RawMessage(`{"type":"object","properties":{"valid":{"type":"boolean"}}}`)},
}

// shelf is a fake upstream of shelfTools: it counts the calls that reach
// it, answers list_crates with four items, a call of bad: true with a
// tool error, and anything else with its arguments echoed as JSON, or
// as plain text where plain is set.
type shelf struct {
	calls []string
	plain bool
}

func (s *shelf) CallTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.calls = append(s.calls, req.Params.Name)
	args, _ := json.Marshal(req.Params.Arguments)
	switch {
	case strings.Contains(string(args), `"bad":true`):
		return mcp.NewToolResultError("no such shelf"), nil
	case req.Params.Name == "list_crates":
		return mcp.NewToolResultText(`["I1","I2","I3","I4"]`), nil
	case s.plain:
		return mcp.NewToolResultText("stored"), nil
	}
	return mcp.NewToolResultText(string(args)), nil
}

// shelfServer is shelfTools served in front of c, each call forwarded
// as it came, as a regrouped L4 is.
func shelfServer(c serve.Caller) *server.MCPServer {
	p := &serve.Proxy{Name: "shelf", Routes: map[string]serve.Route{}}
	for _, t := range shelfTools {
		p.Tools = append(p.Tools, t.MCP())
	}
	return p.NewServer(c)
}

// TestFaultCallerKinds: what each kind does at the relay to an external
// server: transient and rate_limit never reach it, timeout reaches it and
// replaces its reply, partial cuts a JSON reply (and leaves plain text
// whole, unfaulted), a call that fails on its own keeps its own error,
// and offline takes the first entity named by ID away for the rest of
// the trial, whichever argument names it later.
func TestFaultCallerKinds(t *testing.T) {
	for _, c := range []struct {
		name       string
		kind       faults.Kind
		tool, args string
		plain      bool
		reached    int
		fault      faults.Kind
		isError    bool
		text       string
	}{
		{"transient", faults.Transient, "stow_crate", `{"crate_id":"I1"}`, false, 0, faults.Transient, true, faults.TransientText},
		{"rate_limit", faults.RateLimit, "stow_crate", `{"crate_id":"I1"}`, false, 0, faults.RateLimit, true, faults.RateLimitText},
		{"timeout", faults.Timeout, "stow_crate", `{"crate_id":"I1"}`, false, 1, faults.Timeout, true, faults.TimeoutText},
		{"timeout of a failing call", faults.Timeout, "stow_crate", `{"crate_id":"I1","bad":true}`, false, 1, "", true, "no such shelf"},
		{"partial list", faults.Partial, "list_crates", `{}`, false, 1, faults.Partial, false, `["I1","I2","reply cut short: 2 of 4 items not shown"]`},
		{"partial object", faults.Partial, "stow_crate", `{"crate_id":"I1","shelf":"S1","binId":"B1"}`, false, 1, faults.Partial, false, `{"_cut":"reply cut short: fields missing","binId":"B1","crate_id":"I1"}`},
		{"partial plain text", faults.Partial, "stow_crate", `{"crate_id":"I1"}`, true, 1, "", false, "stored"},
		{"offline", faults.Offline, "stow_crate", `{"shelf":"S1","binId":"B7","crate_id":"I1"}`, false, 0, faults.Offline, true, faults.OfflineText("crate", "I1")},
		{"offline naming none", faults.Offline, "list_crates", `{}`, false, 1, "", false, `"I4"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := &shelf{plain: c.plain}
			sched := &faults.Schedule{Setting: faults.Setting{Name: "all", Rate: 1, Kinds: []faults.Kind{c.kind}}, Seed: 1, Scenario: "shelf-001", Repetition: 1}
			fc := serve.FaultCaller(up, shelfTools, sched)
			sess, err := serve.Connect(t.Context(), shelfServer(fc), "shelf")
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			res, err := sess.Call(t.Context(), c.tool, json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if len(up.calls) != c.reached || res.Fault != c.fault || res.IsError != c.isError || !strings.Contains(res.Text, c.text) {
				t.Errorf("reached upstream %d times, fault %q, error %v, %q; want %d, %q, %v, a reply with %q", len(up.calls), res.Fault, res.IsError, res.Text, c.reached, c.fault, c.isError, c.text)
			}
			if c.fault != faults.Offline {
				return
			}
			// I1 stays offline under peek_crate's id too; B7, named after
			// it, was not taken.
			for _, again := range []struct{ tool, args string }{{"peek_crate", `{"id":"I1"}`}, {"stow_crate", `{"crate_id":"I2","binId":"B7"}`}} {
				res, _ := sess.Call(t.Context(), again.tool, json.RawMessage(again.args))
				if again.args == `{"id":"I1"}` && (res.Fault != faults.Offline || res.Text != faults.OfflineText("entity", "I1")) {
					t.Errorf("I1 by peek_crate after it went offline: %q %q; want the offline error", res.Fault, res.Text)
				}
				if again.tool == "stow_crate" && res.Text == faults.OfflineText("bin", "B7") {
					t.Errorf("B7 answered offline; only the first entity a call names goes offline")
				}
			}
		})
	}
}

// TestFaultCallerNoFaults: a nil schedule and one of rate 0 leave the
// caller as it was; a tool the source does not list draws nothing.
func TestFaultCallerNoFaults(t *testing.T) {
	up := &shelf{}
	if got := serve.FaultCaller(up, shelfTools, nil); got != serve.Caller(up) {
		t.Error("a nil schedule wrapped the caller")
	}
	zero := &faults.Schedule{Setting: faults.Setting{Name: "none"}, Seed: 1}
	if got := serve.FaultCaller(up, shelfTools, zero); got != serve.Caller(up) {
		t.Error("a schedule of rate 0 wrapped the caller")
	}
	all := &faults.Schedule{Setting: faults.Setting{Name: "all", Rate: 1, Kinds: []faults.Kind{faults.Transient}}, Seed: 1}
	fc := serve.FaultCaller(up, shelfTools[:1], all)
	req := mcp.CallToolRequest{}
	req.Params.Name = "peek_crate"
	req.Params.Arguments = json.RawMessage(`{"id":"I1"}`)
	res, err := fc.CallTool(t.Context(), req)
	if err != nil || res.IsError || !slices.Equal(up.calls, []string{"peek_crate"}) {
		t.Errorf("a tool the source does not list: %v %+v, upstream saw %v; want it forwarded unfaulted", err, res, up.calls)
	}
}

// TestIdentifierArgs: the rule that finds the entities an external
// tool's call names, in the schema's own property order.
func TestIdentifierArgs(t *testing.T) {
	for schema, want := range map[string][]string{
		`{"properties":{"zoneId":{},"name":{},"id":{},"valid":{},"paid":{},"owner_id":{},"_id":{},"groupID":{}}}`: {"zoneId", "id", "owner_id", "groupID"},
		`{"type":"object"}`: nil,
		`not json`:          nil,
	} {
		if got := serve.IdentifierArgs(json.RawMessage(schema)); !slices.Equal(got, want) {
			t.Errorf("IdentifierArgs(%s) = %v; want %v", schema, got, want)
		}
	}
}
