package harness

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/sandbox"
)

// BenchmarkCommandTrialOverhead measures granite's own cost per agent
// command trial: serving the trial on its loopback port, writing the
// client configuration, starting the process and tearing it all down,
// the agent's own time excluded (record.command.overhead_ms). The agent
// is true(1), with a Claude Code configuration written. Target: median
// under 50 ms. It runs once per isolation: in namespaces the start of
// granite's init counts as the agent's time, so ns/op (the whole trial)
// is the figure to compare between the two.
func BenchmarkCommandTrialOverhead(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.Namespaces, sandbox.None} {
		b.Run(string(mode), func(b *testing.B) {
			if ok, why := sandbox.Available(); mode == sandbox.Namespaces && !ok {
				b.Skip(why)
			}
			benchCommandTrial(b, mode)
		})
	}
}

func benchCommandTrial(b *testing.B, mode sandbox.Mode) {
	bin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1) on PATH")
	}
	spec := loadSpec(b)
	cfg := testConfig("overhead", "http://127.0.0.1:1")
	e := results.ModelEntry{Name: "true", Backend: agent.BackendCommand, Command: []string{bin, "{{.MCPConfig}}", "{{.Prompt}}"}, MCPConfig: results.MCPConfigClaude}
	cfg.Models = []results.ModelEntry{e}
	cfg.Domains, cfg.Granularities = []string{spec.Domains[0].Name}, []level.Level{level.L4}
	cfg.Scenarios = []string{spec.Domains[0].Scenarios[0].ID}
	grid, err := Plan(context.Background(), cfg, spec, gen.Lookup)
	if err != nil {
		b.Fatal(err)
	}
	t := grid[0]
	a := workerOf(b, &agent.Env{Config: cfg, Mode: mode}, e.Name)
	var overhead []float64
	for b.Loop() {
		sess, valid, err := t.open(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		rec := &results.Record{}
		a.Run(context.Background(), t.agentTrial(sess, valid, rec))
		sess.Close()
		// true(1) never connects: the record says so, and nothing else.
		if rec.Command == nil || rec.Command.ExitCode != 0 || rec.ErrorClass != results.ErrNotConnected || rec.Command.Isolation != string(mode) {
			b.Fatalf("trial: %+v, %s", rec.Command, rec.Error)
		}
		overhead = append(overhead, rec.Command.OverheadMS)
	}
	slices.Sort(overhead)
	b.ReportMetric(overhead[len(overhead)/2], "median-overhead-ms")
	b.ReportMetric(overhead[len(overhead)*9/10], "p90-overhead-ms")
}
