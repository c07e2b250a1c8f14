package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// faultCall is one call to an operation, as a level writes it.
type faultCall struct{ op, args string }

// atLevel writes a call to op at lv: L4 by the operation's own tool, L1
// by the domain's one tool with the operation as its action.
func atLevel(lv level.Level, c faultCall) (string, json.RawMessage) {
	if lv == level.L4 {
		return c.op, json.RawMessage(c.args)
	}
	rest := strings.TrimPrefix(c.args, "{")
	if rest != "}" {
		rest = "," + rest
	}
	return "tiny", json.RawMessage(`{"action":"` + c.op + `"` + rest)
}

// scheduleWith finds a schedule of setting whose draw for the k-th call to
// op is want: a seed is searched, since each draw is a hash.
func scheduleWith(t *testing.T, setting faults.Setting, op string, k int, want faults.Kind) *faults.Schedule {
	t.Helper()
	for seed := 1; seed < 10000; seed++ {
		s := &faults.Schedule{Setting: setting, Seed: seed, Scenario: "tiny-001", Repetition: 1}
		if s.Draw(op, k) == want {
			return s
		}
	}
	t.Fatalf("no seed under 10000 draws %s for call %d of %s", want, k, op)
	return nil
}

// TestFaultScheduleIsTheSameAtL4AndL1: the third set_lamp of a trial
// fails alike at L4 (its own tool) and at L1 (an action of the one tool),
// with reads of another operation between the calls at L1 only: the
// schedule counts calls per operation, not per tool or per trial. The
// failed call applies nothing; every call's fault is the schedule's draw.
func TestFaultScheduleIsTheSameAtL4AndL1(t *testing.T) {
	setting := faults.Setting{Name: "flaky", Rate: 0.3, Kinds: []faults.Kind{faults.Transient}}
	sched := scheduleWith(t, setting, "set_lamp", 3, faults.Transient)
	got := map[level.Level][]faults.Kind{}
	for _, lv := range []level.Level{level.L4, level.L1} {
		sess, err := serve.Open(t.Context(), tiny.Domain, servetest.Level(t, tiny.Domain, lv), serve.WithFaults(sched))
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		for k := 1; k <= 6; k++ {
			if lv == level.L1 {
				name, args := atLevel(lv, faultCall{"get_lamp", `{"lamp_id":"LP02"}`})
				if _, err := sess.Call(t.Context(), name, args); err != nil {
					t.Fatal(err)
				}
			}
			before := sess.Store.Snapshot()
			name, args := atLevel(lv, faultCall{"set_lamp", `{"lamp_id":"LP01","level":` + string(rune('0'+k)) + `}`})
			res, err := sess.Call(t.Context(), name, args)
			if err != nil {
				t.Fatal(err)
			}
			got[lv] = append(got[lv], res.Fault)
			if want := sched.Draw("set_lamp", k); res.Fault != want {
				t.Errorf("%s: set_lamp call %d: fault %q; want the schedule's %q", lv, k, res.Fault, want)
			}
			if k == 3 {
				if !res.IsError || res.Text != faults.TransientText {
					t.Errorf("%s: third set_lamp: %v %q; want the transient error", lv, res.IsError, res.Text)
				}
				if !bytes.Equal(before, sess.Store.Snapshot()) {
					t.Errorf("%s: a transient fault changed the store", lv)
				}
			}
		}
	}
	if strings.Join(kinds(got[level.L4]), ",") != strings.Join(kinds(got[level.L1]), ",") {
		t.Errorf("faults at L4 %v, at L1 %v; want the same schedule", got[level.L4], got[level.L1])
	}
}

func kinds(ks []faults.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// TestFaultKinds: what each kind does to the reply and to the store, on
// the first call to an operation at L2, where a tool runs several.
func TestFaultKinds(t *testing.T) {
	set := faultCall{"set_lamp", `{"lamp_id":"LP01","level":7}`}
	list := faultCall{"list_lamps", `{}`}
	for _, c := range []struct {
		kind    faults.Kind
		call    faultCall
		applied bool
		isError bool
		text    string
	}{
		{faults.Transient, set, false, true, faults.TransientText},
		{faults.RateLimit, set, false, true, faults.RateLimitText},
		{faults.Timeout, set, true, true, faults.TimeoutText},
		{faults.Partial, list, false, false, faults.PartialMarker},
		{faults.Offline, set, false, true, faults.OfflineText("lamp", "LP01")},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			setting := faults.Setting{Name: "all-" + string(c.kind), Rate: 1, Kinds: []faults.Kind{c.kind}}
			sched := &faults.Schedule{Setting: setting, Seed: 1, Scenario: "tiny-001", Repetition: 1}
			sess, err := serve.Open(t.Context(), tiny.Domain, servetest.Level(t, tiny.Domain, level.L2), serve.WithFaults(sched))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			tool := "tiny_control"
			if c.call.op == "list_lamps" {
				tool = "tiny_query"
			}
			_, args := atLevel(level.L1, c.call)
			before := sess.Store.Snapshot()
			res, err := sess.Call(t.Context(), tool, args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fault != c.kind || res.IsError != c.isError || !strings.Contains(res.Text, c.text) {
				t.Errorf("fault %q, error %v, %q; want %q, %v, a reply with %q", res.Fault, res.IsError, res.Text, c.kind, c.isError, c.text)
			}
			if changed := !bytes.Equal(before, sess.Store.Snapshot()); changed != c.applied {
				t.Errorf("store changed: %v; want %v", changed, c.applied)
			}
			if c.kind != faults.Offline {
				return
			}
			// The lamp stays offline, whatever the next draw; a listing,
			// which names no lamp, has none to take offline and answers.
			res, _ = sess.Call(t.Context(), "tiny_query", json.RawMessage(`{"action":"get_lamp","lamp_id":"LP01"}`))
			if !res.IsError || res.Fault != faults.Offline {
				t.Errorf("LP01 after it went offline: %v %q %q; want the offline error", res.IsError, res.Fault, res.Text)
			}
			res, _ = sess.Call(t.Context(), "tiny_query", json.RawMessage(`{"action":"list_lamps"}`))
			if res.IsError || res.Fault != "" {
				t.Errorf("a listing, which names no lamp: %v %q %q; want it answered", res.IsError, res.Fault, res.Text)
			}
		})
	}
}

