package regroup

import (
	"encoding/json"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// SurfaceTools are a level's tools as package surface takes them: a coarse
// tool with its actions' own schemas, their arguments under the coarse
// tool's names.
func (gr *Grouping) SurfaceTools(lv level.Level) []surface.Tool {
	var out []surface.Tool
	for _, c := range gr.Levels[lv] {
		t := surface.Tool{Name: c.Name, Description: c.Description, InputSchema: c.InputSchema}
		if c.HasAction() {
			for _, a := range c.Actions {
				t.Actions = append(t.Actions, surface.Action{Name: a.Tool.Name, Description: a.Tool.Description, Schema: a.coarseSchema()})
			}
		}
		out = append(out, t)
	}
	return out
}

// Catalogue is the standard catalogue of the server's interfaces
// (surface.Catalogue over every level it has).
func (gr *Grouping) Catalogue(server string) ([]*surface.Interface, error) {
	levels := map[level.Level][]surface.Tool{}
	for lv := range gr.Levels {
		levels[lv] = gr.SurfaceTools(lv)
	}
	return surface.Catalogue(server, levels)
}

// coarseSchema is the action's source schema with its properties and
// required names under their coarse names (a name conflict resolved by
// prefixing renames them; see Build).
func (a *Action) coarseSchema() json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(a.Tool.InputSchema, &top) != nil {
		return a.Tool.InputSchema
	}
	doc := propsOf(a.Tool.InputSchema)
	props := make([]byte, 0, len(a.Tool.InputSchema))
	props = append(props, '{')
	for i, n := range doc.names {
		if i > 0 {
			props = append(props, ',')
		}
		k, _ := json.Marshal(a.coarseName(n))
		props = append(append(append(props, k...), ':'), doc.props[n]...)
	}
	top["properties"] = append(props, '}')
	if len(doc.required) > 0 {
		req := make([]string, len(doc.required))
		for i, n := range doc.required {
			req[i] = a.coarseName(n)
		}
		top["required"], _ = json.Marshal(req)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return a.Tool.InputSchema
	}
	return out
}

func (a *Action) coarseName(source string) string {
	if n, ok := a.toCoarse[source]; ok {
		return n
	}
	return source
}
