package regroup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios"
)

// proposal is what a model answers: the L3 groups by category and the L2
// split.
type proposal struct {
	L3 []struct {
		Category string   `json:"category"`
		Tools    []string `json:"tools"`
	} `json:"L3"`
	L2 struct {
		Query   []string `json:"query"`
		Control []string `json:"control"`
	} `json:"L2"`
}

// proposalSchema constrains a model's reply: categories from the four,
// tool names from the server's. That every tool is named exactly once is
// beyond a schema Ollama enforces, so Suggest checks it and asks again.
func proposalSchema(tools []toolsrc.Tool) json.RawMessage {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	list := map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": names}}
	s := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"L3", "L2"},
		"properties": map[string]any{
			"L3": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"category", "tools"},
				"properties": map[string]any{
					"category": map[string]any{"type": "string", "enum": Categories},
					"tools":    map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "enum": names}},
				}}},
			"L2": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"query", "control"},
				"properties": map[string]any{"query": list, "control": list}},
		},
	}
	b, _ := json.Marshal(s)
	return b
}

// onceEach names what breaks "every tool exactly once" in a list of
// groups, or "".
func onceEach(what string, groups [][]string, tools []toolsrc.Tool) string {
	count := map[string]int{}
	for _, g := range groups {
		for _, t := range g {
			count[t]++
		}
	}
	var missing, twice []string
	for _, t := range tools {
		switch n := count[t.Name]; {
		case n == 0:
			missing = append(missing, t.Name)
		case n > 1:
			twice = append(twice, t.Name)
		}
	}
	// The reason goes to the model and, after the last retry, to the
	// terminal: names as they read, a control character escaped.
	var p []string
	if len(missing) > 0 {
		p = append(p, fmt.Sprintf("%s leaves out %s", what, oneline.Escape(strings.Join(missing, ", "))))
	}
	if len(twice) > 0 {
		p = append(p, fmt.Sprintf("%s names %s more than once", what, oneline.Escape(strings.Join(twice, ", "))))
	}
	return strings.Join(p, "; ")
}

// Suggest asks a model for the groups under constrained decoding (the
// reply must fit proposalSchema) and checks that every tool is in exactly
// one L3 group and one side of L2, and that no category is used twice; a
// reply that fails is fed back with the reason and asked again (the
// synthesizer's retries), and after the last retry refused. L1 is one
// tool, as derived.
func Suggest(ctx context.Context, llm *scenarios.LLM, server string, tools []toolsrc.Tool) (*Groups, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Group the tools of the MCP server %q for an agent benchmark.\n\n", server)
	b.WriteString("L3: put every tool in exactly one of the task categories status_query (reads the current state), " +
		"action_execution (acts or changes data), configuration (changes settings, rules or how the system behaves) and " +
		"analysis (computes over data: statistics, comparisons, reports). Leave out categories no tool fits.\n")
	b.WriteString("L2: put every tool in exactly one of query (only reads; changes nothing) and control (changes something).\n\nTools:\n")
	for _, t := range tools {
		ro := ""
		if v, ok := t.Annotations["readOnlyHint"].(bool); ok {
			ro = fmt.Sprintf(" [readOnlyHint: %v]", v)
		}
		fmt.Fprintf(&b, "- %s: %s%s\n", t.Name, firstSentence(t.Description), ro)
	}
	b.WriteString("\nReply with JSON only.")
	var p proposal
	check := func() string {
		var l3 [][]string
		var cats []string
		for _, g := range p.L3 {
			if slices.Contains(cats, g.Category) {
				return fmt.Sprintf("category %s is used by two L3 groups; merge them", g.Category)
			}
			cats = append(cats, g.Category)
			l3 = append(l3, g.Tools)
		}
		if msg := onceEach("L3", l3, tools); msg != "" {
			return msg + "; put every tool in exactly one group"
		}
		if msg := onceEach("L2", [][]string{p.L2.Query, p.L2.Control}, tools); msg != "" {
			return msg + "; put every tool in exactly one of query and control"
		}
		return ""
	}
	if _, err := llm.Stage(ctx, b.String(), proposalSchema(tools), &p, check); err != nil {
		return nil, fmt.Errorf("model %s: no grouping that names every tool exactly once: %w", llm.Model, err)
	}
	d := Derive(server, tools)
	g := &Groups{Server: server, L1: d.L1}
	by := fmt.Sprintf(" Grouped by %s.", llm.Model)
	for _, c := range Categories {
		for _, grp := range p.L3 {
			if grp.Category == c {
				g.L3 = append(g.L3, Group{Name: server + "_" + c, Category: c, Tools: inServerOrder(grp.Tools, tools),
					Description: fmt.Sprintf("%s: %s.", server, strings.ReplaceAll(c, "_", " ")) + by})
			}
		}
	}
	if len(p.L2.Query) > 0 {
		g.L2 = append(g.L2, Group{Name: server + "_query", Category: "query", Tools: inServerOrder(p.L2.Query, tools),
			Description: fmt.Sprintf("Read anything in %s; nothing changes.", server) + by})
	}
	if len(p.L2.Control) > 0 {
		g.L2 = append(g.L2, Group{Name: server + "_control", Category: "control", Tools: inServerOrder(p.L2.Control, tools),
			Description: fmt.Sprintf("Change %s.", server) + by})
	}
	if err := g.Check(tools); err != nil {
		return nil, err
	}
	return g, nil
}

// inServerOrder sorts names as the server lists its tools, so that a
// model's order does not change the coarse tools.
func inServerOrder(names []string, tools []toolsrc.Tool) []string {
	var out []string
	for _, t := range tools {
		if slices.Contains(names, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}
