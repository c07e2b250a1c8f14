package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// inputSchema is a listed tool's input schema as JSON: as the server sent
// it when mcp-go kept it raw.
func inputSchema(t mcp.Tool) (json.RawMessage, error) {
	if t.RawInputSchema != nil {
		return t.RawInputSchema, nil
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	return raw, nil
}

// lostBetween lists the schema keywords of raw that kept lacks.
func lostBetween(raw, kept []byte) ([]string, error) {
	var a, b map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(kept, &b); err != nil {
		return nil, err
	}
	var out []string
	diffKeys("", a, b, &out)
	sort.Strings(out)
	return out, nil
}

// diffKeys records keys of a missing from b, descending into properties
// and items so that the path names the argument.
func diffKeys(at string, a, b map[string]any, out *[]string) {
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			*out = append(*out, strings.TrimPrefix(at+": "+k, ": "))
			continue
		}
		switch k {
		case "properties":
			pa, _ := v.(map[string]any)
			pb, _ := w.(map[string]any)
			for name, sub := range pa {
				sa, _ := sub.(map[string]any)
				sb, _ := pb[name].(map[string]any)
				diffKeys(strings.TrimPrefix(at+"."+name, "."), sa, sb, out)
			}
		case "items":
			sa, _ := v.(map[string]any)
			sb, _ := w.(map[string]any)
			diffKeys(at+"[]", sa, sb, out)
		}
	}
}

// LostSummary counts the lost keywords of a set of tools by keyword, for
// warnings and `granite list`: "pattern ×12, minimum ×4".
func LostSummary(lost map[string][]string) string {
	count := map[string]int{}
	for _, l := range lost {
		for _, k := range l {
			if i := strings.LastIndex(k, ": "); i >= 0 {
				k = k[i+2:]
			}
			count[k]++
		}
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, count[k])
	}
	return strings.Join(parts, ", ")
}

// Schemas are generated tools' input schemas, by tool name.
func Schemas(tools []*mcpdomain.Tool) map[string][]byte {
	out := map[string][]byte{}
	for _, t := range tools {
		out[t.Name] = []byte(t.InputSchema)
	}
	return out
}

// ToolLoss is what a backend's tool types drop of each generated tool's
// input schema, by tool name: nothing for a backend that gets the tools
// as listed.
func ToolLoss(b Backend, tools []*mcpdomain.Tool) map[string][]string {
	return lostOf(b, Schemas(tools))
}

// LostBySet is what a backend's tool types drop of each tool set (see
// Env.ToolSets), by set and tool name; sets that lose nothing are left
// out.
func LostBySet(b Backend, sets map[string]map[string][]byte) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for set, schemas := range sets {
		if lost := lostOf(b, schemas); len(lost) > 0 {
			out[set] = lost
		}
	}
	return out
}

func lostOf(b Backend, schemas map[string][]byte) map[string][]string {
	c, ok := b.(ToolConverter)
	if !ok {
		return map[string][]string{}
	}
	return c.Lost(schemas)
}

// lostEach lists, by tool name, what lost says one request form drops of
// each schema; a schema it cannot read is said to be unreadable.
func lostEach(schemas map[string][]byte, lost func(name string, schema []byte) ([]string, error)) map[string][]string {
	out := map[string][]string{}
	for name, schema := range schemas {
		l, err := lost(name, schema)
		switch {
		case err != nil:
			out[name] = []string{"(unreadable: " + err.Error() + ")"}
		case len(l) > 0:
			out[name] = l
		}
	}
	return out
}
