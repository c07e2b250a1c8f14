package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgranite/granite/templates"
)

// Enrichment is the enrich stage's reading of one tool.
type Enrichment struct {
	FunctionalDescription string `json:"functional_description"`
	Parameters            []struct {
		Name string `json:"name"`
		Role string `json:"role"`
	} `json:"parameters"`
	UseCases []string `json:"use_cases"`
	Context  string   `json:"context"`
}

var enrichSchema = json.RawMessage(`{"type":"object","additionalProperties":false,
"required":["functional_description","parameters","use_cases","context"],
"properties":{"functional_description":{"type":"string","minLength":1},
"parameters":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name","role"],"properties":{"name":{"type":"string"},"role":{"type":"string"}}}},
"use_cases":{"type":"array","minItems":1,"items":{"type":"string"}},"context":{"type":"string"}}}`)

// Enrich runs the enrich stage for a tool; the parameters it names must
// be the tool's required ones.
func (l *LLM) Enrich(ctx context.Context, t Tool) (*Enrichment, int, error) {
	var prompt strings.Builder
	if err := templates.SynthEnrich.Execute(&prompt, map[string]any{"Name": t.Name, "Description": t.Description, "Schema": string(t.InputSchema)}); err != nil {
		return nil, 0, err
	}
	var root map[string]any
	_ = json.Unmarshal(t.InputSchema, &root)
	required := asList(root["required"])
	// The parameter names are an enum of the required ones.
	schema := enrichSchema
	if len(required) > 0 {
		var s map[string]any
		_ = json.Unmarshal(enrichSchema, &s)
		props := s["properties"].(map[string]any)
		items := props["parameters"].(map[string]any)["items"].(map[string]any)
		items["properties"].(map[string]any)["name"] = map[string]any{"enum": asAny(required)}
		schema, _ = json.Marshal(s)
	}
	e := &Enrichment{}
	n, err := l.Stage(ctx, prompt.String(), schema, e)
	return e, n, err
}

// mockSchema is the mock-output stage's contract for n calls.
func mockSchema(n int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"state", "outputs"},
		"properties": map[string]any{
			"state": map[string]any{"type": "object"},
			"outputs": map[string]any{"type": "array", "minItems": n, "maxItems": n, "items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"call", "output", "grounding"},
				"properties": map[string]any{
					"call":      map[string]any{"type": "integer", "minimum": 0, "maximum": n - 1},
					"output":    map[string]any{"type": "string"},
					"grounding": map[string]any{"enum": []string{"high", "medium", "low"}},
				}}},
		}})
	return b
}

// Mock runs the mock-output stage: one result per expected call, from one
// shared state so IDs and values agree across calls. An output must be
// JSON, fit the tool's output schema when it has one, and have the shape
// of one of its example outputs when it has some; a reply that breaks any
// of these is fed back and retried like a schema violation. Grounding is
// the model's claim, capped by the tool's material (see Grounding).
func (l *LLM) Mock(ctx context.Context, tools []Tool, instruction string, calls []ExpectedCall) ([]MockOutput, int, error) {
	type pt struct {
		Name, Description, Output string
		Examples                  []string
	}
	byName := map[string]Tool{}
	var pts []pt
	for _, t := range tools {
		p := pt{Name: t.Name, Description: t.Description, Output: string(t.OutputSchema)}
		for _, ex := range t.OutputExamples {
			p.Examples = append(p.Examples, string(ex))
		}
		pts = append(pts, p)
		byName[t.Name] = t
	}
	var prompt strings.Builder
	if err := templates.SynthMock.Execute(&prompt, map[string]any{"Tools": pts, "Instruction": instruction, "Calls": calls}); err != nil {
		return nil, 0, err
	}
	var reply struct {
		Outputs []MockOutput `json:"outputs"`
	}
	fits := func() string {
		for i, o := range reply.Outputs {
			if o.Call != i {
				return fmt.Sprintf("output %d is for call %d; give the calls in order", i, o.Call)
			}
			t := byName[calls[i].Tool]
			if !json.Valid([]byte(o.Output)) {
				return fmt.Sprintf("output %d is not JSON text", i)
			}
			if t.OutputFits(o.Output) != nil {
				return fmt.Sprintf("output %d does not match %s's output schema", i, t.Name)
			}
			if why := t.ShapeMismatch(o.Output); why != "" {
				return fmt.Sprintf("output %d does not have the shape of %s's example output: %s", i, t.Name, why)
			}
		}
		return ""
	}
	n, err := l.Stage(ctx, prompt.String(), mockSchema(len(calls)), &reply, fits)
	if err != nil {
		return nil, n, err
	}
	// A model may claim better grounding than its material allows; the
	// tool's reference material caps it.
	rank := map[string]int{"low": 0, "medium": 1, "high": 2}
	for i := range reply.Outputs {
		o := &reply.Outputs[i]
		t := byName[calls[i].Tool]
		if ceiling := t.Grounding(); rank[o.Grounding] > rank[ceiling] {
			o.Grounding = ceiling
		}
	}
	return reply.Outputs, n, nil
}

