package ollamatest_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/internal/models/chattest"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamatest"
)

// The recorded replies of a real Ollama (testdata/real, written by the
// tinymodel package's real-server test with -record) hold the double to
// the wire: for each recorded case the double, scripted the same way,
// must send lines of the same shapes (keys, JSON types, and the values
// that say what a line is: done, done_reason, role), and error statuses
// with the same status and body shape.

// nativeCases maps a recorded case to the step that scripts it. The
// template-parsed invalid-JSON and unknown-tool cases are calls Ollama's
// tool parser dropped: an empty reply with tokens counted.
var nativeCases = map[string]ollamatest.Step{
	"right-call":                ollamatest.Step{Calls: []ollamatest.Call{{Name: "alpha_list", Args: `{"limit":5}`}}},
	"string-args":               ollamatest.Step{Calls: []ollamatest.Call{{Name: "alpha_list", Args: `{"limit":"5"}`}}},
	"answer":                    ollamatest.Step{Content: "There are 5 items."},
	"invalid-json":              ollamatest.Step{Dropped: true},
	"unknown-tool":              ollamatest.Step{Dropped: true},
	"loop":                      ollamatest.Step{Repeat: " again"},
	"parser-qwen3-right-call":   ollamatest.Step{Calls: []ollamatest.Call{{Name: "alpha_list", Args: `{"limit":5}`}}},
	"parser-qwen3-string-args":  ollamatest.Step{Calls: []ollamatest.Call{{Name: "alpha_list", Args: `{"limit":"5"}`}}},
	"parser-qwen3-unknown-tool": ollamatest.Step{Calls: []ollamatest.Call{{Name: "gamma_unknown", Args: `{"limit":5}`}}},
	"parser-qwen3-answer":       ollamatest.Step{Content: "There are 5 items."},
	"parser-qwen3-invalid-json": ollamatest.Step{Status: 500, ErrBody: "failed to parse JSON: unexpected end of JSON input"},
	"parser-qwen3-loop":         ollamatest.Step{Repeat: " again"},
}

// TestDoubleSpeaksTheRecordedWire holds the double to every recorded
// native reply.
func TestDoubleSpeaksTheRecordedWire(t *testing.T) {
	chattest.HoldToRecordings(t, filepath.Join("testdata", "real"), "native-", slices.Collect(maps.Keys(nativeCases)), func(t *testing.T, name string, stream bool) (int, []byte, bool) {
		step, ok := nativeCases[name]
		if !ok {
			return 0, nil, false
		}
		f := ollamatest.NewServer(t, []string{"m"}, func(ollamatest.Request, int) ollamatest.Step { return step })
		status, body := chattest.Post(t, f.URL+"/api/chat", fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"alpha_list"}}],"stream":%v}`, stream))
		return status, body, true
	}, "done", "done_reason", "role")
}
