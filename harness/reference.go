package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// An artifact that is one level's form of a scenario of the paper's
// reference implementation (granite import scenarios: scenario and level
// set) is played at its level on that level's own server, a live command
// expanded from a template per artifact, as the reference runs its
// per-level servers: the trial is the scenario's at the level, not
// regrouped. The reference's servers keep their state in memory, so the
// command is started afresh for every trial.

// referenceSourcePrefix begins the source of an imported artifact,
// reference:<domain>.
const referenceSourcePrefix = "reference:"

// commandSource begins the key of a tool set listed by a live command.
const commandSource = "mcp:"

// CommandFields are what a --mcp-cmd template may name, filled for each
// artifact of a reference scenario.
type CommandFields struct {
	// Domain is the reference's domain, from the source
	// reference:<domain>.
	Domain string
	// Level is the granite level, L4 … L1; Granularity the reference's
	// key of it: primitive, composite_4, composite_2, composite_1.
	Level       string
	Granularity string
}

// CommandTemplate is a live server command that may name CommandFields,
// like python -m mcp_granite.mcp_servers.{{.Domain}}.{{.Granularity}}_server.
type CommandTemplate struct {
	text string
	tmpl *template.Template
}

// ParseCommandTemplate reads a command template (text/template). A field
// CommandFields does not have is refused here, before any trial: the
// template is run once on sample fields.
func ParseCommandTemplate(text string) (*CommandTemplate, error) {
	t, err := template.New("command").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w; a command may name {{.Domain}}, {{.Level}} and {{.Granularity}}", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, CommandFields{Domain: "d", Level: string(level.L4), Granularity: paper.Granularity(level.L4)}); err != nil {
		return nil, fmt.Errorf("%w; a command may name {{.Domain}}, {{.Level}} and {{.Granularity}}", err)
	}
	return &CommandTemplate{text: text, tmpl: t}, nil
}

// Plain reports whether the command names no field: it is the same for
// every artifact.
func (c *CommandTemplate) Plain() bool {
	for _, n := range c.tmpl.Tree.Root.Nodes {
		if n.Type() != parse.NodeText {
			return false
		}
	}
	return true
}