// turnsSchema is the multi-turn stage's contract for n calls.
func turnsSchema(n int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"turns"},
		"properties": map[string]any{"turns": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"prompt", "calls"},
			"properties": map[string]any{
				"prompt": map[string]any{"type": "string", "minLength": 1},
				"calls":  map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 0, "maximum": n - 1}},
			}}}}})
	return b
}

// ErrSingleTurn is returned when a multi-turn expansion yields one turn:
// the scenario lacks the substance to split, and the expansion is dropped.
var ErrSingleTurn = errors.New("the expansion has a single turn")

// Expand runs the multi-turn stage: it splits a scenario at phase
// boundaries into turns whose calls are contiguous, in order and cover
// every call once, and whose follow-ups cite a concrete value from an
// earlier output. A reply that breaks this is fed back and retried.
func (l *LLM) Expand(ctx context.Context, instruction string, calls []ExpectedCall, outputs []MockOutput) ([]Turn, int, error) {
	outs := make([]string, len(calls))
	for i := range calls {
		if i < len(outputs) {
			outs[i] = outputs[i].Output
		}
	}
	var prompt strings.Builder
	if err := templates.SynthTurns.Execute(&prompt, map[string]any{"Instruction": instruction, "Calls": calls, "Outputs": outs}); err != nil {
		return nil, 0, err
	}
	var reply struct {
		Turns []struct {
			Prompt string `json:"prompt"`
			Calls  []int  `json:"calls"`
		} `json:"turns"`
	}
	splits := func() string {
		next := 0
		for ti, t := range reply.Turns {
			for _, c := range t.Calls {
				if c != next {
					return fmt.Sprintf("turn %d lists call %d where call %d comes next; keep every call once, in order", ti, c, next)
				}
				next++
			}
			if ti > 0 && !citesEarlier(t.Prompt, outs[:next-len(t.Calls)]) {
				return fmt.Sprintf("turn %d cites no concrete value from the earlier results", ti)
			}
		}
		if next != len(calls) {
			return fmt.Sprintf("the turns cover %d of %d calls", next, len(calls))
		}
		return ""
	}
	n, err := l.Stage(ctx, prompt.String(), turnsSchema(len(calls)), &reply, splits)
	if err != nil {
		return nil, n, err
	}
	if len(reply.Turns) < 2 {
		return nil, n, ErrSingleTurn
	}
	turns := make([]Turn, len(reply.Turns))
	for i, t := range reply.Turns {
		turns[i] = Turn{Prompt: t.Prompt, Calls: t.Calls}
	}
	return turns, n, nil
}

// citesEarlier reports whether a prompt quotes a string or number value
// (at least 2 characters) from earlier outputs.
func citesEarlier(prompt string, outputs []string) bool {
	low := strings.ToLower(prompt)
	var found bool
	var walk func(v any)
	walk = func(v any) {
		if found {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		case string:
			found = len(x) >= 2 && strings.Contains(low, strings.ToLower(x))
		case float64:
			s := fmt.Sprint(x)
			found = len(s) >= 2 && strings.Contains(prompt, s)
		}
	}
	for _, o := range outputs {
		var v any
		if json.Unmarshal([]byte(o), &v) == nil {
			walk(v)
		}
	}
	return found
}
