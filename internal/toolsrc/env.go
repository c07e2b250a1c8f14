package toolsrc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/sandbox"
)

// SourceEnvVar names the variables of granite's environment, besides
// those every program gets and sourceEnv, that an MCP source command gets: a comma-separated list, for
// a server that needs a key ("GITHUB_TOKEN,OPENAI_API_KEY").
const SourceEnvVar = "GRANITE_SOURCE_ENV"

// sourceEnv lists what a source command gets of granite's environment
// besides what every program gets (sandbox.Passes): the XDG folders and
// proxies npx and uvx may need. Nothing else passes, so that a key granite
// holds never reaches another's server unless SourceEnvVar names it.
var sourceEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// SourceEnv is the environment of an MCP source command started in dir
// (granite's working folder when ""): the passed part of granite's, the
// variables SourceEnvVar names, and PWD.
func SourceEnv(dir string) []string {
	named := strings.Split(os.Getenv(SourceEnvVar), ",")
	for i := range named {
		named[i] = strings.TrimSpace(named[i])
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PWD" {
			continue
		}
		if sandbox.Passes(k) || slices.Contains(sourceEnv, k) || strings.HasPrefix(k, "XDG_") || k != "" && slices.Contains(named, k) {
			out = append(out, kv)
		}
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		out = append(out, "PWD="+abs)
	}
	return out
}
