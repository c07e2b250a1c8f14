package regroup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// serveFaulted serves iface at lv over stdio in front of a fresh fake
// source, as granite serve --mcp-cmd --faults does, injecting sched's
// faults.
func serveFaulted(t *testing.T, iface *regroup.Grouping, lv level.Level, sched *faults.Schedule) *lines {
	t.Helper()
	p, err := iface.Proxy("fake", lv)
	if err != nil {
		t.Fatal(err)
	}
	p.Source = serve.Source{Cmd: fakeCmd(t, "tools")}
	p.Faults, p.SourceTools = sched, iface.Source
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := startLines(t, func(in io.Reader, out io.Writer) error { return p.ServeStdio(ctx, in, out, io.Discard) })
	// The input's end ends the loop, and with it the source's process.
	t.Cleanup(func() {
		l.in.Close()
		<-l.done
	})
	return l
}

// TestRelayFaultsAlikeAtEveryLevel: a stdio relay to a source command
// under a fault setting faults the same calls the same way at L4, L3, L2
// and L1: a call draws by the source tool it reaches and its index among
// the calls to that tool, never by the level's tool it was made through.
// A transient error never reaches the source (its echo is missing); a
// timeout does.
func TestRelayFaultsAlikeAtEveryLevel(t *testing.T) {
	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	sched := &faults.Schedule{Setting: faults.Setting{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient, faults.Timeout}}, Seed: 7, Scenario: "fake-001", Repetition: 1}
	// Calls to two source tools, interleaved, each with an argument of
	// its own so that an answer shows which call reached the source.
	var calls [][2]string
	for i := range 12 {
		tool := []string{"echo", "progress"}[i%2]
		calls = append(calls, [2]string{tool, fmt.Sprintf(`{"v":%d}`, i)})
	}
	seen := map[level.Level][]string{}
	for _, lv := range level.Levels {
		l := serveFaulted(t, iface, lv, sched)
		for i, c := range calls {
			name, args, err := iface.MapCall(lv, c[0], json.RawMessage(c[1]))
			if err != nil {
				t.Fatal(err)
			}
			got := l.call(fmt.Sprint(i+1), name, string(args))
			outcome := "answered"
			switch {
			case strings.Contains(got, faults.TransientText):
				outcome = "transient"
			case strings.Contains(got, faults.TimeoutText):
				outcome = "timeout"
			case !strings.Contains(got, `\"v\":`+fmt.Sprint(i)) && !strings.Contains(got, "done"):
				t.Errorf("%s: call %d (%s %s) answered %s; want the source's answer", lv, i, name, args, got)
			}
			seen[lv] = append(seen[lv], outcome)
		}
	}
	for _, lv := range level.Levels[1:] {
		if !slices.Equal(seen[lv], seen[level.L4]) {
			t.Errorf("%s met %v; L4 met %v: want the same faults", lv, seen[lv], seen[level.L4])
		}
	}
	want := make([]string, len(calls))
	counts := map[string]int{}
	for i, c := range calls {
		counts[c[0]]++
		want[i] = "answered"
		if k := sched.Draw(c[0], counts[c[0]]); k != "" {
			want[i] = string(k)
		}
	}
	if !slices.Equal(seen[level.L4], want) {
		t.Errorf("L4 met %v; the schedule draws %v", seen[level.L4], want)
	}
	if !slices.Contains(want, "transient") || !slices.Contains(want, "timeout") {
		t.Errorf("the schedule draws %v: want both kinds among the calls, to test them", want)
	}
}
