package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/summary"
	"github.com/mcpgranite/granite/internal/level"
)

// TestListDropsPerBackend: `granite list` counts the dropped schema
// keywords per backend: Ollama's as its tool types drop them, none for an
// OpenAI-compatible endpoint, which gets the whole schema.
func TestListDropsPerBackend(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"list", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rows []summary.DomainSummary
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(gen.Domains) {
		t.Fatalf("%d rows for %d domains", len(rows), len(gen.Domains))
	}
	ollamaDrops := 0
	for i, r := range rows {
		for _, l := range level.Levels {
			if n := dropped(r.DroppedByBackend[agent.BackendOpenAI][l]); n != 0 {
				t.Errorf("%s %s: %d keywords dropped for OpenAI endpoints: %v", r.Name, l, n, r.DroppedByBackend[agent.BackendOpenAI][l])
			}
			want := agent.ToolLoss(agent.Default(), gen.Domains[i].Tools[l])
			if dropped(r.DroppedByBackend[agent.BackendOllama][l]) != dropped(want) || dropped(r.Dropped[l]) != dropped(want) {
				t.Errorf("%s %s: Ollama drops %v, want %v", r.Name, l, r.DroppedByBackend[agent.BackendOllama][l], want)
			}
			ollamaDrops += dropped(want)
		}
	}
	if ollamaDrops == 0 {
		t.Error("Ollama drops nothing of any domain; the comparison shows nothing")
	}
	if note := rows[0].ContextByBackend[agent.BackendOpenAI]; note != agent.OpenAIContextNote {
		t.Errorf("context of OpenAI-compatible entries %q; want the note that num_ctx cannot be set", note)
	}
	out.Reset()
	if code := run(context.Background(), []string{"list"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "OLLAMA DROPS L4/L3/L2/L1  OPENAI DROPS L4/L3/L2/L1") ||
		!strings.Contains(out.String(), "Context, openai: num_ctx cannot be set over the OpenAI API") {
		t.Errorf("exit %d, table:\n%s", code, out.String())
	}
}
