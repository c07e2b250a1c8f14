package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcpgranite/granite/harness/results"
)

// mcpServerName is what the agent's client configuration calls granite's
// server; tools show up under it (Claude Code: mcp__granite__<tool>).
const mcpServerName = "granite"

// writeMCPConfig writes the MCP client configuration of a format into
// dir, readable by its owner only, and returns its path ("" for env,
// which has no file). The formats follow each client's documentation:
//
//   - claude: {"mcpServers": {NAME: {"type": "http", "url", "headers"}}},
//     what Claude Code's --mcp-config reads and Claude Desktop's
//     claude_desktop_config.json holds;
//   - codex: Codex CLI's config.toml, [mcp_servers.NAME] with url,
//     bearer_token_env_var (Codex takes no inline token) and
//     default_tools_approval_mode "approve" (codex exec runs with approval
//     policy never, which refuses every MCP tool not marked read-only
//     unless the server's tools are approved beforehand), read from
//     CODEX_HOME (set env CODEX_HOME: "{{.Dir}}");
//   - gemini: Gemini CLI's settings.json, mcpServers NAME with httpUrl,
//     headers and trust (no confirmation per call), at .gemini/ in the
//     folder the command runs in, where Gemini CLI looks for a
//     project's settings.
func writeMCPConfig(dir, format, url, token string) (string, error) {
	auth := map[string]string{"Authorization": "Bearer " + token}
	var path string
	var data []byte
	var err error
	switch format {
	case results.MCPConfigEnv:
		return "", nil
	case results.MCPConfigClaude:
		path = filepath.Join(dir, "mcp.json")
		data, err = json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
			mcpServerName: map[string]any{"type": "http", "url": url, "headers": auth}}}, "", "  ")
	case results.MCPConfigGemini:
		path = filepath.Join(dir, ".gemini", "settings.json")
		if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
			return "", err
		}
		data, err = json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
			mcpServerName: map[string]any{"httpUrl": url, "headers": auth, "trust": true}}}, "", "  ")
	case results.MCPConfigCodex:
		path = filepath.Join(dir, "config.toml")
		// TOML basic strings escape like JSON's for what a URL holds.
		data = fmt.Appendf(nil, "[mcp_servers.%s]\nurl = %s\nbearer_token_env_var = %s\ndefault_tools_approval_mode = %s\n",
			mcpServerName, strconv.Quote(url), strconv.Quote("GRANITE_MCP_TOKEN"), strconv.Quote("approve"))
	default:
		return "", fmt.Errorf("unknown mcp_config %q: want env, claude, codex or gemini", format)
	}
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(data, '\n'), 0o600)
}
