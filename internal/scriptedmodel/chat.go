package scriptedmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// chat answers an OpenAI Chat Completions request (qwen-code), as one
// JSON object or, when it asks to stream, as chunks ending in [DONE].
func (s *Server) chat(w http.ResponseWriter, body json.RawMessage) error {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	t := turn{api: "chat", model: req.Model, stream: req.Stream}
	var user strings.Builder
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			user.WriteString(text(m.Content))
		case "tool":
			t.results++
		}
	}
	t.userText = user.String()
	for _, tool := range req.Tools {
		f := tool.Function
		t.tools = append(t.tools, Tool{Name: f.Name, Description: f.Description, Schema: f.Parameters})
	}
	r := s.next(t)
	msg := map[string]any{"role": "assistant", "content": r.Text}
	finish := "stop"
	if r.Tool != "" {
		finish = "tool_calls"
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": r.ID, "type": "function", "function": map[string]any{"name": r.Tool, "arguments": string(args(r.Arguments))}}}}
	}
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return nil
	}
	startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, "", chunk(msg, nil))
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	sse(w, "", last)
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	return nil
}
