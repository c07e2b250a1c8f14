package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
	"github.com/mcpgranite/granite/internal/speclang"
)

// hostile is an agent that sends calls with huge arguments, each refused,
// before the right call and answer of tiny-002: the attack that once made
// an 800 MB journal line.
type hostile struct {
	calls, size int
	// peak, when set, receives the most live heap seen after a call (what
	// the last collection found reachable) and the most heap in objects,
	// garbage not yet swept included.
	peak *[2]uint64
}

// hostileArgs is a set_lamp call whose lamp_id is size bytes of x: no
// lamp has it, so the server refuses it and the store does not change.
func hostileArgs(size, i int) json.RawMessage {
	id := strings.Repeat("x", size)
	return json.RawMessage(`{"lamp_id":"` + id[:size-8] + string(rune('a'+i%26)) + `","on":true,"level":40}`)
}

func (h hostile) Run(ctx context.Context, tr *agent.Trial) {
	tr.Ask(0)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	for i := range h.calls {
		tr.CallLogged(ctx, i+1, "set_lamp", hostileArgs(h.size, i))
		if h.peak != nil {
			metrics.Read(sample)
			for k := range h.peak {
				h.peak[k] = max(h.peak[k], sample[k].Value.Uint64())
			}
		}
	}
	tr.CallLogged(ctx, h.calls+1, "set_lamp", json.RawMessage(`{"lamp_id":"LP02","on":true,"level":40}`))
	tr.Answer("Done: LP02 is on at 40 percent.", h.calls+2)
}

