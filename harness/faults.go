package harness

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/serve"
)

// openUnder opens the trial's server on a fresh store, injecting the
// faults its setting draws for it (see package faults) under the run's
// seed: where a generated domain's server runs a call, or at a regrouped
// server's relay to its source (serve.FaultCaller). A setting of no
// faults opens the task as a run without faults does.
func (t Trial) openUnder(ctx context.Context, seed int) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	if t.Faults.None() {
		return t.open(ctx)
	}
	switch task := t.Task.(type) {
	case *scenarioTask:
		sched := &faults.Schedule{Setting: t.Faults, Seed: seed, Scenario: task.scenario.ID, Repetition: t.Repetition}
		s, err := serve.Open(ctx, task.dom, task.iface, serve.WithFaults(sched))
		return s, task.validators(), err
	case *groupedTask:
		// Injected at the relay to the source: the artifact stands for the
		// scenario in the schedule's key.
		return task.openWith(ctx, &faults.Schedule{Setting: t.Faults, Seed: seed, Scenario: task.art.ID, Repetition: t.Repetition})
	}
	// The config loader refuses faults beside artifacts played as
	// published.
	return nil, nil, fmt.Errorf("fault setting %s on a trial of no generated domain or regrouped server", t.Faults.Name)
}
