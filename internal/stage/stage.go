// Package stage holds the contracts of the synthesizer's stages, built at
// run time from a tool set: a generated domain's level or any other tool
// source.
package stage

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

// ScenarioSchema is the contract of the synthesizer's scenario stage
// for a tool set: each call's tool is one of the tools, exactly (a const
// per oneOf branch), and its arguments must satisfy that tool's input
// schema. A model answering to it cannot name a tool that does not exist
// or give arguments its schema refuses. Keys are sorted, so equal tool
// sets give equal bytes.
func ScenarioSchema(tools []toolsrc.Tool) ([]byte, error) {
	defs := map[string]any{}
	branches := make([]any, 0, len(tools))
	for i, t := range tools {
		var s map[string]any
		if err := json.Unmarshal(t.InputSchema, &s); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		hoist(s, fmt.Sprintf("t%d_", i), defs)
		branches = append(branches, map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []string{"tool", "arguments", "reason"},
			"properties": map[string]any{
				"tool":      map[string]any{"const": t.Name},
				"arguments": s,
				"reason":    map[string]any{"type": "string", "minLength": 1},
			},
		})
	}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"title", "instruction", "calls", "novelty", "follow_up"},
		"properties": map[string]any{
			"title":       map[string]any{"type": "string", "minLength": 1},
			"instruction": map[string]any{"type": "string", "minLength": 1},
			"calls":       map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"oneOf": branches}},
			"novelty":     map[string]any{"type": "string"},
			"follow_up":   map[string]any{"type": "string"},
		},
	}
	if len(defs) > 0 {
		schema["$defs"] = defs
	}
	return json.Marshal(schema)
}

// hoist moves a tool schema's $defs to the stage schema's root under a
// prefix and rewrites its local references to match.
func hoist(s map[string]any, prefix string, defs map[string]any) {
	var mine []any
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := s[key].(map[string]any); ok {
			for name, v := range d {
				defs[prefix+name] = v
				mine = append(mine, v)
			}
			delete(s, key)
		}
	}
	delete(s, "$schema")
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				for _, p := range []string{"#/$defs/", "#/definitions/"} {
					if name, ok := strings.CutPrefix(ref, p); ok {
						x["$ref"] = "#/$defs/" + prefix + name
					}
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(s)
	for _, v := range mine {
		walk(v)
	}
}
