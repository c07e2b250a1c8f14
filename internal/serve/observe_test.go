package serve

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestObserve reads calls and their replies as a recording keeps them:
// a JSON reply, an event stream with notifications before the response,
// a JSON-RPC error, and no response at all; other methods are not calls.
func TestObserve(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tool_x","arguments":{"id":"D1"}}}`
	for _, c := range []struct {
		name, body, reply, contentType string
		want                           *Observed
	}{
		{"json", call, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}`, "application/json",
			&Observed{Tool: "tool_x", Arguments: []byte(`{"id":"D1"}`), Text: "ok"}},
		{"stream", call, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bad id\"}],\"isError\":true}}\n\n", "text/event-stream",
			&Observed{Tool: "tool_x", Arguments: []byte(`{"id":"D1"}`), Text: "bad id", IsError: true}},
		{"rpc error", call, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"tool 'tool_x' not found"}}`, "application/json",
			&Observed{Tool: "tool_x", Arguments: []byte(`{"id":"D1"}`), RPCError: "tool 'tool_x' not found", RPCCode: -32602}},
		{"no response", call, ``, "application/json",
			&Observed{Tool: "tool_x", Arguments: []byte(`{"id":"D1"}`), RPCError: "no JSON-RPC response to the call (HTTP Service Unavailable)"}},
		{"not a call", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, "application/json", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := observe([]byte(c.body), []byte(c.reply), c.contentType, 503)
			if ok != (c.want != nil) {
				t.Fatalf("observed %v, want %v", ok, c.want != nil)
			}
			if c.want != nil {
				if diff := cmp.Diff(*c.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}