// hostileTrial plays a on tiny-002 at L4 and journals its record in dir,
// returning the record as the trial left it and the journal's line.
func hostileTrial(tb testing.TB, a agent.Agent, dir string) (*results.Record, []byte) {
	tb.Helper()
	spec, lookup := tinySpec(tb)
	cfg := testConfig("hostile", "http://127.0.0.1:1", agent.Oracle)
	cfg.Scenarios, cfg.Granularities = []string{"tiny-002"}, []level.Level{level.L4}
	grid, err := Plan(context.Background(), cfg, spec, lookup)
	if err != nil || len(grid) != 1 {
		tb.Fatalf("plan: %d trials, %v", len(grid), err)
	}
	r := &runner{cfg: cfg}
	rec, err := r.trial(context.Background(), grid[0], a, "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, results.TrialsFile)
	os.Remove(path)
	j, _, err := results.OpenJournal(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := j.Append(rec); err != nil {
		tb.Fatal(err)
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
	line, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return rec, line
}

// TestHostileArgumentsKeepTheRecordSmall: calls with 1 MB arguments make
// a journal line of about 18 KiB a call, not 2 MB (40 calls here, to keep
// the test quick; BenchmarkHostileTrial plays 400), and the verdict read
// back, and scored again from what the journal kept, is the one the trial
// got.
func TestHostileArgumentsKeepTheRecordSmall(t *testing.T) {
	const calls, size = 40, 1 << 20
	rec, line := hostileTrial(t, hostile{calls: calls, size: size}, t.TempDir())
	if max := calls*(2*results.CutBytes+2*results.PreviewBytes) + 64<<10; len(line) > max {
		t.Errorf("journal line of %d bytes, want at most %d", len(line), max)
	}
	// The trial itself held only cut copies: memory, not just the line.
	for i, m := range rec.Messages {
		for _, tc := range m.ToolCalls {
			if len(tc.Arguments) > results.MaxArgumentsBytes {
				t.Fatalf("message %d holds %d bytes of arguments during the trial", i, len(tc.Arguments))
			}
		}
		if m.Role == "tool" && len(m.Content) > results.CutBytes {
			t.Fatalf("message %d holds a result of %d bytes during the trial", i, len(m.Content))
		}
	}
	var back results.Record
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Calls) != calls+1 || back.Metrics == nil || back.Metrics.TC != 1 || back.Metrics.F1 != rec.Metrics.F1 {
		t.Fatalf("%d calls, metrics %+v; want %d calls and TC 1", len(back.Calls), back.Metrics, calls+1)
	}
	for i, c := range back.Calls[:calls] {
		if c.ArgumentsBytes != len(hostileArgs(size, i)) || len(c.Arguments) > results.MaxArgumentsBytes || !c.IsError || !json.Valid(c.Arguments) {
			t.Fatalf("call %d: arguments_bytes %d, %d bytes kept, is_error %v, valid JSON %v", i+1, c.ArgumentsBytes, len(c.Arguments), c.IsError, json.Valid(c.Arguments))
		}
	}
	if last := back.Calls[calls]; last.ArgumentsBytes != 0 || last.IsError {
		t.Errorf("the right call: %+v, want it kept whole and answered", last)
	}
	// Scored again from the journal's record, on the store the trial
	// left (the refused calls changed nothing; the right one set LP02).
	g := hostileGold(t)
	final := hostileFinal(t)
	m, err := score.Score(&back, g, final)
	if err != nil {
		t.Fatal(err)
	}
	if m.TC != back.Metrics.TC || m.F1 != back.Metrics.F1 || m.ArgAcc != back.Metrics.ArgAcc || m.ActionArgAcc != back.Metrics.ActionArgAcc || m.Redundant != back.Metrics.Redundant {
		t.Errorf("scored again: %+v; the trial's: %+v", m, back.Metrics)
	}
}

// hostileGold is tiny-002's gold at L4, with its right stores.
func hostileGold(t *testing.T) *score.Gold {
	t.Helper()
	spec, lookup := tinySpec(t)
	d := spec.Domain("tiny")
	dom, msg := gold.Generated(d, lookup)
	if msg != "" {
		t.Fatal(msg)
	}
	var s *speclang.Scenario
	for _, sc := range d.Scenarios {
		if sc.ID == "tiny-002" {
			s = sc
		}
	}
	return score.NewGold(d, s, level.L4, dom, &score.Rights{Finals: [][]byte{hostileFinal(t)}})
}

// hostileFinal is the store the oracle leaves on tiny-002.
func hostileFinal(t *testing.T) []byte {
	t.Helper()
	spec, lookup := tinySpec(t)
	cfg := testConfig("final", "http://127.0.0.1:1", agent.Oracle)
	cfg.Scenarios, cfg.Granularities = []string{"tiny-002"}, []level.Level{level.L4}
	grid, err := Plan(context.Background(), cfg, spec, lookup)
	if err != nil {
		t.Fatal(err)
	}
	sess, valid, err := grid[0].open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	workerOf(t, &agent.Env{Config: cfg}, agent.Oracle).Run(context.Background(), grid[0].agentTrial(sess, valid, &results.Record{}))
	return sess.Store.Snapshot()
}

// TestCutKeepsTheVerdict: calls whose arguments exceed the cut score the
// same as sent and as the journal keeps them: a value too long to keep is
// never right, other values still count, and repeats stay repeats.
func TestCutKeepsTheVerdict(t *testing.T) {
	big := strings.Repeat("y", 3*results.CutBytes)
	pad := func(s string) string { return `"` + s + `"` }
	cases := []struct {
		name  string
		calls []string // set_lamp arguments
	}{
		{"a long extra argument beside right ones", []string{`{"lamp_id":"LP02","on":true,"level":40,"note":` + pad(big) + `}`}},
		{"a long id, then the right call", []string{`{"lamp_id":` + pad(big) + `,"on":true,"level":40}`, `{"lamp_id":"LP02","on":true,"level":40}`}},
		{"the same long call twice", []string{`{"lamp_id":` + pad(big) + `}`, `{"lamp_id":` + pad(big) + `}`}},
		{"long calls alike but for their end", []string{`{"lamp_id":` + pad(big+"a") + `}`, `{"lamp_id":` + pad(big+"b") + `}`}},
		{"a long padded right id", []string{`{"lamp_id":` + pad(strings.Repeat(" ", 2*results.CutBytes)+"LP02") + `,"on":true,"level":40}`}},
		{"too many long values", []string{`{"a":` + pad(big) + `,"b":` + pad(big) + `,"c":` + pad(big) + `,"d":` + pad(big) + `,"e":` + pad(big) + `,"f":` + pad(big) + `,"g":` + pad(big) + `,"h":` + pad(big) + `,"i":` + pad(big) + `,"lamp_id":"LP02","on":true,"level":40}`}},
		{"a long array", []string{`{"lamp_id":"LP02","on":true,"level":40,"xs":[` + strings.Repeat("1,", 2*results.CutBytes) + `1]}`}},
	}
	g := hostileGold(t)
	final := hostileFinal(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &results.Record{StopReason: results.StopAnswer, FinalAnswer: "Done."}
			for i, args := range c.calls {
				if !json.Valid([]byte(args)) {
					t.Fatalf("call %d: test arguments are not JSON", i+1)
				}
				rec.Calls = append(rec.Calls, results.Call{Turn: i + 1, Tool: "set_lamp", Arguments: json.RawMessage(args), IsError: true, ErrorClass: results.ErrTool})
			}
			kept := rec.Bounded()
			if kept == rec {
				t.Fatal("nothing was cut: the case does not exceed the bound")
			}
			for i, call := range kept.Calls {
				want := len(c.calls[i])
				if want <= results.CutBytes {
					want = 0 // kept whole
				}
				if len(call.Arguments) > results.MaxArgumentsBytes || call.ArgumentsBytes != want || !json.Valid(call.Arguments) {
					t.Errorf("call %d kept %d bytes (arguments_bytes %d, valid %v)", i+1, len(call.Arguments), call.ArgumentsBytes, json.Valid(call.Arguments))
				}
			}
			sent, err := score.Score(rec, g, final)
			if err != nil {
				t.Fatal(err)
			}
			again, err := score.Score(kept, g, final)
			if err != nil {
				t.Fatal(err)
			}
			if sent.F1 != again.F1 || sent.ActionF1 != again.ActionF1 || sent.ArgAcc != again.ArgAcc || sent.ActionArgAcc != again.ActionArgAcc ||
				sent.Redundant != again.Redundant || sent.TC != again.TC {
				t.Errorf("as sent %+v\nas kept %+v", sent, again)
			}
		})
	}
}

