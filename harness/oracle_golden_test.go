package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
)

var update = flag.Bool("update", false, "rewrite testdata/oracle.golden from this run")

// goldenFile holds a digest of what the oracle did and how it scored, per
// domain and interface, over every scenario at every level and every
// interface of the standard catalogue.
const goldenFile = "testdata/oracle.golden"

// TestOracleIsUnchanged: the oracle's calls, the replies, the messages,
// the verdicts (less the wall time) and what run.json says each interface showed are
// byte-identical to the golden digests. A refactor of the path from
// config to server to record to score must leave them as they were; a
// change meant to alter them rewrites the file with -update and says why
// in its commit.
func TestOracleIsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole grid at every interface")
	}
	spec := loadSpec(t)
	cfg := testConfig("golden", "http://127.0.0.1:1", agent.Oracle)
	cfg.Interfaces = catalogueSpecs(t, spec)
	recs, man, _ := runIsolated(t, cfg, spec, "")
	// The oracle's answers hold what the reference's completion asks, on
	// every scenario at every level and interface (its other metrics vary
	// with the gold a composition derives, which the digests hold).
	for _, r := range recs {
		if p := r.Metrics.Paper; p == nil || p.TaskCompletion != 1 {
			t.Errorf("%s: metrics.paper %+v; want the oracle's answer to contain every derived string", r.TrialID, p)
		}
	}
	got := oracleDigests(t, recs, man)
	if *update {
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if got == string(want) {
		return
	}
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			t.Errorf("changed or new: %s", l)
		}
	}
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			t.Errorf("changed or gone: %s", l)
		}
	}
}

// oracleDigests is one line per domain and interface: how many trials,
// and a sha256 over each trial's id, the fields that say what was played,
// the messages, calls, answer and verdict (no times), in trial id order,
// and what run.json says of the interface.
func oracleDigests(t *testing.T, recs []results.Record, man *results.Manifest) string {
	t.Helper()
	type played struct {
		TrialID, Domain, Level, Interface, Scenario string
		Messages                                    []results.Message
		Calls                                       [][]any
		Answer, Stop, ErrorClass                    string
		Metrics                                     *results.Metrics
	}
	by := map[string][]played{}
	for _, r := range recs {
		var calls [][]any
		for _, c := range r.Calls {
			calls = append(calls, []any{c.Turn, c.Tool, c.Arguments, c.Result, c.IsError, c.ErrorClass})
		}
		m := *r.Metrics
		m.WallS = 0 // a time
		key := results.InterfaceKey(r.Domain, r.InterfaceName())
		by[key] = append(by[key], played{r.TrialID, r.Domain, string(r.Level), r.Interface, r.Scenario,
			r.Messages, calls, r.FinalAnswer, string(r.StopReason), string(r.ErrorClass), &m})
	}
	var buf bytes.Buffer
	for _, key := range slices.Sorted(maps.Keys(by)) {
		ps := by[key]
		slices.SortFunc(ps, func(a, b played) int { return strings.Compare(a.TrialID, b.TrialID) })
		h := sha256.New()
		for _, p := range ps {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(append(b, '\n'))
		}
		info, err := json.Marshal(man.Interfaces[key])
		if err != nil {
			t.Fatal(err)
		}
		h.Write(info)
		fmt.Fprintf(&buf, "%s %d %x\n", key, len(ps), h.Sum(nil)[:12])
	}
	return buf.String()
}
