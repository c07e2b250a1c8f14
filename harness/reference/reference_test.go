package reference

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/view"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/scenarios"
)

var update = flag.Bool("update", false, "rewrite the stderr.txt goldens of the malformed fixtures")

const scenarioDir = "testdata/scenarios"

func readFixtureScenarios(t *testing.T) []Scenario {
	t.Helper()
	scens, err := ReadScenarios(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	return scens
}

func TestImportReadScenarios(t *testing.T) {
	scens := readFixtureScenarios(t)
	var ids []string
	for _, s := range scens {
		ids = append(ids, s.ID)
	}
	if want := []string{"greenhouse-001", "greenhouse-002", "parcel-001", "parcel-002"}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v; want %v (domain folders, then files, in name order)", ids, want)
	}
	g2 := scens[1]
	if got, want := g2.Levels(), []level.Level{level.L4, level.L3, level.L1}; !slices.Equal(got, want) {
		t.Errorf("greenhouse-002 levels %v; want %v (no composite_2)", got, want)
	}
	l4 := g2.Gold[level.L4]
	if len(l4) != 3 || !l4[0].Required || l4[2].Required || l4[2].Tool != "read_climate" || len(l4[2].Arguments) != 0 {
		t.Errorf("greenhouse-002 primitive gold %+v; want two required calls and read_climate optional, without arguments", l4)
	}
	if l1 := g2.Gold[level.L1]; !l1[0].OrderFlexible || !l1[1].OrderFlexible {
		t.Errorf("greenhouse-002 composite_1 gold %+v; want both calls order_flexible", l1)
	}
	want := map[string]any{"plan": map[string]any{"vents": map[string]any{"position": float64(40)}, "misting": map[string]any{"zone": "B", "minutes": float64(5)}}}
	if d := cmp.Diff(want, g2.Gold[level.L3][0].Arguments); d != "" {
		t.Errorf("nested arguments (-want +got):\n%s", d)
	}
	if !slices.Equal(g2.Contains, []string{"40", "zone B"}) || g2.Context["season"] != "late spring" || g2.File != "greenhouse/greenhouse-002.yaml" {
		t.Errorf("greenhouse-002: contains %q, context %v, file %s", g2.Contains, g2.Context, g2.File)
	}
}

