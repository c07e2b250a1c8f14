package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// recordedLog records a scenario's gold calls at L3, each in a session of
// its own, to a log, and returns the recorder (still recording) and the
// log's path.
func recordedLog(t testing.TB) (*Recorder, string) {
	t.Helper()
	spec := loadSpec(t)
	s := writingScenario(t, spec, level.L3)
	r, file, url := recordingServer(t, spec, s, nil)
	for _, g := range s.Gold[level.L3] {
		recordedCall(t, url, g.Tool, g.JSON())
	}
	return r, file
}

// recordingServer serves a scenario at L3 for a client to record, under
// the fault schedule sched (nil: none), logging to a file of the test's;
// it returns the recorder, the log's path and the server's URL.
func recordingServer(t testing.TB, spec *speclang.Spec, s *speclang.Scenario, sched *faults.Schedule) (*Recorder, string, string) {
	t.Helper()
	r, err := NewRecorder(spec, gen.Lookup, s.ID, level.L3, sched)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "session.jsonl")
	if err := r.RecordTo(file); err != nil {
		t.Fatal(err)
	}
	h, err := r.Handler(serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return r, file, srv.URL
}

// writingScenario is the first scenario whose verdict needs the store and
// that makes more than one call at the level.
func writingScenario(t testing.TB, spec *speclang.Spec, level level.Level) *speclang.Scenario {
	t.Helper()
	for _, d := range spec.Domains {
		for _, s := range d.Scenarios {
			if len(s.State) > 0 && len(s.Gold[level]) >= 2 {
				return s
			}
		}
	}
	t.Fatal("no scenario with state conditions and two gold calls")
	return nil
}

// recordedCall makes one call in a session of its own.
func recordedCall(t testing.TB, url, tool string, args []byte) {
	t.Helper()
	ctx := context.Background()
	c, _, err := toolsrc.Connect(ctx, "", url, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, json.RawMessage(args)
	if _, err := c.CallTool(ctx, req); err != nil {
		t.Fatal(err)
	}
}

// TestRecordingLog: the log a recorder appends reads back, before and
// after its end, as the recording the recorder holds in memory, and as a
// whole-file recording of it does.
func TestRecordingLog(t *testing.T) {
	r, file := recordedLog(t)
	want := r.Recording()
	same := func(name string, got *recorded.Session) {
		t.Helper()
		if diff := cmp.Diff(want.Calls, got.Calls, compactJSON); diff != "" {
			t.Errorf("%s: calls differ from the recorder's (-want +got):\n%s", name, diff)
		}
		if string(got.FinalStore) != string(want.FinalStore) || got.Sessions != want.Sessions || got.Scenario != want.Scenario || got.StartedAt != want.StartedAt {
			t.Errorf("%s: store, sessions (%d), scenario or start differ from the recorder's", name, got.Sessions)
		}
	}
	// As a kill leaves it: no end line.
	killed, err := recorded.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	same("killed", killed)
	if len(killed.Notes) != 1 || !strings.Contains(killed.Notes[0], "no end") || killed.EndedAt == "" {
		t.Errorf("a log without its end: notes %q, ended %q; want one saying so, and the last call's end", killed.Notes, killed.EndedAt)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ended, err := recorded.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	same("ended", ended)
	if len(ended.Notes) != 0 || ended.EndedAt < killed.EndedAt {
		t.Errorf("an ended log: notes %q, ended %s (last call %s)", ended.Notes, ended.EndedAt, killed.EndedAt)
	}
	whole := filepath.Join(t.TempDir(), "whole.json")
	if err := want.WriteFile(whole); err != nil {
		t.Fatal(err)
	}
	old, err := recorded.Read(whole)
	if err != nil {
		t.Fatal(err)
	}
	same("whole file", old)
}

// compactJSON compares JSON by its compact bytes: a whole-file recording
// keeps arguments indented.
var compactJSON = cmp.Transformer("compact", func(m json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, m) != nil {
		return string(m)
	}
	return b.String()
})

// TestReadRecordingDamage: what a kill can leave (a last line cut short,
// no end) reads with a note; damage a kill cannot leave is an error with
// its line.
func TestReadRecordingDamage(t *testing.T) {
	r, file := recordedLog(t)
	want := r.Recording()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cases := []struct {
		name, text string
		wantCalls  int
		wantNote   string
		wantErr    string
	}{
		{"a last line cut short", string(data) + `{"call":{"turn":3,"tool":"x","argu`, len(want.Calls), "the last line is cut short", ""},
		{"the last call cut short", strings.Join(lines[:len(lines)-2], "") + strings.TrimSuffix(lines[len(lines)-2], "\n")[:20], len(want.Calls) - 1, "the last line is cut short", ""},
		{"only the header", lines[0], 0, "no end", ""},
		{"a broken line before others", lines[0] + "{\"call\":\n" + strings.Join(lines[1:], ""), 0, "", "session.jsonl:2: not a line of a recording log"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := recorded.Read(path)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Calls) != c.wantCalls || !strings.Contains(strings.Join(got.Notes, "\n"), c.wantNote) {
				t.Errorf("%d calls, notes %q; want %d calls and a note %q", len(got.Calls), got.Notes, c.wantCalls, c.wantNote)
			}
			if c.wantCalls == 0 && len(got.FinalStore) == 0 {
				t.Error("no store: the header's seed store should stand")
			}
		})
	}
}

// BenchmarkRecordedCall is one tools/call through granite serve
// --scenario's handler over HTTP, kept in memory only and appended to a
// synced log (--record), to show what the fsync per call costs. The call
// is the scenario's first, a read: the store stays the size it is, and
// is still snapshotted each call to see whether it changed.
func BenchmarkRecordedCall(b *testing.B) {
	spec := loadSpec(b)
	s := writingScenario(b, spec, level.L3)
	g := s.Gold[level.L3][0]
	for _, logged := range []bool{false, true} {
		name := "memory"
		if logged {
			name = "log_synced"
		}
		b.Run(name, func(b *testing.B) {
			r, err := NewRecorder(spec, gen.Lookup, s.ID, level.L3, nil)
			if err != nil {
				b.Fatal(err)
			}
			if logged {
				if err := r.RecordTo(filepath.Join(b.TempDir(), "session.jsonl")); err != nil {
					b.Fatal(err)
				}
				defer r.Close()
			}
			h, err := r.Handler(serve.Options{})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			ctx := context.Background()
			c, _, err := toolsrc.Connect(ctx, "", srv.URL, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = g.Tool, json.RawMessage(g.JSON())
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
