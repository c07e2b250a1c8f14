package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
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

// OllamaTools converts tools listed over MCP into Ollama's tool type, as
// Ollama itself decodes them: whatever its types have no field for
// (minimum, maximum, pattern, format, nested required, ...) is gone
// before any model sees the tool. Lost maps each tool to what it lost.
func OllamaTools(tools []mcp.Tool) (api.Tools, map[string][]string, error) {
	out := make(api.Tools, 0, len(tools))
	lost := map[string][]string{}
	for _, t := range tools {
		raw, err := inputSchema(t)
		if err != nil {
			return nil, nil, err
		}
		params, l, err := ollamaParams(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		if len(l) > 0 {
			lost[t.Name] = l
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, lost, nil
}

// ollamaParams decodes an input schema as Ollama does and lists what it
// lost.
func ollamaParams(raw []byte) (api.ToolFunctionParameters, []string, error) {
	var params api.ToolFunctionParameters
	if err := json.Unmarshal(raw, &params); err != nil {
		return params, nil, fmt.Errorf("Ollama cannot read the input schema: %w", err)
	}
	lost, err := LostKeywords(raw, params)
	return params, lost, err
}

// LostKeywords lists, as "argument: keyword" (or "keyword" at the top),
// the schema keywords of raw that the converted parameters dropped.
func LostKeywords(raw []byte, params api.ToolFunctionParameters) ([]string, error) {
	kept, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return lostBetween(raw, kept)
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

// ToolLoss is what Ollama drops of each generated tool's input schema.
func ToolLoss(tools []*mcpdomain.Tool) map[string][]string {
	return ToolLossFor(results.BackendOllama, tools)
}

// ToolLossFor is what a backend's tool types drop of each generated
// tool's input schema: Ollama's lose keywords, OpenAI function tools
// carry the whole schema (and the conversion is checked, not assumed).
func ToolLossFor(backend string, tools []*mcpdomain.Tool) map[string][]string {
	schemas := map[string][]byte{}
	for _, t := range tools {
		schemas[t.Name] = []byte(t.InputSchema)
	}
	if backend != results.BackendOpenAI {
		return schemaLoss(schemas)
	}
	out := map[string][]string{}
	for _, t := range tools {
		_, l, err := openaiTool(t.Name, t.Description, schemas[t.Name])
		switch {
		case err != nil:
			out[t.Name] = []string{"(unreadable: " + err.Error() + ")"}
		case len(l) > 0:
			out[t.Name] = l
		}
	}
	return out
}

// schemaLoss is what Ollama drops of each input schema, by tool name.
func schemaLoss(schemas map[string][]byte) map[string][]string {
	out := map[string][]string{}
	for name, schema := range schemas {
		_, l, err := ollamaParams(schema)
		switch {
		case err != nil:
			out[name] = []string{"(unreadable: " + err.Error() + ")"}
		case len(l) > 0:
			out[name] = l
		}
	}
	return out
}
