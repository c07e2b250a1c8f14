package view_test

import (
	"context"
	"html"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/view"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// TestAgentNotConnectedShows runs an agent command whose configuration is
// wrong (a script that answers without ever reaching its server): its
// record, the report's error classes and the trial page all say it never
// connected, rather than showing an agent that chose to call nothing.
func TestAgentNotConnectedShows(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := config("view-unconnected", "")
	cfg.Models = []results.ModelEntry{{Name: "misconfigured", Backend: agent.BackendCommand,
		Command: []string{sh, "-c", "echo 'All done, nothing needed changing.'"}}}
	cfg.Domains, cfg.Granularities = []string{spec.Domains[0].Name}, []level.Level{level.L4}
	cfg.Scenarios = []string{spec.Domains[0].Scenarios[0].ID}
	if _, err := harness.Run(context.Background(), cfg, spec, harness.Options{Out: out, Lookup: gen.Lookup, Isolation: agent.IsolationNone}); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, out)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	rec := recs[0]
	if rec.ErrorClass != results.ErrNotConnected || rec.StopReason != results.StopError || rec.Command == nil ||
		rec.Command.Connection == nil || *rec.Command.Connection != (results.Connection{}) {
		t.Fatalf("class %q, stop %s, command %+v; want agent_not_connected with nothing reaching the server", rec.ErrorClass, rec.StopReason, rec.Command)
	}

	res, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	errs := report.Build(res, 0).Table("errors")
	if errs == nil || len(errs.Rows) != 1 || errs.Rows[0][1] != string(results.ErrNotConnected) || errs.Rows[0][2] != 1 {
		t.Errorf("report errors table %+v; want one agent_not_connected trial", errs)
	}

	srv := serveView(t, view.Options{}, out)
	page := html.UnescapeString(mustGet(t, srv, "/trial?run=0&id="+url.QueryEscape(rec.TrialID)))
	for _, w := range []string{"error class <b>agent_not_connected</b>", "the agent never connected to its trial's server",
		"sessions opened <b>0</b> · tools listed <b>0</b>", "it never read its tools"} {
		if !strings.Contains(page, w) {
			t.Errorf("trial page lacks %q", w)
		}
	}
	trials := mustGet(t, srv, "/trials?run=0&error_class=agent_not_connected")
	if !strings.Contains(trials, rec.TrialID) {
		t.Errorf("the trials page filtered by agent_not_connected lacks %s", rec.TrialID)
	}
}