// TestImportScenariosRoundTrip: every scenario's every level becomes an
// artifact that scenarios.ReadArtifacts reads back whole.
func TestImportScenariosRoundTrip(t *testing.T) {
	arts, skipped := Artifacts(readFixtureScenarios(t))
	if len(skipped) > 0 {
		t.Errorf("skipped %v", skipped)
	}
	out := filepath.Join(t.TempDir(), "sub", "imported.jsonl")
	if err := WriteArtifactsFile(out, arts, false); err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.ReadArtifacts(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(arts, back); d != "" {
		t.Errorf("artifacts changed on the round trip (-wrote +read):\n%s", d)
	}
	var ids []string
	for _, a := range back {
		ids = append(ids, a.ID)
	}
	wantIDs := []string{"greenhouse-001@L4", "greenhouse-001@L3", "greenhouse-001@L2", "greenhouse-001@L1", "greenhouse-002@L4", "greenhouse-002@L3", "greenhouse-002@L1",
		"parcel-001@L4", "parcel-001@L3", "parcel-001@L2", "parcel-001@L1", "parcel-002@L4", "parcel-002@L2", "parcel-002@L1"}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("ids %v; want %v", ids, wantIDs)
	}
	a := back[4] // greenhouse-002@L4
	if a.Source != "reference:greenhouse" || a.Scenario != "greenhouse-002" || a.Level != "L4" || a.Difficulty != "medium" || a.Tier != "complex" ||
		a.Title != "Vent and mist" || !slices.Equal(a.Contains, []string{"40", "zone B"}) {
		t.Errorf("greenhouse-002@L4 header %+v", a)
	}
	if len(a.Turns) != 1 || a.Turns[0].Prompt != "Open the roof vents to 40 percent and mist zone B for 5 minutes." {
		t.Errorf("turns %+v", a.Turns)
	}
	if len(a.ExpectedCalls) != 3 || a.ExpectedCalls[0].Optional || !a.ExpectedCalls[2].Optional || string(a.ExpectedCalls[2].Arguments) != "{}" ||
		a.ExpectedCalls[1].Reason != "gold call 2 of 3 of the reference's primitive" {
		t.Errorf("expected calls %+v", a.ExpectedCalls)
	}
	if len(a.Assertions) != 2 || a.Assertions[1].Kind != "tool_call" || a.Assertions[1].Severity != "blocker" || a.Assertions[1].Tool != "start_mister" ||
		string(a.Assertions[1].Arguments) != `{"minutes":5,"zone":"B"}` {
		t.Errorf("assertions %+v; want a blocker per required call, with its arguments", a.Assertions)
	}
	if len(a.MockOutputs) != 0 || a.Provenance != (scenarios.Provenance{Backend: "import", Stage: "greenhouse/greenhouse-002.yaml"}) {
		t.Errorf("mock outputs %v, provenance %+v", a.MockOutputs, a.Provenance)
	}
	if back[0].Tier != "simple" {
		t.Errorf("an easy scenario's tier is %s; want simple", back[0].Tier)
	}
	// An existing file is replaced only when asked.
	if err := WriteArtifactsFile(out, arts[:1], false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("writing over an existing file: %v; want a refusal naming --force", err)
	}
	if err := WriteArtifactsFile(out, arts[:1], true); err != nil {
		t.Fatal(err)
	}
	if back, err := scenarios.ReadArtifacts(out); err != nil || len(back) != 1 {
		t.Errorf("after --force: %d artifacts, %v", len(back), err)
	}
}

// TestImportScenarioErrors: every problem of every malformed file at
// once, positioned, as testdata/bad-scenarios/stderr.txt pins them.
func TestImportScenarioErrors(t *testing.T) {
	_, err := ReadScenarios("testdata/bad-scenarios")
	if err == nil {
		t.Fatal("read malformed scenarios without error")
	}
	golden(t, "testdata/bad-scenarios/stderr.txt", err.Error()+"\n")
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("errors differ from %s (-want +got):\n%s", path, d)
	}
}