// TestNoFaultsAtRateZero: a setting of rate 0 serves exactly what no
// setting serves.
func TestNoFaultsAtRateZero(t *testing.T) {
	sched := &faults.Schedule{Setting: faults.Setting{Name: "none"}, Seed: 1, Scenario: "tiny-001", Repetition: 1}
	var replies []string
	for _, opts := range [][]serve.Option{nil, {serve.WithFaults(sched)}} {
		sess, err := serve.Open(t.Context(), tiny.Domain, servetest.Level(t, tiny.Domain, level.L1), opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		var b strings.Builder
		for _, args := range []string{`{"action":"list_lamps"}`, `{"action":"set_lamp","lamp_id":"LP01","level":3}`, `{"action":"get_lamp","lamp_id":"LP01"}`} {
			res, err := sess.Call(t.Context(), "tiny", json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(res.Text + "\n")
		}
		replies = append(replies, b.String()+string(sess.Store.Snapshot()))
	}
	if replies[0] != replies[1] {
		t.Errorf("with a rate-0 setting:\n%s\nwithout:\n%s", replies[1], replies[0])
	}
}

// TestFaultsServedOverHTTP: a client over streamable HTTP meets the
// schedule's faults as an in-process session does, and each observed
// call names its fault, as a record of an agent command keeps it.
func TestFaultsServedOverHTTP(t *testing.T) {
	setting := faults.Setting{Name: "flaky", Rate: 0.3, Kinds: []faults.Kind{faults.Transient, faults.Timeout}}
	sched := scheduleWith(t, setting, "set_lamp", 3, faults.Transient)
	var mu sync.Mutex
	var observed []serve.Observed
	h, err := serve.NewHandler(serve.DomainFactory(tiny.Domain, servetest.Level(t, tiny.Domain, level.L4), serve.WithFaults(sched)),
		serve.Options{OnCall: func(o serve.Observed) { mu.Lock(); observed = append(observed, o); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close(context.Background()) }()
	c := session(t, srv.URL, nil)
	for k := 1; k <= 6; k++ {
		text, isErr := call(t, c, "set_lamp", `{"lamp_id":"LP01","level":`+string(rune('0'+k))+`}`)
		if k == 3 && (!isErr || text != faults.TransientText) {
			t.Errorf("third set_lamp over HTTP: %v %q; want the transient error", isErr, text)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(observed) != 6 {
		t.Fatalf("%d calls observed; want 6", len(observed))
	}
	for k, o := range observed {
		if want := sched.Draw("set_lamp", k+1); o.Fault != want {
			t.Errorf("observed call %d: fault %q; want the schedule's %q", k+1, o.Fault, want)
		}
	}
}

// TestFaultedServerIsTheLevelsServer: a level as written under faults is
// served by a server built apart from the generated one (its tools added
// once, with injected handlers); it announces itself and lists its tools
// byte for byte as the generated server does, at every level.
func TestFaultedServerIsTheLevelsServer(t *testing.T) {
	sched := &faults.Schedule{Setting: faults.Setting{Name: "never", Rate: 1e-12}, Seed: 1, Scenario: "tiny-001", Repetition: 1}
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	for _, lv := range level.Levels {
		var replies [2]string
		for i, opts := range [][]serve.Option{nil, {serve.WithFaults(sched)}} {
			srv, _, err := serve.NewServer(tiny.Domain, servetest.Level(t, tiny.Domain, lv), opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, req := range requests {
				b, err := json.Marshal(srv.HandleMessage(t.Context(), json.RawMessage(req)))
				if err != nil {
					t.Fatal(err)
				}
				replies[i] += string(b) + "\n"
			}
		}
		if replies[0] != replies[1] {
			t.Errorf("%s: the generated server:\n%s\nunder faults:\n%s", lv, replies[0], replies[1])
		}
	}
}
