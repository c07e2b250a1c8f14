package scriptedmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// nsSep joins a namespace and a tool of it in the name the server gives
// the tool: Codex offers an MCP server's tools in a namespace
// (mcp__SERVER), and a call names the namespace and the tool apart.
const nsSep = "__"

// responses answers an OpenAI Responses request (Codex CLI), as one
// response or, when it asks to stream, as the Responses event stream.
func (s *Server) responses(w http.ResponseWriter, body json.RawMessage) error {
	var req struct {
		Model  string          `json:"model"`
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
		Tools  []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			// A namespace groups tools (Codex puts an MCP server's tools
			// under one); its tools are offered as NAMESPACE.NAME... by
			// their own names here.
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	t := turn{api: "responses", model: req.Model, stream: req.Stream}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var user strings.Builder
	if json.Unmarshal(req.Input, &items) != nil {
		user.WriteString(text(req.Input))
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output" || it.Type == "mcp_tool_call_output":
			t.results++
		case it.Role == "user":
			user.WriteString(text(it.Content))
		}
	}
	t.userText = user.String()
	for _, tool := range req.Tools {
		if tool.Name != "" {
			t.tools = append(t.tools, Tool{Name: tool.Name, Description: tool.Description, Schema: tool.Parameters})
		}
		for _, sub := range tool.Tools {
			t.tools = append(t.tools, Tool{Name: tool.Name + nsSep + sub.Name, Description: sub.Description, Schema: sub.Parameters})
		}
	}
	r := s.next(t)
	item := map[string]any{"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}}
	if r.Tool != "" {
		item = map[string]any{"type": "function_call", "id": "fc_" + r.ID, "call_id": r.ID, "name": r.Tool,
			"arguments": string(args(r.Arguments)), "status": "completed"}
		if i := strings.LastIndex(r.Tool, nsSep); i > 0 {
			item["namespace"], item["name"] = r.Tool[:i], r.Tool[i+len(nsSep):]
		}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
		"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}
	resp := map[string]any{"id": "resp_scripted", "object": "response", "created_at": 0, "model": req.Model, "status": "completed",
		"output": []any{item}, "usage": usage}
	if !req.Stream {
		writeJSON(w, resp)
		return nil
	}
	startSSE(w)
	created := map[string]any{"id": "resp_scripted", "object": "response", "created_at": 0, "model": req.Model, "status": "in_progress", "output": []any{}}
	sse(w, "response.created", map[string]any{"type": "response.created", "response": created})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if r.Tool == "" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_scripted", "output_index": 0, "content_index": 0, "delta": r.Text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
	return nil
}
