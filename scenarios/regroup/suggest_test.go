package regroup

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
	"github.com/mcpgranite/granite/scenarios"
)

// TestSuggest: the model answers under the proposal schema (sent as the
// format); a reply naming a tool twice is sent back with the reason and
// the next one kept; a model that never names every tool once is refused.
func TestSuggest(t *testing.T) {
	twice := `{"L3":[{"category":"status_query","tools":["read_file","file_stats"]},{"category":"action_execution","tools":["write_file","set_config","read_file"]}],"L2":{"query":["read_file","file_stats"],"control":["write_file","set_config"]}}`
	good := `{"L3":[{"category":"action_execution","tools":["set_config","write_file"]},{"category":"status_query","tools":["read_file","file_stats"]}],"L2":{"query":["file_stats","read_file"],"control":["write_file","set_config"]}}`
	for _, c := range []struct {
		name    string
		replies []string
		err     string
	}{
		{"repaired", []string{twice, good}, ""},
		{"refused", []string{twice, twice, twice, twice, twice}, "L3 names read_file more than once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := ollamatest.NewServer(t, []string{"fake:group"}, func(req ollamatest.Request, n int) ollamatest.Step {
				if !strings.Contains(string(req.Format), `"enum":["read_file","write_file","file_stats","set_config"]`) {
					t.Errorf("format does not constrain tool names: %s", req.Format)
				}
				return ollamatest.Step{Content: c.replies[min(n, len(c.replies)-1)]}
			})
			llm, err := scenarios.NewLLM(f.URL, "fake:group", nil)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Suggest(context.Background(), llm, "files", files())
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v; want a refusal saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Chats() != 2 || !strings.Contains(strings.Join(f.Requests()[1].Contents("user"), "\n"), "L3 names read_file more than once") {
				t.Errorf("%d chats; the second should carry the reason", f.Chats())
			}
			got, _ := json.Marshal(g.L3)
			// Categories in the paper's order, tools in the server's.
			if want := `[{"name":"files_status_query","category":"status_query","description":"files: status query. Grouped by fake:group.","tools":["read_file","file_stats"]},{"name":"files_action_execution","category":"action_execution","description":"files: action execution. Grouped by fake:group.","tools":["write_file","set_config"]}]`; string(got) != want {
				t.Errorf("L3 %s\nwant %s", got, want)
			}
			if _, err := Build(files(), g); err != nil {
				t.Error(err)
			}
		})
	}
}
