package reference

import (
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/scenarios"
)

// This file is what playing imported artifacts needs of the reference's
// conventions (granite run --artifacts with --mcp-cmd; the runner in
// package harness starts the servers): which artifacts are a scenario's
// level, the command of a level's server, and what a config may not say
// of them. Their trials' metrics.paper come from the artifact scoring
// every artifact trial shares (paper.Score leaves optional calls out).

// SourcePrefix begins the source of an imported artifact:
// reference:<domain>.
const SourcePrefix = "reference:"

// DomainOf is the domain of an imported artifact's source.
func DomainOf(source string) (string, bool) {
	domain, ok := strings.CutPrefix(source, SourcePrefix)
	return domain, ok && domain != ""
}

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
	const fields = "a command may name {{.Domain}}, {{.Level}} and {{.Granularity}}"
	t, err := template.New("command").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, fields)
	}
	var b strings.Builder
	if err := t.Execute(&b, CommandFields{Domain: "d", Level: string(level.L4), Granularity: paper.Granularity(level.L4)}); err != nil {
		return nil, fmt.Errorf("%w; %s", err, fields)
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
	domain, ok := DomainOf(a.Source)
	if !ok {
		return "", fmt.Errorf("artifact %s: source %q: expected %s<domain>, which fills the command's fields", a.ID, a.Source, SourcePrefix)
	}
	var b strings.Builder
	if err := c.tmpl.Execute(&b, CommandFields{Domain: domain, Level: string(lv), Granularity: paper.Granularity(lv)}); err != nil {
		return "", fmt.Errorf("artifact %s: %w", a.ID, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// LevelHint ends the error of an artifact of a reference scenario whose
// expected call names a tool its command does not list: what the command
// must be. "" for other artifacts.
func LevelHint(a *scenarios.Artifact) string {
	if a.Scenario == "" {
		return ""
	}
	return fmt.Sprintf("; expected the server of the artifact's level (%s): name it in --mcp-cmd with {{.Level}} or {{.Granularity}}", a.Level)
}

// CheckConfig reports whether a file's artifacts are levels' forms of
// reference scenarios, and refuses, before any server starts, what the
// config says that has no meaning for them: each plays on a fresh process
// of its level's own server, neither regrouped nor transformed. For other
// artifacts, a command that names fields is refused: nothing fills them.
func CheckConfig(path string, arts []scenarios.Artifact, cfg *results.Config) (bool, error) {
	levelled, err := levelsFile(path, arts)
	if err != nil || !levelled {
		if err == nil && cfg.ArtifactCmd != "" {
			tmpl, perr := ParseCommandTemplate(cfg.ArtifactCmd)
			switch {
			case perr != nil:
				err = fmt.Errorf("command %q: %w", cfg.ArtifactCmd, perr)
			case !tmpl.Plain():
				err = fmt.Errorf("%s: the command %q names fields, which only artifacts of reference scenarios (scenario and level set) fill; give a plain command", path, cfg.ArtifactCmd)
			}
		}
		return false, err
	}
	a := &arts[0] // names the kind in messages
	switch {
	case cfg.ArtifactCmd == "":
		err = fmt.Errorf("%s: artifact %s is scenario %s at %s, played on the reference's server for its level; give that server's command, e.g. --mcp-cmd 'python -m mcp_granite.mcp_servers.{{.Domain}}.{{.Granularity}}_server'", path, a.ID, a.Scenario, a.Level)
	case cfg.ArtifactURL != "":
		err = fmt.Errorf("%s: artifacts of reference scenarios are played on a fresh process of their level's server for every trial; give its command (--mcp-cmd), not a URL", path)
	case cfg.ArtifactTools != "":
		err = fmt.Errorf("%s: tools %s: artifacts of reference scenarios take each level's tools from its server (--mcp-cmd); leave the tools file out", path, cfg.ArtifactTools)
	case cfg.Groups != "":
		err = fmt.Errorf("%s: groups %s: artifacts of reference scenarios are not regrouped, each level's tools are its own server's; leave the groups out", path, cfg.Groups)
	case len(cfg.Faults) > 0:
		err = fmt.Errorf("%s: faults %s: artifacts of reference scenarios are played on their level's own server, which granite does not stand in front of to inject faults; leave the faults out, or play the scenarios as granite's own (a scenario run)", path, cfg.Faults[0].Name)
	case len(cfg.Interfaces) > 0:
		err = fmt.Errorf("%s: interfaces %s: artifacts of reference scenarios are played at their own levels, on each level's server; give levels (--levels L4,L1) to play only some", path, cfg.Interfaces[0].Name)
	}
	return err == nil, err
}

// levelsFile reports whether a file's artifacts are levels' forms of
// reference scenarios (scenario and level set); a file mixing them with
// other artifacts is refused, as the two are played differently. Each
// scenario appears at most once per level: the pair names its trials.
func levelsFile(path string, arts []scenarios.Artifact) (bool, error) {
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
