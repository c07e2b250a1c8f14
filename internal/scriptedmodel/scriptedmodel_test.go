package scriptedmodel

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// script is an invented task: two calls, then the answer.
var script = Script{Prompt: "Dim the hallway lamp", Answer: "The hallway lamp is at 20.",
	Calls: []Call{{Tool: "get_lamp", Arguments: []byte(`{"lamp_id":"L1"}`)}, {Tool: "set_lamp", Arguments: []byte(`{"lamp_id":"L1","level":20}`)}}}

// TestEachAPIPlaysTheScript sends each wire format a conversation with
// none, one and both results in it: the reply is the next call, under the
// name the request gave the tool, then the answer; a request no script
// fits gets text.
func TestEachAPIPlaysTheScript(t *testing.T) {
	srv := New([]Script{script})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	const schema = `{"type":"object","properties":{"lamp_id":{"type":"string","pattern":"^L[0-9]+$"}}}`
	cases := []struct {
		api, path string
		// body builds a request with n results in it, offering the tools
		// under names of the CLI's kind.
		body func(n int) string
		// named is the first call's tool as the CLI named it.
		named string
	}{
		{"chat", "/v1/chat/completions", func(n int) string {
			msgs := `{"role":"system","content":"be brief"},{"role":"user","content":"Dim the hallway lamp to 20."}`
			for range n {
				msgs += `,{"role":"assistant","tool_calls":[]},{"role":"tool","content":"ok"}`
			}
			return `{"model":"m","stream":true,"messages":[` + msgs + `],"tools":[{"type":"function","function":{"name":"get_lamp","parameters":` + schema + `}},{"type":"function","function":{"name":"set_lamp","parameters":{}}}]}`
		}, "get_lamp"},
		{"anthropic", "/v1/messages", func(n int) string {
			msgs := `{"role":"user","content":[{"type":"text","text":"<reminder/>"},{"type":"text","text":"Dim the hallway lamp to 20."}]}`
			for range n {
				msgs += `,{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"y","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ok"}]}`
			}
			return `{"model":"m","stream":true,"messages":[` + msgs + `],"tools":[{"name":"mcp__granite__get_lamp","input_schema":` + schema + `},{"name":"mcp__granite__set_lamp","input_schema":{}}]}`
		}, "mcp__granite__get_lamp"},
		{"responses", "/v1/responses", func(n int) string {
			items := `{"type":"message","role":"user","content":[{"type":"input_text","text":"Dim the hallway lamp to 20."}]}`
			for range n {
				items += `,{"type":"function_call","call_id":"c","name":"get_lamp","namespace":"mcp__granite","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}`
			}
			return `{"model":"m","stream":true,"input":[` + items + `],"tools":[{"type":"function","name":"exec_command","parameters":{}},{"type":"namespace","name":"mcp__granite","tools":[{"type":"function","name":"get_lamp","parameters":` + schema + `},{"type":"function","name":"set_lamp","parameters":{}}]}]}`
		}, `"namespace":"mcp__granite"`},
		{"gemini", "/v1beta/models/m:streamGenerateContent", func(n int) string {
			contents := `{"role":"user","parts":[{"text":"Dim the hallway lamp to 20."}]}`
			for range n {
				contents += `,{"role":"model","parts":[{"functionCall":{"name":"x","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"x","response":{}}}]}`
			}
			return `{"contents":[` + contents + `],"tools":[{"functionDeclarations":[{"name":"mcp_granite_get_lamp","parametersJsonSchema":` + schema + `},{"name":"mcp_granite_set_lamp","parametersJsonSchema":{}}]}]}`
		}, "mcp_granite_get_lamp"},
	}
	for _, c := range cases {
		t.Run(c.api, func(t *testing.T) {
			before := len(srv.Requests())
			for n, want := range []string{c.named, "set_lamp", script.Answer} {
				got := post(t, hs.URL+c.path, c.body(n))
				if !strings.Contains(got, want) {
					t.Errorf("with %d results: reply %s lacks %q", n, got, want)
				}
			}
			if got := post(t, hs.URL+c.path, strings.Replace(c.body(0), "Dim the hallway lamp", "Write a title", 1)); !strings.Contains(got, "OK.") {
				t.Errorf("a side request got %s, want text", got)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 4 || reqs[0].API != c.api || reqs[0].Script != 0 || reqs[2].Step != 2 || reqs[3].Script != -1 {
				t.Fatalf("requests %+v; want three that played the script at steps 0-2 and one that fit none", reqs)
			}
			if k := Offered("get_lamp", reqs[0].Tools); k < 0 || string(reqs[0].Tools[k].Schema) != schema {
				t.Errorf("tools %+v; want get_lamp kept with its schema as sent", reqs[0].Tools)
			}
		})
	}
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestOfferedPrefersTheClosestName: the tool's own name first, then one
// under a "__" prefix, then under a "_" prefix, never a longer name that
// merely ends the same way.
func TestOfferedPrefersTheClosestName(t *testing.T) {
	tools := []Tool{{Name: "mcp_srv_count_widgets"}, {Name: "mcp_srv_widgets"}, {Name: "mcp__srv__widgets"}}
	for name, want := range map[string]int{"widgets": 2, "count_widgets": 0, "nope": -1} {
		if got := Offered(name, tools); got != want {
			t.Errorf("Offered(%q) = %d, want %d", name, got, want)
		}
	}
	if got := Offered("widgets", tools[:2]); got != 1 {
		t.Errorf("without the __ name: %d, want the shortest _ name (1)", got)
	}
}