// TestImportRunReproduces: every traced condition of the fixture, whose
// recorded metrics were worked by hand (testdata/README.md), re-scores to
// what was recorded; the folder written is one granite report reads.
func TestImportRunReproduces(t *testing.T) {
	out := filepath.Join(t.TempDir(), "imported")
	sum, err := ImportRun(t.Context(), unpack(t, "testdata/run.txtar"), readFixtureScenarios(t), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sum.Mismatches {
		t.Errorf("does not reproduce: %s", m)
	}
	if sum.Conditions != 12 || sum.Traced != 11 || sum.Reproduced != 11 || sum.Unrecorded != 0 ||
		!slices.Equal(sum.Untraced, []string{"finch:7b/greenhouse-001/L2/r1"}) {
		t.Errorf("summary %+v; want 12 conditions, 11 traced and reproduced, finch:7b/greenhouse-001/L2/r1 untraced", sum)
	}
	res, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	r := report.Build(res, 0)
	if r.Covered != 12 || r.Planned != 12 {
		t.Errorf("report covers %d of %d planned; want 12 of 12 (notes %q)", r.Covered, r.Planned, r.Notes)
	}
	if !slices.Equal(r.Models, []string{"finch:7b", "acme/lark:2b-q4"}) {
		t.Errorf("report models %v", r.Models)
	}
	// A fault rate is a fault setting, compared against rate 0 as any.
	if fs := res.Manifest.Config.Faults; len(fs) != 2 || fs[0].Name != "none" || fs[1].Name != "fr0.2" || fs[1].Rate != 0.2 {
		t.Errorf("imported config's faults %+v; want none and fr0.2", fs)
	}
	if tab := r.Table(report.FaultsTable); tab == nil || !slices.ContainsFunc(tab.Rows, func(row []any) bool { return row[0] == "fr0.2" }) {
		t.Errorf("the report has no %s row for fr0.2: %+v", report.FaultsTable, tab)
	}
	byID := map[string]results.Record{}
	folder, err := view.OpenFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range res.Records {
		byID[rec.TrialID] = rec
		// granite view finds every trial too.
		if got, err := folder.Record(rec.TrialID); err != nil || got.TrialID != rec.TrialID {
			t.Errorf("granite view's index: %s: %v", rec.TrialID, err)
		}
	}
	// The erroring call followed by a retry, an optional call and a string
	// where the gold has a number.
	rec := byID["finch:7b/greenhouse-002/L4/r1"]
	if rec.Agent != results.AgentImported || rec.Domain != "greenhouse" || rec.Difficulty != "medium" || rec.Repetition != 1 || rec.StopReason != results.StopAnswer ||
		rec.ErrorClass != results.ErrTool || rec.Turns != 5 || rec.PromptTokens != 900 || rec.CompletionTokens != 120 ||
		rec.StartedAt != "2026-11-30T09:00:05.250000+00:00" {
		t.Errorf("record header %+v", rec)
	}
	c := rec.Calls[0]
	if len(rec.Calls) != 4 || c.Tool != "set_vent" || string(c.Arguments) != `{"position":"40"}` || !c.IsError || c.ErrorClass != results.ErrTool ||
		c.Result != "position: expected an integer" || c.AtMS != 500 || c.LatencyMS != 250 {
		t.Errorf("first call %+v", c)
	}
	ref := rec.Reference
	if ref == nil || ref.Granularity != "primitive" || ref.FaultRate != 0 || ref.Seed == 0 || ref.Recorded == nil ||
		ref.Trace != "finch:7b__greenhouse__primitive__greenhouse-002__fr0.0__rep0.json" {
		t.Errorf("reference %+v", ref)
	}
	m := rec.Metrics
	if m.TC != 1 || m.TCStrict != 1 || m.GoldCalls != 2 || m.ToolCalls != 4 || m.ZeroToolCall || m.Paper == nil || *m.Paper.ErrorRecovery != 1 {
		t.Errorf("metrics %+v", m)
	}
	// The L1 condition with a wrong action: the reference's F1 is 1,
	// granite's action_f1 is not.
	l1 := byID["acme/lark:2b-q4/greenhouse-002/L1/r1"].Metrics
	if l1.Paper.ToolF1 != 1 || l1.F1 != 1 || l1.ActionF1 != 0.5 || l1.TC != 1 {
		t.Errorf("L1 wrong action: paper f1 %v, f1 %v, action_f1 %v, tc %v; want 1, 1, 0.5, 1", l1.Paper.ToolF1, l1.F1, l1.ActionF1, l1.TC)
	}
	// Zero calls and no answer.
	zero := byID["finch:7b/parcel-001/L2/r1"]
	if !zero.Metrics.ZeroToolCall || zero.Metrics.TC != 0 || len(zero.Metrics.Why) != 1 || zero.StopReason != results.StopAnswer || zero.FinalAnswer != "" {
		t.Errorf("zero calls: %+v, metrics %+v", zero, zero.Metrics)
	}
	// A duplicate call.
	if dup := byID["acme/lark:2b-q4/parcel-002/L4/r1"].Metrics; dup.Redundant != 1 || dup.RedundantRate != 0.25 {
		t.Errorf("duplicate call: redundant %d, rate %v", dup.Redundant, dup.RedundantRate)
	}
	// Timed out, a failed condition, a fault rate.
	if to := byID["finch:7b/greenhouse-002/L3/r1"]; to.StopReason != results.StopTimeout || !to.Metrics.Timeout || to.ErrorClass != results.ErrTimeout {
		t.Errorf("timed out: stop %s, class %s", to.StopReason, to.ErrorClass)
	}
	if failed := byID["acme/lark:2b-q4/greenhouse-001/L4/r1"]; failed.StopReason != results.StopError || failed.Error != "model server refused the request: 503" || failed.ErrorClass != results.ErrAgent {
		t.Errorf("failed: stop %s, error %q, class %s", failed.StopReason, failed.Error, failed.ErrorClass)
	}
	fr := byID["acme/lark:2b-q4/parcel-001/L1/fr0.2/r1"]
	if fr.Faults != "fr0.2" || fr.Interface != "" || fr.Level != level.L1 || fr.Reference.FaultRate != 0.2 || fr.Metrics.Paper.ErrorRecovery == nil || *fr.Metrics.Paper.ErrorRecovery != 0 {
		t.Errorf("fault rate 0.2: faults %q, interface %q, level %s, reference %+v", fr.Faults, fr.Interface, fr.Level, fr.Reference)
	}
	// interface_level read as granularity.
	if il := byID["finch:7b/parcel-001/L3/r1"]; il.Reference.Granularity != "composite_4" {
		t.Errorf("interface_level condition: %+v", il.Reference)
	}
	// The untraced condition keeps what results.jsonl says.
	un := byID["finch:7b/greenhouse-001/L2/r1"]
	if un.Reference.Trace != "" || un.Metrics.Paper.Tokens != 460 || un.Metrics.TC != 1 || un.Metrics.ToolCalls != 1 || len(un.Calls) != 0 {
		t.Errorf("untraced: reference %+v, metrics %+v", un.Reference, un.Metrics)
	}
}

// TestImportRunSeeds: the seeds results.jsonl records are the reference's
// condition seeds, which an import recomputes for a line without one.
func TestImportRunSeeds(t *testing.T) {
	runDir := unpack(t, "testdata/run.txtar")
	conds, err := ReadConditions(filepath.Join(runDir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conds {
		var l line
		data, _ := os.ReadFile(filepath.Join(runDir, ResultsFile))
		text := strings.Split(string(data), "\n")[c.Line-1]
		if err := json.Unmarshal([]byte(strings.Replace(text, `"seed"`, `"seed_was"`, 1)), &l); err != nil {
			t.Fatal(err)
		}
		got, _, _ := condition(&l)
		if got.Seed != c.Seed {
			t.Errorf("line %d: recomputed seed %d; results.jsonl says %d", c.Line, got.Seed, c.Seed)
		}
	}
}

// TestImportRunErrors: a run folder with broken lines, a trace that is not
// JSON, unknown scenarios and levels reports every problem at once and
// writes nothing.
func TestImportRunErrors(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "imported")
	dir := unpack(t, "testdata/bad-run.txtar")
	_, err := ImportRun(t.Context(), dir, readFixtureScenarios(t), out, Options{})
	if err == nil {
		t.Fatal("imported a malformed run without error")
	}
	golden(t, "testdata/bad-run.stderr.txt", strings.ReplaceAll(err.Error(), dir, "RUN")+"\n")
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed import left %v", entries)
	}
}

// TestImportRunRefusesAFullFolder: an import never adds to results.
func TestImportRunRefusesAFullFolder(t *testing.T) {
	runDir := unpack(t, "testdata/run.txtar")
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportRun(t.Context(), runDir, readFixtureScenarios(t), out, Options{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("import into a folder with a file: %v; want a refusal", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportRun(t.Context(), runDir, readFixtureScenarios(t), empty, Options{}); err != nil {
		t.Errorf("import into an empty folder: %v", err)
	}
}

// TestImportReadScenariosFlat: a folder of .yaml files is read as well,
// with no folder to hold a file's domain to.
func TestImportReadScenariosFlat(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"parcel/parcel-001.yaml", "greenhouse/greenhouse-001.yaml"} {
		data, err := os.ReadFile(filepath.Join(scenarioDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a scenario"), 0o644); err != nil {
		t.Fatal(err)
	}
	scens, err := ReadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(scens) != 2 || scens[0].ID != "greenhouse-001" || scens[0].File != "greenhouse-001.yaml" || scens[1].Domain != "parcel" {
		t.Errorf("flat folder read as %+v", scens)
	}
	if _, err := ReadScenarios(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .yaml scenario files") {
		t.Errorf("an empty folder: %v; want it said to hold no scenario files", err)
	}
}

// TestImportArtifactsSkipLevelsWithoutARequiredCall: a level whose gold
// calls are all optional has nothing to assert and is left out, said.
func TestImportArtifactsSkipLevelsWithoutARequiredCall(t *testing.T) {
	s := Scenario{ID: "x-001", Domain: "x", Difficulty: "hard", UserPrompt: "p", Gold: map[level.Level][]GoldCall{
		level.L4: {{Tool: "a", Arguments: map[string]any{}, Required: true}},
		level.L2: {{Tool: "b", Arguments: map[string]any{}}},
		level.L1: {},
	}}
	arts, skipped := Artifacts([]Scenario{s})
	if len(arts) != 1 || arts[0].ID != "x-001@L4" {
		t.Errorf("artifacts %+v; want x-001@L4 alone", arts)
	}
	if len(skipped) != 2 || !strings.HasPrefix(skipped[0], "x-001 at L2 (composite_2)") || !strings.HasPrefix(skipped[1], "x-001 at L1 (composite_1)") {
		t.Errorf("skipped %q; want L2 and L1 named", skipped)
	}
}

// TestImportRunCancelled: a cancelled import writes nothing.
func TestImportRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(t.TempDir(), "imported")
	if _, err := ImportRun(ctx, unpack(t, "testdata/run.txtar"), readFixtureScenarios(t), out, Options{}); err == nil {
		t.Fatal("a cancelled import went on")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a cancelled import wrote its folder")
	}
}

// TestImportRecordsFollowTheContract: every imported record validates
// against specs/trial.schema.json, the published contract of a record.
func TestImportRecordsFollowTheContract(t *testing.T) {
	sch, err := schemacheck.Compile("granite:trial.schema.json", readFile(t, "../../specs/trial.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "imported")
	if _, err := ImportRun(t.Context(), unpack(t, "testdata/run.txtar"), readFixtureScenarios(t), out, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, results.TrialsFile))), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d records; want 12", len(lines))
	}
	for i, line := range lines {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("line %d does not follow trial.schema.json: %v\n%s", i+1, err, line)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestImportSpan(t *testing.T) {
	p := func(s string) *string { return &s }
	for _, c := range []struct {
		started, ended *string
		wall           float64
		want           [2]string
	}{
		{p("2026-03-24T11:11:42.319912+00:00"), p("2026-03-24T11:11:46.481150+00:00"), 4.16, [2]string{"2026-03-24T11:11:42.319912+00:00", "2026-03-24T11:11:46.481150+00:00"}},
		{p("2026-03-24T11:11:42.5"), nil, 2, [2]string{"2026-03-24T11:11:42.5Z", "2026-03-24T11:11:44.5Z"}},
		{nil, p("2026-03-24T11:11:46+01:00"), 1.5, [2]string{"2026-03-24T11:11:44.5+01:00", "2026-03-24T11:11:46+01:00"}},
		{nil, nil, 3, [2]string{"", ""}},
	} {
		if s, e := span(c.started, c.ended, c.wall); s != c.want[0] || e != c.want[1] {
			t.Errorf("span(%v, %v, %v) = %s, %s; want %s, %s", c.started, c.ended, c.wall, s, e, c.want[0], c.want[1])
		}
	}
}
