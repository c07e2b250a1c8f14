package scriptedmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// gemini answers a Gemini API generateContent request (Gemini CLI), or
// streamGenerateContent as server-sent events of one chunk.
func (s *Server) gemini(w http.ResponseWriter, body json.RawMessage, model string, stream bool) error {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string          `json:"text"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	t := turn{api: "gemini", model: model, stream: stream}
	var user strings.Builder
	for _, c := range req.Contents {
		if c.Role != "user" && c.Role != "" {
			continue
		}
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				t.results++
			}
			user.WriteString(p.Text)
			user.WriteString("\n")
		}
	}
	t.userText = user.String()
	for _, tool := range req.Tools {
		for _, f := range tool.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			t.tools = append(t.tools, Tool{Name: f.Name, Description: f.Description, Schema: schema})
		}
	}
	r := s.next(t)
	part := map[string]any{"text": r.Text}
	if r.Tool != "" {
		var a any
		_ = json.Unmarshal(args(r.Arguments), &a)
		part = map[string]any{"functionCall": map[string]any{"name": r.Tool, "args": a}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"index": 0, "finishReason": "STOP", "content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  model,
	}
	if !stream {
		writeJSON(w, resp)
		return nil
	}
	startSSE(w)
	sse(w, "", resp)
	return nil
}
