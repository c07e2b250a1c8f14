package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/specs"
)

// ArtifactVersion is the version of the artifact format
// (specs/artifact.schema.json).
const ArtifactVersion = 1

// Artifact is one synthesized scenario (specs/artifact.schema.json).
type Artifact struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Source  string `json:"source"`
	Tier    string `json:"tier"`
	// Title, Novelty (why the scenario is a new composition) and
	// FollowUp (a natural next question) are the scenario stage's, for
	// people reading artifacts; optional.
	Title    string `json:"title,omitempty"`
	Novelty  string `json:"novelty,omitempty"`
	FollowUp string `json:"follow_up,omitempty"`
	// Scenario, Level and Difficulty are set on an artifact that is one
	// level's form of a scenario of the paper's reference implementation
	// (granite import scenarios): its id, the granite level of its gold
	// (primitive is L4 … composite_1 L1) and its easy, medium or hard.
	// Such an artifact is played at that level on its level's server, and
	// its trials are the scenario's at the level. Contains are the strings
	// the reference's completion asks the answer to hold.
	Scenario      string         `json:"scenario,omitempty"`
	Level         string         `json:"level,omitempty"`
	Difficulty    string         `json:"difficulty,omitempty"`
	Contains      []string       `json:"contains,omitempty"`
	Turns         []Turn         `json:"turns"`
	ExpectedCalls []ExpectedCall `json:"expected_calls"`
	MockOutputs   []MockOutput   `json:"mock_outputs"`
	Assertions    []Assertion    `json:"assertions"`
	Provenance    Provenance     `json:"provenance"`
}

// Turn is one user prompt, and the expected calls (by index) that answer
// it when the scenario was split into turns.
type Turn struct {
	Prompt string `json:"prompt"`
	Calls  []int  `json:"calls,omitempty"`
}

// ExpectedCall is a held-out oracle call.
type ExpectedCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	// Optional is a call the reference's gold marks required: false,
	// which its metrics leave out.
	Optional bool `json:"optional,omitempty"`
}

// MockOutput is the output of an expected call.
type MockOutput struct {
	Call    int    `json:"call"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
	// Grounding is executed (run against a real store), or high, medium
	// or low by the reference material available.
	Grounding string `json:"grounding"`
}

// Assertion is a structured check of an agent's behaviour.
type Assertion struct {
	// Kind is tool_call (the call must be made), not_call (it must not be
	// made as given: the agent should refuse or repair it) or
	// output_schema (the result must fit the tool's output schema).
	Kind      string          `json:"kind"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Severity  string          `json:"severity"` // blocker or warning
	Note      string          `json:"note"`
	// Probes names the constraint a not_call breaks (enum, pattern,
	// format, minimum, maxLength, required, additionalProperties, ...).
	Probes string `json:"probes,omitempty"`
}

// Provenance says how an artifact was made.
type Provenance struct {
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	Stage   string `json:"stage"`
	Retries int    `json:"retries"`
}

// ArtifactSchemaFile describes one line of an artifacts file.
const ArtifactSchemaFile = "artifact.schema.json"

// maxErrors is how many broken lines ReadArtifacts reports before it
// stops reading a file that is likely not an artifacts file at all.
const maxErrors = 20

var artifactSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	data, err := fs.ReadFile(specs.FS, ArtifactSchemaFile)
	if err != nil {
		return nil, err
	}
	return schemacheck.Compile("granite:"+ArtifactSchemaFile, string(data))
})

// WriteArtifacts writes one artifact per line.
func WriteArtifacts(w io.Writer, arts []Artifact) error {
	enc := json.NewEncoder(w)
	for _, a := range arts {
		if err := enc.Encode(a); err != nil {
			return err
		}
	}
	return nil
}

