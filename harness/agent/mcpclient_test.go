package agent

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
)

// TestWriteMCPConfig writes each client's configuration and reads back
// what the client needs from it: the URL, the token (or where it is), and
// for the clients that ask before a tool runs, the setting that lets
// granite's tools run without asking (Gemini's trust, Codex's approval
// mode), since no one answers a prompt inside a trial.
func TestWriteMCPConfig(t *testing.T) {
	const url, token = "http://127.0.0.1:9/mcp", "5ecret-7oken"
	dir := t.TempDir()
	read := func(format string) []byte {
		t.Helper()
		path, err := writeMCPConfig(dir, format, url, token)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want a file of mode 0600", format, err, st.Mode())
		}
		b, _ := os.ReadFile(path)
		return b
	}
	var claude struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(read(results.MCPConfigClaude), &claude); err != nil {
		t.Fatal(err)
	}
	if s := claude.MCPServers[mcpServerName]; s.Type != "http" || s.URL != url || s.Headers["Authorization"] != "Bearer "+token {
		t.Errorf("claude: %+v", claude)
	}
	var gemini struct {
		MCPServers map[string]struct {
			HTTPURL string `json:"httpUrl"`
			Headers map[string]string
			Trust   bool
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(read(results.MCPConfigGemini), &gemini); err != nil {
		t.Fatal(err)
	}
	if s := gemini.MCPServers[mcpServerName]; s.HTTPURL != url || s.Headers["Authorization"] != "Bearer "+token || !s.Trust {
		t.Errorf("gemini: %+v", gemini)
	}
	codex := strings.Split(strings.TrimSpace(string(read(results.MCPConfigCodex))), "\n")
	want := []string{"[mcp_servers.granite]", `url = "` + url + `"`, `bearer_token_env_var = "GRANITE_MCP_TOKEN"`, `default_tools_approval_mode = "approve"`}
	if !slices.Equal(codex, want) {
		t.Errorf("codex config.toml:\n%s\nwant:\n%s", strings.Join(codex, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(strings.Join(codex, "\n"), token) {
		t.Error("codex config.toml holds the token; Codex reads it from GRANITE_MCP_TOKEN")
	}
}

// TestCommandEnvHome gives a command entry an empty HOME of its trial's
// own unless it says empty_home: false.
func TestCommandEnvHome(t *testing.T) {
	t.Setenv("HOME", "/home/granite-user")
	data := &CommandData{Home: "/trial/home", MCPURL: "http://x/mcp"}
	no, yes := false, true
	for _, c := range []struct {
		name  string
		empty *bool
		want  string
	}{{"default", nil, "/trial/home"}, {"empty_home: true", &yes, "/trial/home"}, {"empty_home: false", &no, "/home/granite-user"}} {
		env, err := commandEnv(results.ModelEntry{Name: "a", Backend: BackendCommand, EmptyHome: c.empty}, data, "tok")
		if err != nil {
			t.Fatal(err)
		}
		var homes []string
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				homes = append(homes, v)
			}
		}
		if len(homes) != 1 || homes[0] != c.want {
			t.Errorf("%s: HOME %q, want %q once", c.name, homes, c.want)
		}
	}
}
