package toolsrc

import (
	"encoding/json"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// FromDomain lists a generated domain's tools at a level as its server
// lists them, without serving it: the harness replays artifacts of a
// domain against these, and the synthesizer adds the domain's executor.
func FromDomain(d *mcpdomain.Domain, level level.Level) []Tool {
	var out []Tool
	for _, t := range d.Tools[level] {
		out = append(out, Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema)})
	}
	return out
}