// forever scripts a model that answers every request with calls of
// list_lamps, perReply at a time, and never answers.
func forever(perReply int, requests *atomic.Int32) func(openaitest.Request, int) openaitest.Step {
	return func(openaitest.Request, int) openaitest.Step {
		requests.Add(1)
		var calls []openaitest.Call
		for range perReply {
			calls = append(calls, openaitest.Call{Name: "list_lamps", Args: `{}`})
		}
		return openaitest.Step{Calls: calls}
	}
}

// TestCallCap: a model that would call tools forever stops at the call
// cap, max_calls or its default, with stop reason call_limit and an error
// that says how to raise it.
func TestCallCap(t *testing.T) {
	spec, lookup := tinySpec(t)
	cases := []struct {
		name     string
		maxCalls int
		perReply int
		want     int
	}{
		{"max_calls 7, one call per reply", 7, 1, 7},
		{"max_calls 7, three per reply", 7, 3, 7},
		{"the default", 0, 100, results.DefaultMaxCalls},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			f := openaitest.NewServer(t, []string{"m"}, forever(c.perReply, &requests))
			cfg := openaiConfig("cap", f.URL, "m")
			cfg.Scenarios, cfg.Granularities = []string{"tiny-002"}, []level.Level{level.L4}
			cfg.MaxAgentTurns, cfg.MaxCalls = 10*results.DefaultMaxCalls, c.maxCalls
			recs, err := runTrials(t, cfg, spec, lookup)
			if err != nil || len(recs) != 1 {
				t.Fatalf("%d records, %v", len(recs), err)
			}
			r := recs[0]
			if r.StopReason != results.StopCallLimit || len(r.Calls) != c.want || !strings.Contains(r.Error, "max_calls") || r.Metrics.TC != 0 {
				t.Errorf("stop %q, %d calls, error %q, tc %v; want %q after %d calls", r.StopReason, len(r.Calls), r.Error, r.Metrics.TC, results.StopCallLimit, c.want)
			}
			// The reply after the last allowed call may still answer; one
			// more that calls is the last request.
			want := (c.want + c.perReply - 1) / c.perReply
			if c.want%c.perReply == 0 {
				want++
			}
			if int(requests.Load()) != want {
				t.Errorf("%d requests, want %d: none after the reply that went past the cap", requests.Load(), want)
			}
		})
	}
}

