package openaitest_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/internal/models/chattest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
)

// The replies recorded from a real Ollama's /v1 (the ollama double's
// testdata/real, written by the tinymodel package's real-server test with
// -record) hold the ollama dialect to the wire: for each recorded case
// the double, scripted the same way, must send lines of the same shapes
// (keys, JSON types, and the values that say what a line is), and error
// statuses with the same status and body shape.

// recorded is where the recordings are.
var recorded = filepath.Join("..", "..", "ollama", "ollamatest", "testdata", "real")

// v1Cases maps a recorded case to the step that scripts it in the ollama
// dialect.
var v1Cases = map[string]openaitest.Step{
	"right-call":                {Calls: []openaitest.Call{{Name: "alpha_list", Args: `{"limit":5}`}}},
	"string-args":               {Calls: []openaitest.Call{{Name: "alpha_list", Args: `{"limit":"5"}`}}},
	"answer":                    {Content: "There are 5 items."},
	"invalid-json":              {Dropped: true},
	"unknown-tool":              {Dropped: true},
	"loop":                      {Repeat: " again"},
	"parser-qwen3-right-call":   {Calls: []openaitest.Call{{Name: "alpha_list", Args: `{"limit":5}`}}},
	"parser-qwen3-string-args":  {Calls: []openaitest.Call{{Name: "alpha_list", Args: `{"limit":"5"}`}}},
	"parser-qwen3-unknown-tool": {Calls: []openaitest.Call{{Name: "gamma_unknown", Args: `{"limit":5}`}}},
	"parser-qwen3-answer":       {Content: "There are 5 items."},
	"parser-qwen3-invalid-json": {Status: 500, ErrBody: "failed to parse JSON: unexpected end of JSON input"},
	"parser-qwen3-loop":         {Repeat: " again"},
}

// TestOllamaDialectSpeaksTheRecordedWire holds the double to every recorded
// /v1 reply, in the ollama dialect.
func TestOllamaDialectSpeaksTheRecordedWire(t *testing.T) {
	chattest.HoldToRecordings(t, recorded, "v1-", slices.Collect(maps.Keys(v1Cases)), func(t *testing.T, name string, stream bool) (int, []byte, bool) {
		step, ok := v1Cases[name]
		if !ok {
			return 0, nil, false
		}
		step.Dialect = "ollama"
		f := openaitest.NewServer(t, []string{"m"}, func(openaitest.Request, int) openaitest.Step { return step })
		status, body := chattest.Post(t, f.URL+"/chat/completions", fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"alpha_list"}}],"stream":%v}`, stream))
		return status, body, true
	}, "finish_reason", "role", "object", "type")
}
