package reference

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Scenario is one scenario file of the reference implementation, with the
// gold of every level it has.
type Scenario struct {
	ID          string
	Domain      string
	Name        string
	Description string
	// Difficulty is easy, medium or hard.
	Difficulty string
	UserPrompt string
	Context    map[string]any
	// Gold holds the gold calls of each level the file has, under granite's
	// level (the file's primitive is L4 … composite_1 L1).
	Gold map[level.Level][]GoldCall
	// Contains are the strings the reference's task completion asks the
	// answer to hold (expected_output.contains); Values its
	// expected_output.values, which no metric of the reference reads.
	Contains []string
	Values   map[string]any
	// File is the file's path relative to the folder read, slash-separated.
	File string
}

// Levels lists the levels the scenario has gold for, finest first.
func (s *Scenario) Levels() []level.Level {
	var out []level.Level
	for _, lv := range level.Levels {
		if _, ok := s.Gold[lv]; ok {
			out = append(out, lv)
		}
	}
	return out
}

// GoldCall is one call of a level's gold.
type GoldCall struct {
	Tool      string
	Arguments map[string]any
	// Required is false for a call the reference's metrics leave out.
	Required bool
	// OrderFlexible is the file's order_flexible, which no metric of the
	// reference reads.
	OrderFlexible bool
}

// PaperGold is the gold the reference scores a trial of the scenario at
// lv against: its calls there and the strings its answer must hold.
func (s *Scenario) PaperGold(lv level.Level) *paper.Gold {
	g := &paper.Gold{Contains: s.Contains}
	for _, c := range s.Gold[lv] {
		g.Calls = append(g.Calls, paper.GoldCall{Tool: c.Tool, Arguments: c.Arguments, Optional: !c.Required})
	}
	return g
}

// file is a scenario file as it decodes, before defaults.
type file struct {
	ID          string         `json:"id"`
	Domain      string         `json:"domain"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Difficulty  string         `json:"difficulty"`
	UserPrompt  string         `json:"user_prompt"`
	Context     map[string]any `json:"context"`
	Gold        map[string][]struct {
		Tool          string         `json:"tool"`
		Arguments     map[string]any `json:"arguments"`
		Required      *bool          `json:"required"`
		OrderFlexible bool           `json:"order_flexible"`
	} `json:"gold_standard"`
	Expected struct {
		Contains []string       `json:"contains"`
		Values   map[string]any `json:"values"`
	} `json:"expected_output"`
}

//go:embed scenario.schema.json
var scenarioSchemaText string

var scenarioSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return schemacheck.Compile("granite:reference/scenario.schema.json", scenarioSchemaText)
})

// maxFiles bounds how many scenario files one folder may hold: the paper's
// benchmark has 81.
const maxFiles = 10_000

// ReadScenarios reads a folder of the reference's scenario files: laid out
// as the reference keeps them (<domain>/<name>.yaml, each domain folder
// the domain of its files), or the .yaml files of one folder. Domain
// folders and files are read in name order, as the reference reads them.
//
// Every problem of every file is reported at once, each positioned
// (file:line:col: $.path: found X; expected Y), and then no scenario is
// returned. Keys the reference does not know are ignored, as it ignores
// them. A file whose domain is not its folder's name is an error: the
// reference keys its conditions by the file's domain, so a moved file
// would be imported under a domain its folder does not say. Ids must be
// unique across files.
func ReadScenarios(dir string) ([]Scenario, error) {
	files, err := scenarioFiles(dir)
	if err != nil {
		return nil, err
	}
	sch, err := scenarioSchema()
	if err != nil {
		return nil, err
	}
	var out []Scenario
	var errs speclang.ErrorList
	first := map[string]string{} // scenario id -> the file that has it
	for _, rel := range files {
		name := filepath.Join(dir, filepath.FromSlash(rel))
		data, err := speclang.ReadYAMLFile(name)
		var list speclang.ErrorList
		if errors.As(err, &list) {
			errs = append(errs, list...)
			continue
		} else if err != nil {
			return nil, err
		}
		s, doc, ferrs := readScenario(name, rel, data, sch)
		errs = append(errs, ferrs...)
		if s == nil {
			continue
		}
		if prev, dup := first[s.ID]; dup {
			errs = append(errs, doc.Errorf([]any{"id"}, "found id %q again (first in %s); expected ids unique across the folder", s.ID, prev))
			continue
		}
		first[s.ID] = name
		out = append(out, *s)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// readScenario reads one file, and the document later errors about it
// are positioned in; rel is its path in the folder read. The scenario is
// nil when the file has errors.
func readScenario(name, rel string, data []byte, sch *jsonschema.Schema) (*Scenario, *speclang.Document, speclang.ErrorList) {
	doc, errs := speclang.ParseDocument(name, data, sch)
	for _, e := range errs {
		// The schema knows the four level keys; say them.
		if key, ok := strings.CutPrefix(e.Path, "$.gold_standard."); ok && strings.HasPrefix(e.Msg, "found unknown key") {
			e.Msg = fmt.Sprintf("found level key %q; expected one of primitive, composite_4, composite_2, composite_1", key)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	var f file
	if err := doc.Decode(&f); err != nil {
		return nil, nil, speclang.ErrorList{{Pos: speclang.Pos{File: name, Line: 1, Col: 1}, Msg: err.Error()}}
	}
	s := Scenario{ID: f.ID, Domain: f.Domain, Name: f.Name, Description: f.Description, Difficulty: f.Difficulty,
		UserPrompt: f.UserPrompt, Context: f.Context, Gold: map[level.Level][]GoldCall{},
		Contains: f.Expected.Contains, Values: f.Expected.Values, File: rel}
	if folder, _, nested := strings.Cut(rel, "/"); nested && folder != f.Domain {
		errs = append(errs, doc.Errorf([]any{"domain"}, "found domain %q in folder %s; expected the folder's name, %q (the reference keys conditions by the file's domain; move the file or fix its domain)", f.Domain, folder, folder))
	}
	for _, key := range slices.Sorted(maps.Keys(f.Gold)) {
		lv, _ := paper.LevelOf(key) // the schema allows the four keys alone
		calls := make([]GoldCall, len(f.Gold[key]))
		for i, c := range f.Gold[key] {
			calls[i] = GoldCall{Tool: c.Tool, Arguments: c.Arguments, Required: c.Required == nil || *c.Required, OrderFlexible: c.OrderFlexible}
			if calls[i].Arguments == nil {
				calls[i].Arguments = map[string]any{}
			}
		}
		s.Gold[lv] = calls
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return &s, doc, nil
}

// scenarioFiles lists the .yaml files of dir and of its folders, as paths
// relative to dir, folders and files in name order.
func scenarioFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read scenarios: %w", err)
	}
	var out []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("read scenarios: %w", err)
			}
			for _, f := range sub {
				if isYAML(f) {
					out = append(out, e.Name()+"/"+f.Name())
				}
			}
		case isYAML(e):
			out = append(out, e.Name())
		}
		if len(out) > maxFiles {
			return nil, fmt.Errorf("%s holds more than %d scenario files; expected a folder of the reference's scenarios (<domain>/<name>.yaml)", dir, maxFiles)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .yaml scenario files; expected the reference's scenarios folder (<domain>/<name>.yaml) or a folder of .yaml files", dir)
	}
	return out, nil
}

// isYAML says whether an entry is a scenario file: a .yaml file, as the
// reference reads (links to one included).
func isYAML(e fs.DirEntry) bool {
	return !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !strings.HasPrefix(e.Name(), ".")
}
