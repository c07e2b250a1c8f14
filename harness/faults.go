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
// seed. A setting of no faults opens the task as a run without faults
// does.
func (t Trial) openUnder(ctx context.Context, seed int) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	if t.Faults.None() {
		return t.open(ctx)
	}
	st, ok := t.Task.(*scenarioTask)
	if !ok {
		// The config loader refuses faults beside artifacts.
		return nil, nil, fmt.Errorf("fault setting %s on a trial of no generated domain", t.Faults.Name)
	}
	sched := &faults.Schedule{Setting: t.Faults, Seed: seed, Scenario: st.scenario.ID, Repetition: t.Repetition}
	s, err := serve.Open(ctx, st.dom, st.iface, serve.WithFaults(sched))
	return s, st.validators(), err
}
