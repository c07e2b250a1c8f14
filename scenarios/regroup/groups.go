package regroup

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/specs"
)

// GroupsSchemaFile validates groups files.
const GroupsSchemaFile = "groups.schema.json"

// Groups say which source tools share a coarse tool at L3, L2 and L1
// (specs/groups.schema.json). A level without groups is derived.
type Groups struct {
	Server string  `json:"server"`
	L3     []Group `json:"L3,omitempty"`
	L2     []Group `json:"L2,omitempty"`
	L1     []Group `json:"L1,omitempty"`
}

// Group is one coarse tool: its name, what it is for, and the source
// tools it stands for, in the order its action lists them.
type Group struct {
	Name        string   `json:"name"`
	Category    string   `json:"category,omitempty"`
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools"`
}

// Level returns a level's groups.
func (g *Groups) Level(lv level.Level) []Group {
	switch lv {
	case level.L3:
		return g.L3
	case level.L2:
		return g.L2
	case level.L1:
		return g.L1
	}
	return nil
}

func (g *Groups) set(lv level.Level, gs []Group) {
	switch lv {
	case level.L3:
		g.L3 = gs
	case level.L2:
		g.L2 = gs
	case level.L1:
		g.L1 = gs
	}
}

// problem is one thing wrong with groups, at a path into the file (keys
// as strings, list indexes as ints).
type problem struct {
	path []any
	msg  string
}

// problems checks that, at every level, each of the server's tools is in
// exactly one group, no group names a tool the server does not list, and
// no two groups share a name.
func (g *Groups) problems(tools []toolsrc.Tool) []problem {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	var out []problem
	for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
		groups := g.Level(lv)
		if groups == nil {
			continue
		}
		owner := map[string]int{}
		seen := map[string]bool{}
		for i, grp := range groups {
			if seen[grp.Name] {
				out = append(out, problem{[]any{string(lv), i, "name"}, fmt.Sprintf("found group %q a second time at %s; expected unique tool names per level", grp.Name, lv)})
			}
			seen[grp.Name] = true
			for j, t := range grp.Tools {
				at := []any{string(lv), i, "tools", j}
				switch prev, twice := owner[t]; {
				case !slices.Contains(names, t):
					out = append(out, problem{at, fmt.Sprintf("found tool %q, which the server does not list; expected one of %s", t, oneline.Escape(strings.Join(names, ", ")))})
				case twice && prev == i:
					out = append(out, problem{at, fmt.Sprintf("found tool %q twice in group %q; expected each tool once", t, grp.Name)})
				case twice:
					out = append(out, problem{at, fmt.Sprintf("found tool %q in groups %q and %q at %s; expected each tool in one group per level", t, groups[prev].Name, grp.Name, lv)})
				default:
					owner[t] = i
				}
			}
		}
		var left []string
		for _, n := range names {
			if _, ok := owner[n]; !ok {
				left = append(left, n)
			}
		}
		if len(left) > 0 {
			what := fmt.Sprintf("tool %q is", left[0])
			if len(left) > 1 {
				what = fmt.Sprintf("tools %s are", strings.Join(quoteAll(left), ", "))
			}
			out = append(out, problem{[]any{string(lv)}, fmt.Sprintf("%s in no group at %s; expected every tool of the server in one group per level", what, lv)})
		}
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Check reports the first problems of groups that came from no file (a
// derivation, a model's proposal), one per line.
func (g *Groups) Check(tools []toolsrc.Tool) error {
	ps := g.problems(tools)
	if len(ps) == 0 {
		return nil
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, fmt.Sprintf("%s: %s", pathText(p.path), p.msg))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

func pathText(path []any) string {
	s := "$"
	for _, p := range path {
		switch k := p.(type) {
		case int:
			s += fmt.Sprintf("[%d]", k)
		default:
			s += fmt.Sprintf(".%v", k)
		}
	}
	return s
}

var groupsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	data, err := fs.ReadFile(specs.FS, GroupsSchemaFile)
	if err != nil {
		return nil, err
	}
	return schemacheck.Compile("granite:"+GroupsSchemaFile, string(data))
})

// LoadGroups reads a groups file for a server's tools and fills the
// levels it leaves out by Derive. Every error is returned at once, each
// as file:line:col: $.path: what was found and what was expected.
func LoadGroups(path string, tools []toolsrc.Tool) (*Groups, error) {
	data, err := speclang.ReadYAMLFile(path)
	if err != nil {
		return nil, err
	}
	return ParseGroups(path, data, tools)
}

// ParseGroups is LoadGroups on a file's bytes.
func ParseGroups(file string, data []byte, tools []toolsrc.Tool) (*Groups, error) {
	sch, err := groupsSchema()
	if err != nil {
		return nil, err
	}
	doc, errs := speclang.ParseDocument(file, data, sch)
	if len(errs) > 0 {
		return nil, errs
	}
	g := &Groups{}
	if err := doc.Decode(g); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var list speclang.ErrorList
	for _, p := range g.problems(tools) {
		list = append(list, doc.Errorf(p.path, "%s", p.msg))
	}
	if len(list) > 0 {
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i].Pos, list[j].Pos
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		})
		return nil, list
	}
	d := Derive(g.Server, tools)
	for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
		if g.Level(lv) == nil {
			g.set(lv, d.Level(lv))
		}
	}
	return g, nil
}

// YAML writes the groups as a groups file to edit, with a header saying
// what it is; notes become comments above the levels. Names and
// descriptions come from a server, and the writer quotes whatever of
// them YAML would read otherwise (speclang.MarshalYAML), so that the file
// reads back (LoadGroups) as the same groups.
func (g *Groups) YAML(header []string) ([]byte, error) {
	body, err := speclang.MarshalYAML(g, yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, h := range header {
		b.WriteString("# " + oneline.Escape(h) + "\n")
	}
	b.Write(body)
	return []byte(b.String()), nil
}
