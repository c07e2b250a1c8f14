package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpgranite/granite/harness/reference"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// commandSource begins the key of a tool set listed by a live command.
const commandSource = "mcp:"

// An artifact that is one level's form of a scenario of the paper's
// reference implementation (granite import scenarios: scenario and level
// set) is played at its level on that level's own server, a live command
// expanded from a template per artifact, as the reference runs its
// per-level servers: the trial is the scenario's at the level, not
// regrouped. The reference's servers keep their state in memory, so the
// command is started afresh for every trial.

// listLevels keeps the artifacts at levels (all when empty), expands the
// command for each and lists the tools of each distinct command once: a
// level not played needs no server.
func (s *ArtifactSet) listLevels(ctx context.Context, cmd string, levels []level.Level) error {
	tmpl, err := reference.ParseCommandTemplate(cmd)
	if err != nil {
		return fmt.Errorf("command %q: %w", cmd, err)
	}
	if len(levels) > 0 {
		s.Artifacts = slices.DeleteFunc(s.Artifacts, func(a scenarios.Artifact) bool {
			lv, err := level.Parse(a.Level)
			return err == nil && !slices.Contains(levels, lv)
		})
		if len(s.Artifacts) == 0 {
			return fmt.Errorf("%s: no artifact is at the levels asked for (%v)", s.Path, levels)
		}
	}
	s.commands = map[string]string{}
	for i := range s.Artifacts {
		a := &s.Artifacts[i]
		expanded, err := tmpl.Expand(a)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		s.commands[a.ID] = expanded
		key := commandSource + expanded
		if s.sources[key] != nil {
			continue
		}
		tools, err := toolsrc.FromMCPAfresh(ctx, expanded)
		if err != nil {
			return fmt.Errorf("%s: artifact %s: list the tools of %s: %w; expected an MCP server speaking stdio: run the command by hand to see why it did not answer", s.Path, a.ID, expanded, err)
		}
		if s.sources[key], err = newToolSet(tools, system{}); err != nil {
			return fmt.Errorf("%s: tools of %s: %w", s.Path, expanded, err)
		}
	}
	return nil
}

// referenceTask is one level's form of a reference scenario, played at
// its level on a fresh process of its level's server.
type referenceTask struct {
	artifactTask
	lv level.Level
}

// identify makes the record the scenario's trial at its level, of the
// reference's domain, as granite import runs records the reference's own
// trials of it.
func (t *referenceTask) identify(rec *results.Record) {
	t.artifactTask.identify(rec)
	rec.Level, rec.Scenario, rec.Difficulty = t.lv, t.art.Scenario, t.art.Difficulty
	if domain, ok := reference.DomainOf(t.art.Source); ok {
		rec.Domain = domain
	}
}

// open starts the level's server afresh, in a folder of its own, behind a
// proxy listing the tools read at load, each call forwarded unchanged.
func (t *referenceTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	ts := t.set.sources[t.set.sourceOf(t.art)]
	cmd := t.set.commands[t.art.ID]
	up, closeUp, err := toolsrc.ConnectAfresh(ctx, cmd, "")
	if err != nil {
		return nil, nil, fmt.Errorf("live source %s: %w", cmd, err)
	}
	p := &serve.Proxy{Name: "granite-reference"}
	valid := map[string]func(json.RawMessage) bool{}
	for i := range ts.tools {
		p.Tools = append(p.Tools, ts.tools[i].MCP())
		valid[ts.tools[i].Name] = ts.tools[i].Valid
	}
	s, err := serve.Connect(ctx, p.NewServer(up), "reference "+t.art.ID)
	if err != nil {
		closeUp()
		return nil, nil, err
	}
	s.OnClose(closeUp)
	return s, valid, nil
}

// toolsKey is the source at the level: every artifact of it lists the
// same command's tools.
func (t *referenceTask) toolsKey() string { return results.InterfaceKey(t.art.Source, string(t.lv)) }

// goldCalls are the required expected calls: an optional one is the
// reference's gold's own, which its metrics and granite's leave out.
func (t *referenceTask) goldCalls() []results.MessageCall {
	var out []results.MessageCall
	for _, c := range t.art.ExpectedCalls {
		if !c.Optional {
			out = append(out, results.MessageCall{Name: c.Tool, Arguments: c.Arguments})
		}
	}
	return out
}

// planReference plans model, artifact, repetition for a file of
// reference scenarios' levels (those at the config's levels, as
// LoadArtifacts kept them), with the ids of the scenario's trials at the
// level, <model>/<scenario>/<level>/r<n>.
func planReference(cfg *results.Config, set *ArtifactSet) ([]Trial, error) {
	// One task per artifact, shared by every model's trials.
	tasks := make([]*referenceTask, len(set.Artifacts))
	for i := range set.Artifacts {
		a := &set.Artifacts[i]
		lv, err := level.Parse(a.Level)
		if err != nil {
			return nil, fmt.Errorf("%s: artifact %s: %w", set.Path, a.ID, err)
		}
		tasks[i] = &referenceTask{artifactTask: artifactTask{art: a, set: set, level: lv}, lv: lv}
	}
	var out []Trial
	for _, model := range cfg.ModelNames() {
		for _, task := range tasks {
			for rep := 1; rep <= cfg.Repetitions; rep++ {
				out = append(out, Trial{Index: len(out), ID: results.TrialID(model, task.art.Scenario, string(task.lv), rep), Model: model, Repetition: rep, Task: task})
			}
		}
	}
	return out, nil
}
