package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// retryable is a flaky setting of the two kinds that apply nothing, at a
// rate where most trials meet several.
var retryable = faults.Setting{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient, faults.RateLimit}}

// TestFaultOracleRetriesOnEveryInterface: under transient errors and rate
// limits at a rate of one half, the oracle, which retries them, completes
// every scenario at every level and every interface of the standard
// catalogue. The setting of no faults beside it plays today's trials
// under today's ids, records naming no setting; the flaky trials name
// theirs, and every failed call names its fault and is made again.
func TestFaultOracleRetriesOnEveryInterface(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole grid at every interface, twice")
	}
	spec := loadSpec(t)
	cfg := testConfig("faults", "http://127.0.0.1:1", agent.Oracle)
	cfg.Interfaces = catalogueSpecs(t, spec)
	cfg.Faults = []faults.Setting{{Name: "none"}, retryable}
	out := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: gen.Lookup}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	checkRecordSchema(t, filepath.Join(out, results.TrialsFile))
	type tally struct{ trials, tc, calls, injected int }
	byLevel := map[string]*tally{}
	flaky := 0
	for _, r := range recs {
		base := results.TrialID(r.Model, r.Scenario, r.InterfaceName(), r.Repetition)
		if r.Faults == "" {
			if r.TrialID != base || slices.ContainsFunc(r.Calls, func(c results.Call) bool { return c.Fault != "" }) {
				t.Errorf("%s: a trial of no faults with id or faults of another", r.TrialID)
			}
			continue
		}
		flaky++
		if r.Faults != "flaky" || r.TrialID != fmt.Sprintf("%s/%s/%s/flaky/r%d", r.Model, r.Scenario, r.InterfaceName(), r.Repetition) {
			t.Errorf("%s: faults %q; want the flaky setting named in the record and the id", r.TrialID, r.Faults)
		}
		if r.Metrics.TC != 1 {
			t.Errorf("%s: TC %v; want 1: the oracle retries what applied nothing (%s)", r.TrialID, r.Metrics.TC, strings.Join(r.Metrics.Why, "; "))
		}
		key := string(r.Level)
		if byLevel[key] == nil {
			byLevel[key] = &tally{}
		}
		lt := byLevel[key]
		lt.trials++
		lt.tc += int(r.Metrics.TC)
		lt.calls += len(r.Calls)
		faulted := 0
		for i, c := range r.Calls {
			if c.Fault == "" {
				continue
			}
			faulted++
			lt.injected++
			if !c.IsError || !faults.Retryable(c.Result) {
				t.Errorf("%s: call %d: fault %s, error %v, %q; want a retryable tool error", r.TrialID, i+1, c.Fault, c.IsError, c.Result)
			}
			if i+1 == len(r.Calls) || r.Calls[i+1].Tool != c.Tool || string(r.Calls[i+1].Arguments) != string(c.Arguments) {
				t.Errorf("%s: call %d failed with %s and was not made again", r.TrialID, i+1, c.Fault)
			}
		}
		if m := r.Metrics; m.FaultsInjected != faulted || m.FaultsRecovered != faulted {
			t.Errorf("%s: %d faults injected, %d recovered; want %d and all of them, each retried", r.TrialID, m.FaultsInjected, m.FaultsRecovered, faulted)
		}
	}
	if flaky*2 != len(recs) {
		t.Fatalf("%d flaky trials of %d; want half", flaky, len(recs))
	}
	var levels []string
	for lv := range byLevel {
		levels = append(levels, lv)
	}
	sort.Strings(levels)
	for _, lv := range levels {
		x := byLevel[lv]
		if x.injected == 0 {
			t.Errorf("%s: no fault injected in %d calls at a rate of one half", lv, x.calls)
		}
		t.Logf("%s flaky: %d trials, TC %.3f, %d calls, %d faults injected", lv, x.trials, float64(x.tc)/float64(x.trials), x.calls, x.injected)
	}
}