// BenchmarkHostileTrial plays a trial whose agent sends 400 calls with
// 1 MB arguments, each refused, then the right call, and reports the most
// live heap during it (peak-live-heap-MB: what the record and the trial
// keep), the most heap in objects, garbage included (peak-heap-MB), and
// the journal line's size. Target: under 200 MB (it was 4.4 GB of RSS).
func BenchmarkHostileTrial(b *testing.B) {
	dir := b.TempDir()
	var peak [2]uint64
	var line []byte
	for b.Loop() {
		runtime.GC()
		peak = [2]uint64{}
		_, line = hostileTrial(b, hostile{calls: 400, size: 1 << 20, peak: &peak}, dir)
	}
	b.ReportMetric(float64(peak[0])/(1<<20), "peak-live-heap-MB")
	b.ReportMetric(float64(peak[1])/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(len(line))/(1<<20), "journal-line-MB")
	if !bytes.HasSuffix(line, []byte("\n")) {
		b.Fatal("the journal line is not whole")
	}
}

// TestHugeArgumentsGoBackCut: a model whose tool call carries a 200 KB
// argument gets the call back, in the next request, as the record keeps
// it: cut, so that a conversation of such calls does not grow granite's
// every request by their size.
func TestHugeArgumentsGoBackCut(t *testing.T) {
	spec, lookup := tinySpec(t)
	huge := string(hostileArgs(200<<10, 0))
	var olSent, oaSent atomic.Int64
	size := func(msgs []json.RawMessage) int64 {
		n := 0
		for _, m := range msgs {
			n += len(m)
		}
		return int64(n)
	}
	ol := ollamatest.NewServer(t, []string{"m"}, func(r ollamatest.Request, _ int) ollamatest.Step {
		if len(r.Contents("tool")) == 0 {
			return ollamatest.Step{Calls: []ollamatest.Call{{Name: "set_lamp", Args: huge}}}
		}
		olSent.Store(size(r.Messages))
		return ollamatest.Step{Content: "Done."}
	})
	oa := openaitest.NewServer(t, []string{"m"}, func(r openaitest.Request, _ int) openaitest.Step {
		if len(r.ToolResults()) == 0 {
			return openaitest.Step{Calls: []openaitest.Call{{Name: "set_lamp", Args: huge}}}
		}
		oaSent.Store(size(r.Messages))
		return openaitest.Step{Content: "Done."}
	})
	for _, cfg := range []*results.Config{testConfig("huge", ol.URL, "m"), openaiConfig("huge", oa.URL, "m")} {
		cfg.Scenarios, cfg.Granularities = []string{"tiny-002"}, []level.Level{level.L4}
		recs, err := runTrials(t, cfg, spec, lookup)
		if err != nil || len(recs) != 1 || len(recs[0].Calls) != 1 {
			t.Fatalf("%d records, %v; want one with the huge call", len(recs), err)
		}
	}
	for name, n := range map[string]int64{"ollama": olSent.Load(), "openai": oaSent.Load()} {
		if n == 0 || n > 4*results.CutBytes {
			t.Errorf("%s: the second request's messages are %d bytes; want the huge call sent back cut, within %d", name, n, 4*results.CutBytes)
		}
	}
}
