package scriptedmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// anthropic answers an Anthropic Messages request (Claude Code), as one
// message or, when it asks to stream, as the Messages event stream.
func (s *Server) anthropic(w http.ResponseWriter, body json.RawMessage) error {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	t := turn{api: "anthropic", model: req.Model, stream: req.Stream}
	var user strings.Builder
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					t.results++
				}
			}
		}
		user.WriteString(text(m.Content))
	}
	t.userText = user.String()
	for _, tool := range req.Tools {
		t.tools = append(t.tools, Tool{Name: tool.Name, Description: tool.Description, Schema: tool.InputSchema})
	}
	r := s.next(t)
	block := map[string]any{"type": "text", "text": r.Text}
	stop := "end_turn"
	if r.Tool != "" {
		stop = "tool_use"
		var input any
		_ = json.Unmarshal(args(r.Arguments), &input)
		block = map[string]any{"type": "tool_use", "id": "toolu_" + r.ID, "name": r.Tool, "input": input}
	}
	usage := map[string]int{"input_tokens": 100, "output_tokens": 10}
	msg := map[string]any{"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		writeJSON(w, msg)
		return nil
	}
	startSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
	if r.Tool != "" {
		open := map[string]any{"type": "tool_use", "id": block["id"], "name": r.Tool, "input": map[string]any{}}
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": open})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args(r.Arguments))}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": r.Text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
	return nil
}
