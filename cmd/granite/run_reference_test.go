package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/scenarios"
)

// referenceFixture holds three scenarios of one of granite's domains in
// the form granite import scenarios gives the reference's: one artifact
// per scenario and level (L4, L3, L2, L1 among them), each with its
// level's gold from the domain's scenarios.yaml. One scenario, at L4 and
// L2, deletes a rule and creates one, after an optional first read; its
// L3 artifact alone asks the answer for a string the oracle's answer (the
// tools' results) does not hold.
const referenceFixture = "../../harness/testdata/reference-smarthome.jsonl"

// levelServer is a stand-in for the reference's per-level servers: this
// test binary run as granite, serving a generated domain at one level
// over stdio, one store per process, as a FastMCP server keeps its state
// in memory. env passes the switch, which a live source's allow-listed
// environment would drop.
func levelServer(t *testing.T) string {
	t.Helper()
	if strings.ContainsAny(os.Args[0], " '\"{}") {
		t.Skipf("test binary path %q does not fit in a command line", os.Args[0])
	}
	return "env " + asGranite + "=1 " + os.Args[0] + " serve --domain {{.Domain}} --level {{.Level}} --transport stdio"
}

// runReference runs granite run on artifacts with the builtin oracle,
// twice each, and returns the exit code, stdout and stderr.
func runReference(t *testing.T, out, artifacts, mcpCmd string, more ...string) (int, string, string) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "reference.yaml")
	must(t, os.WriteFile(config, []byte("name: reference\nmodels: [builtin:oracle]\nrepetitions: 2\nmeter: none\n"), 0o644))
	var stdout, stderr bytes.Buffer
	args := append([]string{"run", "--config", config, "--artifacts", artifacts, "--mcp-cmd", mcpCmd, "--out", out}, more...)
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestRunReferenceScenarios plays imported reference scenarios on their
// levels' servers, each trial on a fresh process: every oracle trial
// completes, is the scenario's at its level, carries the reference's
// metrics with completion by its contains strings, resumes and shards by
// those ids, and the report groups the run by level.
func TestRunReferenceScenarios(t *testing.T) {
	arts, err := scenarios.ReadArtifacts(referenceFixture)
	must(t, err)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runReference(t, out, referenceFixture, levelServer(t))
	if code != 0 {
		t.Fatalf("granite run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	must(t, err)
	if len(recs) != 2*len(arts) {
		t.Fatalf("%d records; want %d (2 repetitions of %d artifacts)", len(recs), 2*len(arts), len(arts))
	}
	byID := map[string]*scenarios.Artifact{}
	for i := range arts {
		byID[arts[i].Scenario+"@"+arts[i].Level] = &arts[i]
	}
	results1 := map[string][]string{} // a trial's call results, by scenario@level/rep
	for _, rec := range recs {
		a := byID[rec.Scenario+"@"+string(rec.Level)]
		if a == nil {
			t.Fatalf("%s: scenario %s at %q is no artifact's", rec.TrialID, rec.Scenario, rec.Level)
		}
		if want := results.TrialID("builtin:oracle", a.Scenario, a.Level, rec.Repetition); rec.TrialID != want {
			t.Errorf("trial id %s; want %s", rec.TrialID, want)
		}
		domain := strings.TrimPrefix(a.Source, "reference:")
		if rec.Difficulty != a.Difficulty || rec.Artifacts != referenceFixture || rec.Domain != domain || rec.Interface != "" {
			t.Errorf("%s: difficulty %q, artifacts %q, domain %q, interface %q; want %q, %q, %q, none", rec.TrialID, rec.Difficulty, rec.Artifacts, rec.Domain, rec.Interface, a.Difficulty, referenceFixture, domain)
		}
		m := rec.Metrics
		if m == nil || m.TC != 1 || m.F1 != 1 || m.ArgAcc != 1 {
			t.Errorf("%s: metrics %+v; want tc, f1 and arg_acc 1 (why: %v)", rec.TrialID, m, m.Why)
			continue
		}
		// The reference's metrics: the oracle calls every required gold
		// tool with the gold's arguments; its answer, the tools' results,
		// holds the expected strings except at L3.
		wantDone := 1.0
		if rec.Level == "L3" {
			wantDone = 0
		}
		if p := m.Paper; p == nil || p.ToolF1 != 1 || p.ArgAcc != 1 || p.EditDistance != 0 || p.TaskCompletion != wantDone {
			t.Errorf("%s: metrics.paper %+v; want tool F1 and argument accuracy 1, edit distance 0, task completion %v", rec.TrialID, p, wantDone)
		}
		var got []string
		for _, c := range rec.Calls {
			if c.IsError {
				t.Errorf("%s: call %s failed: %s", rec.TrialID, c.Tool, c.Result)
			}
			got = append(got, c.Result)
		}
		results1[rec.Scenario+"@"+string(rec.Level)+"/"+string(rune('0'+rec.Repetition))] = got
	}
	// A fresh process per trial: every second repetition gets the first's
	// results. The rule the first deleted the second deletes again, and
	// the rule it creates gets the same id, which a server kept between
	// trials would answer with an error and the next id.
	for _, a := range arts {
		first, second := results1[a.Scenario+"@"+a.Level+"/1"], results1[a.Scenario+"@"+a.Level+"/2"]
		if len(first) == 0 || !slices.Equal(first, second) {
			t.Errorf("%s: repetitions got different results, so a server's state crossed trials:\n%q\n%q", a.ID, first, second)
		}
	}

	// A resume finds every trial recorded; a shard plays its part of the
	// same ids.
	if code, stdout, stderr := runReference(t, out, referenceFixture, levelServer(t), "--resume"); code != 0 || !strings.Contains(stdout, "0 run now, 10 recorded before") {
		t.Errorf("resume: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	shard := filepath.Join(t.TempDir(), "shard")
	if code, stdout, stderr := runReference(t, shard, referenceFixture, levelServer(t), "--shard", "1/2"); code != 0 || !strings.Contains(stdout, "5 trials in shard 1/2") {
		t.Errorf("shard: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	part, _, err := results.ReadJournal(filepath.Join(shard, results.TrialsFile))
	must(t, err)
	for _, rec := range part {
		if !slices.ContainsFunc(recs, func(r results.Record) bool { return r.TrialID == rec.TrialID && r.Index == rec.Index }) {
			t.Errorf("shard 1/2 played %s (index %d), which the whole run did not", rec.TrialID, rec.Index)
		}
	}

	// Levels keep the artifacts at those levels, and need no server for
	// the others.
	some := filepath.Join(t.TempDir(), "some")
	onlyOuter := "sh -c 'case {{.Level}} in L2|L3) exit 3;; esac; exec " + levelServer(t) + "'"
	if code, stdout, stderr := runReference(t, some, referenceFixture, onlyOuter, "--levels", "L4,L1"); code != 0 || !strings.Contains(stdout, "6 trials in shard 0/1") {
		t.Errorf("--levels L4,L1: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	} else if r, err := report.Load(some); err != nil || report.Build(r, 0).Covered != 6 {
		t.Errorf("--levels L4,L1: report: %v, %v", err, report.Build(r, 0).Notes)
	}

	res, err := report.Load(out)
	must(t, err)
	rep := report.Build(res, 0)
	if rep.Covered != len(recs) {
		t.Errorf("report covers %d trials of %d; notes: %q", rep.Covered, len(recs), rep.Notes)
	}
	by := rep.Table("by_level")
	if by == nil {
		t.Fatal("no by_level table")
	}
	var levels []string
	for _, row := range by.Rows {
		levels = append(levels, row[0].(string))
	}
	if want := []string{"L4", "L3", "L2", "L1"}; !slices.Equal(levels, want) {
		t.Errorf("by_level rows %q; want %q", levels, want)
	}
	// The paper's table reads metrics.paper: completion by contains, 0
	// where the only scenario at L3 (002) asks for a string the answer
	// lacks.
	paperTable := rep.Table(report.PaperLevelsTable)
	if paperTable == nil {
		t.Fatal("no paper_levels table")
	}
	done := map[string]any{}
	for _, row := range paperTable.Rows {
		done[row[0].(string)] = row[1]
	}
	if want := map[string]any{"L4": 1.0, "L3": 0.0, "L2": 1.0, "L1": 1.0}; !maps.Equal(done, want) {
		t.Errorf("paper_levels task completion by level %v; want %v", done, want)
	}
}

// TestRunReferenceScenariosRefused: a template naming a field granite
// does not fill is a usage error naming the flag; a command whose tools
// lack a gold call's, or that dies at load or at a trial's start, fails
// with the command and what to do; groups, which regroup, are refused.
func TestRunReferenceScenariosRefused(t *testing.T) {
	server := levelServer(t)
	arts, err := scenarios.ReadArtifacts(referenceFixture)
	must(t, err)
	first := arts[0] // at L4, which an L1 server's tools lack
	if first.Level != "L4" {
		t.Fatalf("the fixture's first artifact is at %s; want L4", first.Level)
	}
	mark := filepath.Join(t.TempDir(), "listed")
	for _, c := range []struct {
		name, cmd string
		more      []string
		code      int
		want      []string
	}{
		{"unknown field", strings.Replace(server, "{{.Level}}", "{{.Nope}}", 1), nil, 2,
			[]string{"--mcp-cmd:", "can't evaluate field Nope", "{{.Domain}}, {{.Level}} and {{.Granularity}}"}},
		{"bad template", server + " {{.Level", nil, 2, []string{"--mcp-cmd:", "unclosed action"}},
		{"tools lack a gold call's", strings.Replace(server, "{{.Level}}", "L1", 1), nil, 1,
			[]string{fmt.Sprintf("artifact %s: expected call 0 names tool %q, which the command", first.ID, first.ExpectedCalls[0].Tool), "--level L1 --transport stdio does not list; expected the server of the artifact's level (L4)"}},
		{"groups", server, []string{"--groups", "groups.yaml"}, 1, []string{"groups groups.yaml: artifacts of reference scenarios are not regrouped"}},
		{"dies at load", "sh -c 'exit 3'", nil, 1, []string{"artifact " + first.ID + ": list the tools of sh -c 'exit 3'", "run the command by hand"}},
		// Listed once at load, then gone: the first trial cannot start.
		{"dies at a trial", "sh -c 'test -e " + mark + " && exit 3; touch " + mark + "; exec " + strings.ReplaceAll(server, "{{.Level}}", "L4") + "'", nil, 1,
			[]string{"granite run: trial builtin:oracle/", ": live source sh -c 'test -e", "initialize:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			single := referenceFixture
			if c.name == "dies at a trial" {
				// One command for every artifact: keep those at L4.
				single = filepath.Join(t.TempDir(), "l4.jsonl")
				var l4 []scenarios.Artifact
				for _, a := range arts {
					if a.Level == "L4" {
						l4 = append(l4, a)
					}
				}
				f, err := os.Create(single)
				must(t, err)
				must(t, scenarios.WriteArtifacts(f, l4))
				must(t, f.Close())
			}
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runReference(t, out, single, c.cmd, c.more...)
			if code != c.code {
				t.Errorf("exit %d; want %d\nstderr: %s", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestRunReferenceRelativeCommand: a server named by a path relative to
// where granite runs is found though each trial starts it in a folder of
// its own.
func TestRunReferenceRelativeCommand(t *testing.T) {
	fixture, err := filepath.Abs(referenceFixture)
	must(t, err)
	dir := t.TempDir()
	must(t, os.Symlink(os.Args[0], filepath.Join(dir, "granite")))
	t.Chdir(dir)
	// The switch passes as a live source's environment is told to pass
	// one, so that the program is the command's first word.
	t.Setenv(asGranite, "1")
	t.Setenv("GRANITE_SOURCE_ENV", asGranite)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runReference(t, out, fixture, "./granite serve --domain {{.Domain}} --level {{.Level}} --transport stdio", "--levels", "L4")
	if code != 0 || !strings.Contains(stdout, "mean TC 1.000") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestRunReferenceServerDiesMidTrial: a level server that stops reading
// after the load's listing and its trial's first calls (sed passes three
// lines of its input) fails the calls after, each trial's own, and the
// run goes on: the record keeps the failed call and its error, and the
// next trial's fresh server answers again.
func TestRunReferenceServerDiesMidTrial(t *testing.T) {
	if err := exec.Command("sed", "-u", "1q").Run(); err != nil {
		t.Skipf("sed -u: %v", err)
	}
	fixture := filepath.Join(t.TempDir(), "005.jsonl")
	arts, err := scenarios.ReadArtifacts(referenceFixture)
	must(t, err)
	// The L4 artifact with the most calls: three or more.
	var most scenarios.Artifact
	for _, a := range arts {
		if a.Level == "L4" && len(a.ExpectedCalls) > len(most.ExpectedCalls) {
			most = a
		}
	}
	if len(most.ExpectedCalls) < 3 {
		t.Fatalf("no L4 artifact of the fixture makes three calls")
	}
	arts = []scenarios.Artifact{most}
	f, err := os.Create(fixture)
	must(t, err)
	must(t, scenarios.WriteArtifacts(f, arts))
	must(t, f.Close())
	out := filepath.Join(t.TempDir(), "out")
	server := strings.TrimPrefix(levelServer(t), "env ")
	code, stdout, stderr := runReference(t, out, fixture, "sh -c 'sed -u 3q | env "+server+"'")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	must(t, err)
	if len(recs) != 2 {
		t.Fatalf("%d records; want 2", len(recs))
	}
	for _, rec := range recs {
		failed := slices.IndexFunc(rec.Calls, func(c results.Call) bool { return c.IsError })
		if failed < 1 || !strings.Contains(rec.Calls[failed].Result, "transport") || rec.ErrorClass == "" {
			t.Errorf("%s: calls %+v, error class %q; want the first calls answered, then one failing on the closed transport", rec.TrialID, rec.Calls, rec.ErrorClass)
		}
	}
}