// Expand is the command for one artifact of a reference scenario.
func (c *CommandTemplate) Expand(a *scenarios.Artifact) (string, error) {
	if c.Plain() {
		return c.text, nil
	}
	lv, err := level.Parse(a.Level)
	if err != nil {
		return "", fmt.Errorf("artifact %s: %w", a.ID, err)
	}
	domain, ok := strings.CutPrefix(a.Source, referenceSourcePrefix)
	if !ok || domain == "" {
		return "", fmt.Errorf("artifact %s: source %q: expected %s<domain>, which fills the command's fields", a.ID, a.Source, referenceSourcePrefix)
	}
	var b strings.Builder
	if err := c.tmpl.Execute(&b, CommandFields{Domain: domain, Level: string(lv), Granularity: paper.Granularity(lv)}); err != nil {
		return "", fmt.Errorf("artifact %s: %w", a.ID, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// levelledFile reports whether a file's artifacts are levels' forms of
// reference scenarios; a file mixing them with other artifacts is
// refused, as the two are played differently. Each scenario appears at
// most once per level: the pair names its trials.
func levelledFile(path string, arts []scenarios.Artifact) (bool, error) {
	n := 0
	seen := map[string]string{}
	for _, a := range arts {
		if a.Scenario == "" {
			continue
		}
		n++
		key := a.Scenario + "@" + a.Level
		if prev, dup := seen[key]; dup {
			return false, fmt.Errorf("%s: artifacts %s and %s are both scenario %s at %s; expected one artifact per scenario and level", path, prev, a.ID, a.Scenario, a.Level)
		}
		seen[key] = a.ID
	}
	if n > 0 && n < len(arts) {
		return false, fmt.Errorf("%s: %d of %d artifacts are levels of reference scenarios (scenario and level set), the others are not; expected one kind per file, as they are played differently", path, n, len(arts))
	}
	return n > 0, nil
}

// referenceConfig refuses what a config may say of other artifacts that
// has no meaning for reference scenarios' levels, before any server
// starts: each plays on a fresh process of its level's own server,
// neither regrouped nor transformed.
func referenceConfig(s *ArtifactSet, cfg *results.Config) error {
	a := &s.Artifacts[0]
	switch {
	case cfg.ArtifactCmd == "":
		return fmt.Errorf("%s: artifact %s is scenario %s at %s, played on the reference's server for its level; give that server's command, e.g. --mcp-cmd 'python -m mcp_granite.mcp_servers.{{.Domain}}.{{.Granularity}}_server'", s.Path, a.ID, a.Scenario, a.Level)
	case cfg.ArtifactURL != "":
		return fmt.Errorf("%s: artifacts of reference scenarios are played on a fresh process of their level's server for every trial; give its command (--mcp-cmd), not a URL", s.Path)
	case cfg.ArtifactTools != "":
		return fmt.Errorf("%s: tools %s: artifacts of reference scenarios take each level's tools from its server (--mcp-cmd); leave the tools file out", s.Path, cfg.ArtifactTools)
	case cfg.Groups != "":
		return fmt.Errorf("%s: groups %s: artifacts of reference scenarios are not regrouped, each level's tools are its own server's; leave the groups out", s.Path, cfg.Groups)
	case len(cfg.Interfaces) > 0:
		return fmt.Errorf("%s: interfaces %s: artifacts of reference scenarios are played at their own levels, on each level's server; give levels (--levels L4,L1) to play only some", s.Path, cfg.Interfaces[0].Name)
	}
	return nil
}

// listLevels keeps the artifacts at levels (all when empty), expands the
// command for each and lists the tools of each distinct command once: a
// level not played needs no server.
func (s *ArtifactSet) listLevels(ctx context.Context, cmd string, levels []level.Level) error {
	tmpl, err := ParseCommandTemplate(cmd)
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
		tools, err := listIn(ctx, expanded)
		if err != nil {
			return fmt.Errorf("%s: artifact %s: list the tools of %s: %w; expected an MCP server speaking stdio: run the command by hand to see why it did not answer", s.Path, a.ID, expanded, err)
		}
		if s.sources[key], err = newToolSet(tools, system{}); err != nil {
			return fmt.Errorf("%s: tools of %s: %w", s.Path, expanded, err)
		}
	}
	return nil
}

// listIn lists a command's tools as a trial will find them: started in
// an empty folder of its own, so that a server that needs granite's
// folder (python -m from a checkout) fails here, before any trial.
func listIn(ctx context.Context, cmd string) ([]toolsrc.Tool, error) {
	c, closeUp, err := startLive(ctx, cmd, "")
	if err != nil {
		return nil, err
	}
	defer closeUp()
	tools, err := toolsrc.ListTools(ctx, c)
	if err != nil {
		return nil, err
	}
	return tools, toolsrc.CheckDuplicates("tools/list of "+cmd, tools)
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
	if domain, ok := strings.CutPrefix(t.art.Source, referenceSourcePrefix); ok && domain != "" {
		rec.Domain = domain
	}
}

// open starts the level's server afresh, in a folder of its own, behind a
// proxy listing the tools read at load, each call forwarded unchanged.
func (t *referenceTask) open(ctx context.Context) (*serve.Session, map[string]func(json.RawMessage) bool, error) {
	ts := t.set.sources[t.set.sourceOf(t.art)]
	cmd := t.set.commands[t.art.ID]
	up, closeUp, err := startLive(ctx, cmd, "")
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

// score judges the assertions and call metrics as for any artifact, and
// adds the reference's own metrics.
func (t *referenceTask) score(rec *results.Record, sess *serve.Session) (*results.Metrics, error) {
	m, err := t.artifactTask.score(rec, sess)
	if err != nil {
		return nil, err
	}
	m.Paper = paperMetrics(rec, t.art)
	return m, nil
}

// paperMetrics are the reference's metrics of a trial, against the
// artifact's expected calls (optional ones kept, as its gold keeps them)
// and the strings its answer must contain.
func paperMetrics(rec *results.Record, a *scenarios.Artifact) *results.PaperMetrics {
	g := &paper.Gold{Contains: a.Contains}
	for _, c := range a.ExpectedCalls {
		gc := paper.GoldCall{Tool: c.Tool, Optional: c.Optional}
		_ = json.Unmarshal(c.Arguments, &gc.Arguments) // an object: the schema holds it to one
		g.Calls = append(g.Calls, gc)
	}
	return paper.Score(paper.FromRecord(rec), g)
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
