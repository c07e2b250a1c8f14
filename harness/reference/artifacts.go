package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/scenarios"
)

// Artifacts turns each scenario's gold at each level it has into one
// artifact, scenarios in the order given and levels finest first. The
// artifact's assertions are a tool_call blocker per required gold call,
// so that an artifact trial passes when it made every call the reference
// requires. A level without a required call has nothing to assert (an
// artifact needs an assertion) and is left out; skipped says which, and
// why.
func Artifacts(scens []Scenario) (arts []scenarios.Artifact, skipped []string) {
	for i := range scens {
		s := &scens[i]
		for _, lv := range s.Levels() {
			a, ok := artifact(s, lv)
			if !ok {
				skipped = append(skipped, fmt.Sprintf("%s at %s (%s): its gold has no required call, and an artifact needs one to assert", s.ID, lv, paper.Granularity(lv)))
				continue
			}
			arts = append(arts, a)
		}
	}
	return arts, skipped
}

// artifact is one scenario's form at one level; false when the level has
// no required call.
func artifact(s *Scenario, lv level.Level) (scenarios.Artifact, bool) {
	gran := paper.Granularity(lv)
	tier := "complex"
	if s.Difficulty == "easy" {
		tier = "simple"
	}
	a := scenarios.Artifact{
		Version: scenarios.ArtifactVersion, ID: ArtifactID(s.ID, lv), Source: SourcePrefix + s.Domain, Tier: tier, Title: s.Name,
		Scenario: s.ID, Level: string(lv), Difficulty: s.Difficulty, Contains: s.Contains,
		Turns:         []scenarios.Turn{{Prompt: s.UserPrompt}},
		ExpectedCalls: []scenarios.ExpectedCall{},
		// No outputs were recorded: a live server of the level answers,
		// nothing is replayed.
		MockOutputs: []scenarios.MockOutput{},
		Provenance:  scenarios.Provenance{Backend: "import", Stage: s.File},
	}
	calls := s.Gold[lv]
	for i, c := range calls {
		args := argumentsJSON(c.Arguments)
		a.ExpectedCalls = append(a.ExpectedCalls, scenarios.ExpectedCall{Tool: c.Tool, Arguments: args, Optional: !c.Required,
			Reason: fmt.Sprintf("gold call %d of %d of the reference's %s", i+1, len(calls), gran)})
		if c.Required {
			a.Assertions = append(a.Assertions, scenarios.Assertion{Kind: "tool_call", Tool: c.Tool, Arguments: args, Severity: "blocker",
				Note: fmt.Sprintf("the reference's %s gold requires this call (gold call %d)", gran, i+1)})
		}
	}
	return a, len(a.Assertions) > 0
}

// ArtifactID names the artifact of a scenario at a level:
// smarthome-004@L4.
func ArtifactID(scenario string, lv level.Level) string { return scenario + "@" + string(lv) }

// argumentsJSON is a gold call's arguments as a JSON object; {} for none.
func argumentsJSON(args map[string]any) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(args)
	if err != nil { // YAML values always marshal; say so if one did not
		panic(fmt.Sprintf("reference: gold arguments do not marshal: %v", err))
	}
	return b
}

// WriteArtifactsFile writes the artifacts to path, one a line, as
// scenarios.WriteArtifacts writes them: into a new file beside path,
// synced and renamed over it, so that a failed write leaves nothing half
// written (results.WriteFile). An existing path is replaced only with force.
func WriteArtifactsFile(path string, arts []scenarios.Artifact, force bool) error {
	if _, err := os.Lstat(path); err == nil && !force {
		return fmt.Errorf("%s exists; choose another --out, or pass --force to replace it", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var buf bytes.Buffer
	if err := scenarios.WriteArtifacts(&buf, arts); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return results.WriteFile(dir, filepath.Base(path), buf.Bytes())
}