// ReadArtifacts reads an artifacts file, validating every line against
// specs/artifact.schema.json. Every problem is reported at once, each as
// file:line:col: $.path: what was found and expected; ids must be unique
// and each mock output must belong to an expected call.
func ReadArtifacts(path string) ([]Artifact, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sch, err := artifactSchema()
	if err != nil {
		return nil, err
	}
	var out []Artifact
	var errs speclang.ErrorList
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if text[0] != '{' || !json.Valid(text) {
			errs = append(errs, &speclang.Error{Pos: speclang.Pos{File: path, Line: line, Col: 1}, Msg: "found a line that is not a JSON object; expected one artifact per line"})
			if len(errs) == maxErrors {
				errs = append(errs, &speclang.Error{Pos: speclang.Pos{File: path, Line: line, Col: 1}, Msg: "stopped after this many errors; is this a file granite synth --out wrote?"})
				break
			}
			continue
		}
		doc, lerrs := speclang.ParseDocument(path, text, sch)
		for _, e := range lerrs {
			e.Pos.Line = line
			errs = append(errs, e)
		}
		if len(lerrs) > 0 {
			continue
		}
		var a Artifact
		if err := doc.Decode(&a); err != nil {
			errs = append(errs, &speclang.Error{Pos: speclang.Pos{File: path, Line: line, Col: 1}, Msg: err.Error()})
			continue
		}
		at := func(path []any, format string, args ...any) {
			e := doc.Errorf(path, format, args...)
			e.Pos.Line = line
			errs = append(errs, e)
		}
		if prev, dup := seen[a.ID]; dup {
			at([]any{"id"}, "found id %q again (first on line %d); expected ids unique in the file", a.ID, prev)
		}
		seen[a.ID] = line
		if why := turnCalls(a); why != "" {
			at([]any{"turns"}, "%s", why)
		}
		for i, m := range a.MockOutputs {
			if m.Call >= len(a.ExpectedCalls) {
				at([]any{"mock_outputs", i, "call"}, "found call %d; expected the index of one of the %d expected calls", m.Call, len(a.ExpectedCalls))
			}
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no artifacts; expected one JSON object per line, as granite synth --out writes", path)
	}
	return out, nil
}

// turnCalls checks that turns that list calls list every expected call
// once, in order; "" when they do, or when no turn lists calls.
func turnCalls(a Artifact) string {
	listed, next := false, 0
	for ti, t := range a.Turns {
		for _, c := range t.Calls {
			listed = true
			if c != next {
				return fmt.Sprintf("found turn %d listing call %d where call %d comes next; expected every expected call once, in order", ti, c, next)
			}
			next++
		}
	}
	if listed && next != len(a.ExpectedCalls) {
		return fmt.Sprintf("found turns listing %d of %d expected calls; expected all of them", next, len(a.ExpectedCalls))
	}
	return ""
}

// ToolsFile is where granite synth keeps the tools an artifacts file was
// made from (a tools/list result), so that the artifacts can be judged and
// replayed without the server that listed them.
func ToolsFile(artifacts string) string {
	return strings.TrimSuffix(artifacts, ".jsonl") + ".tools.json"
}

// WriteArtifactsFile writes the artifacts to path, one a line, creating
// missing folders, and beside it (ToolsFile) the tools they were made
// from, so that granite judge and granite run --artifacts need no server.
func WriteArtifactsFile(path string, tools []Tool, arts []Artifact) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteArtifacts(f, arts); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return toolsrc.WriteTools(ToolsFile(path), Sources(tools))
}

// DomainSource reads an artifact source of the form domain:<name>/<level>,
// which granite synth gives artifacts of a generated domain.
func DomainSource(source string) (domain string, lv level.Level, ok bool) {
	rest, ok := strings.CutPrefix(source, "domain:")
	name, at, ok2 := strings.Cut(rest, "/")
	l, err := level.Parse(at)
	if !ok || !ok2 || err != nil || name == "" {
		return "", "", false
	}
	return name, l, true
}

// notIDChars are what an artifact id leaves out of its source and model.
var notIDChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// artifactID names the n-th artifact written from a source by a backend
// (offline, or a model): letters, digits, _ and -, so that a trial id
// built on it (<model>/<artifact>/r1) carries no command line, with its
// spaces, @ and slashes, when the tools came from mcp:npx -y @scope/server.
func artifactID(source, backend string, n int) string {
	slug := func(s string) string { return strings.Trim(notIDChars.ReplaceAllString(s, "-"), "-") }
	return fmt.Sprintf("%s-%s-%04d", slug(source), slug(backend), n)
}
