package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refScenarios are the invented reference scenarios harness/reference
// tests with.
const refScenarios = "../../harness/reference/testdata/scenarios"

// TestImportUsageErrors: granite import without a subcommand, with an
// unknown one, or a subcommand without its folder or flags exits 2 and
// says what is missing.
func TestImportUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "granite import: need a subcommand: scenarios or runs\nusage: granite import scenarios"},
		{[]string{"import", "nope"}, "granite import: unknown subcommand \"nope\": want scenarios or runs"},
		{[]string{"import", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"import", "scenarios"}, "granite import scenarios: need the reference's scenarios folder (DIR)\nusage: granite import scenarios DIR"},
		{[]string{"import", "scenarios", refScenarios}, "granite import scenarios: need --out FILE.jsonl"},
		{[]string{"import", "scenarios", refScenarios, "--out", out, "stray"}, "granite import scenarios: unexpected argument \"stray\""},
		{[]string{"import", "scenarios", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"import", "runs"}, "granite import runs: need the reference's run folder (DIR)"},
		{[]string{"import", "runs", "run", "--out", "x"}, "granite import runs: need --scenarios SCENDIR"},
		{[]string{"import", "runs", "run", "--scenarios", refScenarios}, "granite import runs: need --out OUTDIR"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("granite %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr.String(), c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a usage error wrote --out")
	}
}

// TestImportCLI: scenarios become an artifacts file (replaced only with
// --force); a run folder becomes a results folder granite report reads,
// its condition's recorded metrics reproduced; a condition of an unknown
// scenario is a positioned error and writes nothing.
func TestImportCLI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	arts := filepath.Join(dir, "arts.jsonl")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "scenarios", refScenarios, "--out", arts}, 0, "imported 4 scenarios as 14 artifacts"},
		{[]string{"import", "scenarios", refScenarios, "--out", arts}, 1, "--force"},
		{[]string{"import", "scenarios", "--out", arts, "--force", refScenarios}, 0, "imported 4 scenarios"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String()+stderr.String(), c.want) {
			t.Errorf("granite %s: exit %d, stdout %q, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stdout.String(), stderr.String(), c.code, c.want)
		}
	}

	// One condition, its metrics worked by hand: the call is right, the
	// answer names the bed.
	runDir := filepath.Join(dir, "run")
	must(t, os.MkdirAll(filepath.Join(runDir, "traces"), 0o755))
	line := `{"condition": {"model": "wren", "domain": "greenhouse", "granularity": "composite_1", "scenario_id": "greenhouse-001", "fault_rate": 0.0, "repetition": 2, "seed": 7},` +
		` "metrics": {"tool_selection_precision": 1.0, "tool_selection_recall": 1.0, "tool_selection_f1": 1.0, "argument_accuracy": 1.0, "sequence_edit_distance": 0.0,` +
		` "sequence_kendall_tau": 0.0, "task_completion": 1.0, "error_recovery_rate": null, "token_efficiency": 30, "redundant_call_rate": 0.0},` +
		` "trace_summary": {"num_tool_calls": 1, "num_llm_turns": 2, "wall_time_seconds": 1.0, "timed_out": false, "total_tokens": 30, "started_at": null, "ended_at": null}, "error": null}` + "\n"
	must(t, os.WriteFile(filepath.Join(runDir, "results.jsonl"), []byte(line), 0o644))
	trace := `{"tool_calls": [{"tool_name": "greenhouse", "arguments": {"action": "read_probe", "bed": 3, "probe": "moisture"}, "timestamp": 0.1}],` +
		` "tool_responses": [{"tool_name": "greenhouse", "response": {"content": [{"type": "text", "text": "31%"}], "isError": false}, "is_error": false, "timestamp": 0.2}],` +
		` "final_answer": "Bed 3 is at 31%.", "total_tokens_in": 20, "total_tokens_out": 10, "wall_time_seconds": 1.0, "num_llm_turns": 2, "timed_out": false, "error": null}`
	must(t, os.WriteFile(filepath.Join(runDir, "traces", "wren__greenhouse__composite_1__greenhouse-001__fr0.0__rep2.json"), []byte(trace), 0o644))
	out := filepath.Join(dir, "imported")
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"import", "runs", runDir, "--scenarios", refScenarios, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("granite import runs: exit %d, stderr %q", code, stderr.String())
	}
	if want := "reproduced the recorded metrics of 1 of 1 traced conditions exactly"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q; want %q", stdout.String(), want)
	}
	stdout.Reset()
	if code := run(ctx, []string{"report", "--results", out, "--out", filepath.Join(dir, "report")}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "report on 1 of 1 planned trials") {
		t.Errorf("granite report of the import: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}

	// A condition of a scenario the folder does not hold.
	must(t, os.WriteFile(filepath.Join(runDir, "results.jsonl"), []byte(strings.Replace(line, "greenhouse-001", "greenhouse-404", 1)), 0o644))
	stderr.Reset()
	bad := filepath.Join(dir, "bad")
	code := run(ctx, []string{"import", "runs", runDir, "--scenarios", refScenarios, "--out", bad}, &stdout, &stderr)
	if want := "results.jsonl:1:1: $.condition.scenario_id: found scenario \"greenhouse-404\""; code != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "1 error") {
		t.Errorf("import of an unknown scenario: exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a failed import wrote its folder")
	}
}