// TestFaultTrialsArePlanned: each fault setting multiplies the grid; a
// setting of rate 0 keeps today's ids and indexes, whatever its name, and
// the others name theirs.
func TestFaultTrialsArePlanned(t *testing.T) {
	spec := loadSpec(t)
	cfg := testConfig("plan", "http://127.0.0.1:1", agent.Oracle)
	cfg.Scenarios = []string{spec.Domains[0].Scenarios[0].ID}
	cfg.Repetitions = 2
	plain, err := Plan(t.Context(), cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = []faults.Setting{{Name: "calm"}}
	calm, err := Plan(t.Context(), cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(calm) != len(plain) {
		t.Fatalf("%d trials under a setting of rate 0; want %d, as without faults", len(calm), len(plain))
	}
	for i := range plain {
		if calm[i].ID != plain[i].ID || calm[i].Index != plain[i].Index {
			t.Errorf("trial %d: %s; want %s", i, calm[i].ID, plain[i].ID)
		}
	}
	cfg.Faults = []faults.Setting{{Name: "none"}, retryable, {Name: "offline", Rate: 0.1, Kinds: []faults.Kind{faults.Offline}}}
	grid, err := Plan(t.Context(), cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(grid) != 3*len(plain) {
		t.Fatalf("%d trials under 3 settings; want %d", len(grid), 3*len(plain))
	}
	ids := map[string]bool{}
	for _, tr := range grid {
		if ids[tr.ID] {
			t.Errorf("trial id %s twice", tr.ID)
		}
		ids[tr.ID] = true
		if tr.Faults.None() != !strings.Contains(tr.ID, "/"+tr.Faults.Name+"/") {
			t.Errorf("%s under %s: want the setting named in the id unless it injects nothing", tr.ID, tr.Faults.Name)
		}
	}
	for _, p := range plain {
		if !ids[p.ID] {
			t.Errorf("%s: gone from the plan with faults beside no faults", p.ID)
		}
	}
}

// TestFaultConfigErrors: what a config may not say of faults, each at its
// place.
func TestFaultConfigErrors(t *testing.T) {
	spec := loadSpec(t)
	for _, c := range []struct{ yaml, want string }{
		{"name: x\nmodels: [a]\nfaults:\n  - {name: none, rate: 0}\n  - {name: flaky, rate: 1.5}\n",
			`x.yaml:5:25: $.faults[1].rate: found 1.5; expected a number from 0 to 1`},
		{"name: x\nmodels: [a]\nfaults: [{name: f, rate: -0.1}]\n",
			`x.yaml:3:26: $.faults[0].rate: found -0.1; expected a number from 0 to 1`},
		{"name: x\nmodels: [a]\nfaults: [{name: f, rate: 0.2, kinds: [transient, cosmic_ray]}]\n",
			`x.yaml:3:50: $.faults[0].kinds[1]: found "cosmic_ray"; expected one of transient, rate_limit, timeout, partial, offline`},
		{"name: x\nmodels: [a]\nfaults: [{name: f, rate: 0.2}, {name: f, rate: 0.3}]\n",
			`x.yaml:3:39: $.faults[1].name: found fault setting name "f" again`},
		{"name: x\nmodels: [a]\nfaults: [{name: a, rate: 0}, {name: b, rate: 0}]\n",
			`x.yaml:3:46: $.faults[1].rate: found a second setting of rate 0 ("b", after "a")`},
		{"name: x\nmodels: [a]\nfaults: [{name: Flaky/1, rate: 0.2}]\n",
			`x.yaml:3:17: $.faults[0].name: found "Flaky/1"; expected a string matching`},
		{"name: x\nmodels: [a]\nartifacts: a.jsonl\nfaults: [{name: f, rate: 0.2}]\n",
			`x.yaml:4:9: $.faults: found faults beside artifacts played as published; expected granularities, interfaces, artifact_cmd or artifact_url beside them`},
	} {
		got, refused := refusal(t, spec, c.yaml)
		if !refused {
			t.Errorf("%q: loaded", c.yaml)
			continue
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, c.want)
		}
	}
	// Artifacts played on a regrouped server take faults at its relay.
	for _, beside := range []string{"granularities: [L4, L1]", "interfaces: [L2-terse]", "artifact_cmd: srv --stdio", "artifact_url: http://127.0.0.1:1/mcp"} {
		yaml := "name: x\nmodels: [a]\nartifacts: a.jsonl\n" + beside + "\nfaults: [{name: f, rate: 0.2}]\n"
		if got, refused := refusal(t, spec, yaml); refused {
			t.Errorf("faults beside artifacts with %s: %s; want them loaded", beside, got)
		}
	}
	path := filepath.Join(t.TempDir(), "x.yaml")
	yaml := "name: x\nmodels: [builtin:oracle]\nfaults:\n  - {name: none, rate: 0}\n  - {name: flaky, rate: 0.2, kinds: [transient, rate_limit, timeout, partial]}\n  - {name: offline, rate: 0.1, kinds: [offline]}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Faults) != 3 || c.Faults[1].Rate != 0.2 || len(c.Faults[1].Kinds) != 4 || c.Faults[2].Kinds[0] != faults.Offline {
		t.Errorf("faults %+v; want the three settings as written", c.Faults)
	}
}

// scriptedSubject plays the gold calls and answers with the oracle's
// answer; retry makes each call that failed once more, as it was, as an
// agent that does not read back after a timeout would.
type scriptedSubject struct{ retry bool }

func (s scriptedSubject) Run(ctx context.Context, tr *agent.Trial) {
	made := 0
	tr.Ask(0)
	for _, g := range tr.Gold[0] {
		made++
		if c := tr.CallLogged(ctx, made, g.Name, g.Arguments); c.IsError && s.retry {
			made++
			tr.CallLogged(ctx, made, g.Name, g.Arguments)
		}
	}
	tr.Answer(tr.OracleAnswer(), made+1)
}

// scenarioWith finds a scenario whose L4 gold writes, every write
// idempotent (creates: false) or at least one write not (creates: true).
func scenarioWith(t *testing.T, creates bool) string {
	t.Helper()
	spec := loadSpec(t)
	for _, d := range spec.Domains {
		dom, _ := gen.Lookup(d.Name)
		for _, s := range d.Scenarios {
			writes, others := 0, 0
			for _, c := range s.Gold[level.L4] {
				op := dom.Operation(c.Op)
				switch {
				case op == nil || op.Kind == opkind.Workflow || op.Kind == opkind.Preset:
					others = 1000 // composites run other operations
				case op.ReadOnly:
				case op.Idempotent:
					writes++
				default:
					writes++
					others++
				}
			}
			if writes > 0 && others < 1000 && (others > 0) == creates {
				return s.ID
			}
		}
	}
	t.Fatalf("no scenario with creates %v", creates)
	return ""
}

// TestFaultTimeoutRetries: every call times out, applied. A subject that
// does not retry completes the task, and recovers every write; one that
// makes each call again completes a task of idempotent writes (the retry
// changes nothing more) and fails one with a create (the retry is a
// second row, a change the task did not ask for), recovering no create.
// Reads, answered with an error each time, are never recovered.
func TestFaultTimeoutRetries(t *testing.T) {
	spec := loadSpec(t)
	timeouts := faults.Setting{Name: "timeouts", Rate: 1, Kinds: []faults.Kind{faults.Timeout}}
	for _, c := range []struct {
		creates, retry bool
		tc             float64
	}{{false, false, 1}, {false, true, 1}, {true, false, 1}, {true, true, 0}} {
		id := scenarioWith(t, c.creates)
		cfg := testConfig("timeouts", "http://127.0.0.1:1", agent.Oracle)
		cfg.Scenarios, cfg.Granularities, cfg.Faults = []string{id}, []level.Level{level.L4}, []faults.Setting{timeouts}
		grid, err := Plan(t.Context(), cfg, spec, gen.Lookup)
		if err != nil || len(grid) != 1 {
			t.Fatalf("plan: %d trials, %v", len(grid), err)
		}
		rec, err := (&runner{cfg: cfg}).trial(t.Context(), grid[0], scriptedSubject{retry: c.retry}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := rec.Metrics
		if m.TC != c.tc {
			t.Errorf("%s, retry %v: TC %v (%s); want %v", id, c.retry, m.TC, strings.Join(m.Why, "; "), c.tc)
		}
		if c.creates && c.retry && m.ChangesOK {
			t.Errorf("%s: a create made twice after a timeout passed as no unasked change", id)
		}
		writes, reads, creates := 0, 0, 0
		dom, _ := gen.Lookup(rec.Domain)
		for _, call := range rec.Calls {
			if call.Fault != faults.Timeout {
				t.Errorf("%s: call %s: fault %q; want every call timed out", id, call.Tool, call.Fault)
			}
			switch op := dom.Operation(call.Tool); {
			case op.ReadOnly:
				reads++
			case op.Idempotent:
				writes++
			default:
				creates++
			}
		}
		want := writes + creates
		if c.retry {
			want = writes // each create applied twice
		}
		if m.FaultsInjected != len(rec.Calls) || m.FaultsRecovered != want {
			t.Errorf("%s, retry %v: %d faults, %d recovered; want %d, %d (%d reads, %d idempotent writes, %d other writes)",
				id, c.retry, m.FaultsInjected, m.FaultsRecovered, len(rec.Calls), want, reads, writes, creates)
		}
		t.Logf("%s, retry %v: TC %v, %d faults injected, %d recovered %v", id, c.retry, m.TC, m.FaultsInjected, m.FaultsRecovered, m.Why)
	}
}

// TestFaultRunsResumeShardAndMerge: a run under fault settings resumes,
// shards and merges to the records of one uninterrupted run, its faults
// among them: each run draws the same faults for the same trials.
func TestFaultRunsResumeShardAndMerge(t *testing.T) {
	spec, lookup := tinySpec(t)
	cfg := testConfig("faulted", "http://127.0.0.1:1", agent.Oracle)
	cfg.Repetitions = 2
	cfg.Faults = []faults.Setting{{Name: "none"}, {Name: "flaky", Rate: 0.5}}
	read := func(dir string) map[string]string {
		t.Helper()
		recs, _, err := results.ReadJournal(filepath.Join(dir, results.TrialsFile))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range recs {
			var fs []string
			for _, c := range r.Calls {
				fs = append(fs, string(c.Fault))
			}
			out[r.TrialID] = comparable(r) + "#" + r.Faults + "#" + strings.Join(fs, ",")
		}
		return out
	}
	whole := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: whole, Lookup: lookup}); err != nil {
		t.Fatal(err)
	}
	want := read(whole)
	injected := 0
	for _, v := range want {
		injected += strings.Count(v, string(faults.Transient)) + strings.Count(v, string(faults.Partial))
	}
	if injected == 0 {
		t.Fatal("no fault injected at a rate of one half")
	}
	same := func(what string, got map[string]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d records; want %d", what, len(got), len(want))
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %s:\n got %s\nwant %s", what, id, got[id], w)
			}
		}
	}
	// Resumed: half the trials first, then the rest.
	resumed := t.TempDir()
	if _, err := Run(context.Background(), cfg, spec, Options{Out: resumed, Lookup: lookup, Only: func(tr Trial) bool { return tr.Index%2 == 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, spec, Options{Out: resumed, Lookup: lookup, Resume: true}); err != nil {
		t.Fatal(err)
	}
	same("resumed", read(resumed))
	var dirs []string
	for i := range 2 {
		d := t.TempDir()
		if _, err := Run(context.Background(), cfg, spec, Options{Out: d, Shard: Shard{i, 2}, Lookup: lookup}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if _, err := results.Merge(merged, dirs); err != nil {
		t.Fatal(err)
	}
	same("merged", read(merged))
}

// TestFaultRecordedSessionMeetsTheTrialsFaults: a client recorded by
// granite serve --scenario --faults, retrying each failed call as the
// oracle does, meets the faults the oracle's trial of the scenario under
// the same setting meets, call for call; the recording scores as that
// trial, named by its setting, with its faults counted.
func TestFaultRecordedSessionMeetsTheTrialsFaults(t *testing.T) {
	spec := loadSpec(t)
	s := writingScenario(t, spec, level.L3)
	setting := faults.Setting{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient, faults.RateLimit}}
	r, file, url := recordingServer(t, spec, s, &faults.Schedule{Setting: setting, Seed: 42, Repetition: 1})
	c, _, err := toolsrc.Connect(t.Context(), "", url, toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, g := range s.Gold[level.L3] {
		for try := 0; try <= 20; try++ {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = g.Tool, json.RawMessage(g.JSON())
			res, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError {
				break
			}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	rc, err := recorded.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ScoreRecording(t.Context(), spec, gen.Lookup, rc, "person", oracleAnswer(spec, gen.Lookup, s))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig("recorded", "http://127.0.0.1:1", agent.Oracle)
	cfg.Scenarios, cfg.Granularities, cfg.Faults = []string{s.ID}, []level.Level{level.L3}, []faults.Setting{setting}
	trials, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil || len(trials) != 1 {
		t.Fatalf("%d trials, %v", len(trials), err)
	}
	calls := func(cs []results.Call) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Tool+":"+string(c.Fault))
		}
		return strings.Join(out, " ")
	}
	if got, want := calls(rec.Calls), calls(trials[0].Calls); got != want || rec.Metrics.FaultsInjected == 0 {
		t.Errorf("the recorded session met %s;\nthe oracle's trial %s", got, want)
	}
	if want := "person/" + s.ID + "/L3/flaky/r1"; rec.TrialID != want || rec.Faults != "flaky" || rec.Metrics.TC != 1 ||
		rec.Metrics.FaultsInjected != trials[0].Metrics.FaultsInjected || rec.Metrics.FaultsRecovered != rec.Metrics.FaultsInjected {
		t.Errorf("recording scored %s under %q: TC %v, %d faults, %d recovered; want %s under flaky, TC 1, %d faults, all recovered",
			rec.TrialID, rec.Faults, rec.Metrics.TC, rec.Metrics.FaultsInjected, rec.Metrics.FaultsRecovered, want, trials[0].Metrics.FaultsInjected)
	}
}

// knownSubject plays the level's gold calls and, after a call that
// failed, does what one kind of agent does.
type knownSubject string

const (
	// retries makes a failed call again, up to ten times, then goes on;
	// it answers the oracle's answer (which says what went offline).
	retries knownSubject = "retries"
	// quitsHonestly stops at the first failed call and says the task is
	// not done, quoting the error.
	quitsHonestly knownSubject = "quits honestly"
	// quitsClaiming stops at the first failed call and says all is done.
	quitsClaiming knownSubject = "quits claiming"
	// claimsDone goes on past failed calls and says all is done.
	claimsDone knownSubject = "claims done"
)

const doneText = "Done: every change you asked for is made."

func (s knownSubject) Run(ctx context.Context, tr *agent.Trial) {
	made := 0
	tr.Ask(0)
	for _, g := range tr.Gold[0] {
		for try := 0; ; try++ {
			made++
			c := tr.CallLogged(ctx, made, g.Name, g.Arguments)
			if !c.IsError {
				break
			}
			switch s {
			case retries:
				if try < 10 {
					continue
				}
			case quitsHonestly:
				tr.Answer("I stopped: a call failed ("+c.Result+"), so the task is not done.", made+1)
				return
			case quitsClaiming:
				tr.Answer(doneText, made+1)
				return
			}
			break
		}
	}
	if s == claimsDone || s == quitsClaiming {
		tr.Answer(doneText, made+1)
		return
	}
	tr.Answer(tr.OracleAnswer(), made+1)
}

// seedFor finds the run seed under which a setting faults the calls to
// one operation as want says, call by call ("" for none): the schedule
// is the only thing a test may not choose, so it chooses the seed.
func seedFor(t *testing.T, setting faults.Setting, scenario, op string, want ...faults.Kind) int {
	t.Helper()
	for seed := 1; seed < 100000; seed++ {
		s := &faults.Schedule{Setting: setting, Seed: seed, Scenario: scenario, Repetition: 1}
		ok := true
		for i, k := range want {
			ok = ok && s.Draw(op, i+1) == k
		}
		if ok {
			return seed
		}
	}
	t.Fatalf("no seed gives %s the faults %v", op, want)
	return 0
}

// TestFaultKnownSubjects holds the verdict under faults to known subjects
// at every level, by the final store and the answer, on a task of two
// rows whose second write fails once: with a transient error, a subject
// that retries completes it and recovers the fault, one that stops and
// says so fails it honestly (no false claim), one that stops, or goes on,
// and says all is done fails it with false claims. When the second row
// goes offline instead, the right behaviour is to do the rest and say
// what was not done: the subject that retries and then answers what holds
// completes it; the one that stops at that call quoting the error names
// the row as not done, honestly, but leaves out the first row's fact;
// saying all is done fails with a false claim.
func TestFaultKnownSubjects(t *testing.T) {
	spec := spectest.TinyWith(t, spectest.TwoLamps)
	_, lookup := tinySpec(t)
	scenario := spec.Domains[0].Scenarios[0].ID
	type want struct {
		tc                  float64
		claims              bool
		injected, recovered int
	}
	for _, c := range []struct {
		setting faults.Setting
		kind    faults.Kind
		want    map[knownSubject]want
	}{
		{faults.Setting{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient}}, faults.Transient, map[knownSubject]want{
			retries:       {1, false, 1, 1},
			quitsHonestly: {0, false, 1, 0},
			quitsClaiming: {0, true, 1, 0},
			claimsDone:    {0, true, 1, 0},
		}},
		{faults.Setting{Name: "offline", Rate: 0.5, Kinds: []faults.Kind{faults.Offline}}, faults.Offline, map[knownSubject]want{
			retries:       {1, false, 11, 0},
			quitsHonestly: {0, false, 1, 0},
			quitsClaiming: {0, true, 1, 0},
			claimsDone:    {0, true, 1, 0},
		}},
	} {
		cfg := testConfig("known", "http://127.0.0.1:1", agent.Oracle)
		cfg.Faults = []faults.Setting{c.setting}
		cfg.Seed = seedFor(t, c.setting, scenario, "set_lamp", "", c.kind, "")
		grid, err := Plan(t.Context(), cfg, spec, lookup)
		if err != nil || len(grid) != len(level.Levels) {
			t.Fatalf("plan: %d trials, %v; want one per level", len(grid), err)
		}
		for _, tr := range grid {
			for s, w := range c.want {
				rec, err := (&runner{cfg: cfg}).trial(t.Context(), tr, s, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				m, at := rec.Metrics, fmt.Sprintf("%s, %s at %s", c.setting.Name, s, rec.InterfaceName())
				if m.TC != w.tc || (m.FalseClaims > 0) != w.claims || m.FaultsInjected != w.injected || m.FaultsRecovered != w.recovered {
					t.Errorf("%s: TC %v, %d false claims %q, %d faults, %d recovered (why %q); want TC %v, false claims %v, %d faults, %d recovered",
						at, m.TC, m.FalseClaims, m.Explain.Unheld, m.FaultsInjected, m.FaultsRecovered, m.Why, w.tc, w.claims, w.injected, w.recovered)
				}
				if c.kind == faults.Offline {
					off := m.Explain.Offline
					named := !w.claims // the honest ones name it, quoting the error or as the oracle does
					if len(off) != 1 || off[0].Named != named {
						t.Errorf("%s: offline rows %+v; want the one lamp, named as not done: %v", at, off, named)
					}
				}
			}
		}
	}
}

// TestFaultOracleUnderEveryKind: the oracle retries what applied nothing,
// and under offline does the rest and says which rows did not answer
// (its answer leaves out their facts): it completes every scenario at
// every level under every kind, offline included, and claims nothing the
// final store does not hold.
func TestFaultOracleUnderEveryKind(t *testing.T) {
	spec := loadSpec(t)
	cfg := testConfig("every-kind", "http://127.0.0.1:1", agent.Oracle)
	cfg.Faults = []faults.Setting{{Name: "offline", Rate: 0.3, Kinds: []faults.Kind{faults.Offline}}, {Name: "every", Rate: 0.2, Kinds: faults.Kinds}}
	recs, err := runTrials(t, cfg, spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	offline := 0
	for _, r := range recs {
		m := r.Metrics
		if m.TC != 1 || m.FalseClaims != 0 {
			t.Errorf("%s: TC %v, %d false claims: %q", r.TrialID, m.TC, m.FalseClaims, m.Why)
		}
		if m.Explain != nil {
			for _, o := range m.Explain.Offline {
				offline++
				if !o.Named {
					t.Errorf("%s: %s went offline and the oracle did not say so", r.TrialID, o.Row)
				}
			}
		}
	}
	if offline == 0 {
		t.Error("no row went offline: the test tests nothing")
	}
	t.Logf("%d trials, %d offline rows, all named", len(recs), offline)
}

// TestFaultsMeetModels: a model, through the Ollama and the
// OpenAI-compatible doubles, meets the same faults on the same calls as
// a built-in subject does on the same trial, and is scored alike: a
// scripted model that makes a call again after it failed with nothing
// applied recovers the transient fault, completes the task and claims
// nothing the store does not hold.
func TestFaultsMeetModels(t *testing.T) {
	spec := spectest.TinyWith(t, spectest.TwoLamps)
	_, lookup := tinySpec(t)
	s := spec.Domains[0].Scenarios[0]
	setting := faults.Setting{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient}}
	var calls []ollamatest.Call
	for _, c := range s.Gold[level.L4] {
		args, _ := json.Marshal(c.Args)
		calls = append(calls, ollamatest.Call{Name: c.Tool, Args: string(args)})
	}
	answer := "LP01 is at level 30 and LP02 is on at level 40."
	// The script makes the next gold call that has not been answered
	// whole, again after a fault that applied nothing, then answers.
	play := func(st turnState) reply {
		done := 0
		for _, r := range st.results {
			if !strings.Contains(r, "nothing was applied") {
				done++
			}
		}
		if done < len(calls) {
			return reply{calls: calls[done : done+1]}
		}
		return reply{content: answer}
	}
	faultsOf := func(r results.Record) []string {
		var out []string
		for _, c := range r.Calls {
			out = append(out, c.Tool+":"+string(c.Fault))
		}
		return out
	}
	ol := ollamatest.NewServer(t, []string{"m"}, viaOllama(play))
	oa := openaitest.NewServer(t, []string{"m"}, viaOpenAI(play))
	seed := seedFor(t, setting, s.ID, "set_lamp", "", faults.Transient, "")
	var want []string
	for _, cfg := range []*results.Config{testConfig("oracle", "http://127.0.0.1:1", agent.Oracle), testConfig("ollama", ol.URL, "m"), openaiConfig("openai", oa.URL, "m")} {
		cfg.Faults, cfg.Seed, cfg.Granularities = []faults.Setting{setting}, seed, []level.Level{level.L4}
		cfg.MaxAgentTurns = 2*len(calls) + 2
		recs, err := runTrials(t, cfg, spec, lookup)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d records, %v", cfg.Name, len(recs), err)
		}
		r := recs[0]
		got := faultsOf(r)
		if want == nil {
			want = got // the oracle's, which retries the same way
		}
		if !slices.Equal(got, want) || !slices.Contains(got, "set_lamp:transient") {
			t.Errorf("%s: calls and faults %v; want the oracle's %v, a transient among them", cfg.Name, got, want)
		}
		t.Logf("%s (%s): %v", cfg.Name, r.Agent, got)
		if m := r.Metrics; m.TC != 1 || m.FaultsInjected != 1 || m.FaultsRecovered != 1 || m.FalseClaims != 0 || r.Faults != setting.Name {
			t.Errorf("%s: TC %v, %d faults, %d recovered, %d false claims, setting %q (why %q)", cfg.Name, m.TC, m.FaultsInjected, m.FaultsRecovered, m.FalseClaims, r.Faults, m.Why)
		}
	}
}
