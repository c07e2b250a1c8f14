package agentlane_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// agentsDoc is docs/agents.md, where the entries are documented.
func agentsDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsGiveTheLanesEntries: every entry the lane runs is in
// docs/agents.md as a YAML block of the very same text, and the page names
// each CLI at the version the lane installs; every CLI the lane runs has
// an entry, and every entry file is run.
func TestDocsGiveTheLanesEntries(t *testing.T) {
	doc := agentsDoc(t)
	files, err := filepath.Glob(filepath.Join("testdata", "entries", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		names = append(names, name)
		if !strings.Contains(doc, "```yaml\n"+entry(t, name)+"```\n") {
			t.Errorf("docs/agents.md lacks the %s entry as %s has it:\n%s", name, f, entry(t, name))
		}
	}
	slices.Sort(names)
	lane := slices.Sorted(slices.Values(clis))
	if !slices.Equal(names, lane) {
		t.Errorf("entry files %v, the lane runs %v; want the same", names, lane)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "npm", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	for name, version := range pkg.Dependencies {
		if want := "(tested: `" + name + "` " + version + ")"; !strings.Contains(doc, want) {
			t.Errorf("docs/agents.md does not say %s", want)
		}
	}
}

// TestGooseEntryFollowsItsDocs: Goose cannot be installed from the
// registries the lane uses, so its entry is checked against the format
// Goose's documentation gives (docs/guides/config-files.md, "Extensions
// Configuration"): the configuration its wrapper writes, with the trial's
// variables filled in, is YAML whose granite extension is of type
// streamable_http with a uri, the bearer token in headers, and only keys
// that documentation lists; and the wrapper runs goose without a session
// to resume, on the prompt.
func TestGooseEntryFollowsItsDocs(t *testing.T) {
	doc := agentsDoc(t)
	at := strings.Index(doc, "**Goose**")
	if at < 0 {
		t.Fatal("docs/agents.md has no Goose entry")
	}
	sec := doc[at:]
	if !strings.Contains(sec[:600], "**untested**") {
		t.Error("the Goose entry does not say it is untested")
	}
	start := strings.Index(sec, "<<EOF\n")
	end := strings.Index(sec, "\nEOF\n")
	if start < 0 || end < start {
		t.Fatal("the Goose wrapper writes no configuration through a here-document")
	}
	conf := strings.NewReplacer("$GRANITE_MCP_URL", "http://127.0.0.1:9/mcp", "$GRANITE_MCP_TOKEN", "t0ken").Replace(sec[start+len("<<EOF\n") : end])
	var cfg struct {
		Provider   string                    `yaml:"GOOSE_PROVIDER"`
		Model      string                    `yaml:"GOOSE_MODEL"`
		Extensions map[string]map[string]any `yaml:"extensions"`
	}
	if err := yaml.Unmarshal([]byte(conf), &cfg); err != nil {
		t.Fatalf("the Goose configuration is not YAML: %v\n%s", err, conf)
	}
	ext, ok := cfg.Extensions["granite"]
	if !ok || cfg.Provider == "" || cfg.Model == "" {
		t.Fatalf("configuration %+v; want GOOSE_PROVIDER, GOOSE_MODEL and an extension granite", cfg)
	}
	documented := []string{"type", "name", "enabled", "uri", "headers", "env_keys", "envs", "timeout", "bundled", "display_name", "available_tools", "description"}
	for k := range ext {
		if !slices.Contains(documented, k) {
			t.Errorf("extension key %q is not one Goose documents", k)
		}
	}
	headers, _ := ext["headers"].(map[string]any)
	if ext["type"] != "streamable_http" || ext["uri"] != "http://127.0.0.1:9/mcp" || ext["enabled"] != true || ext["name"] != "granite" || headers["Authorization"] != "Bearer t0ken" {
		t.Errorf("extension %+v; want an enabled streamable_http extension named granite at the trial's URL with its bearer token", ext)
	}
	if run := sec[end:]; !strings.Contains(run, "exec goose run --no-session") || !strings.Contains(run, `-t "$1"`) {
		t.Error("the wrapper does not run goose run --no-session on its prompt")
	}
}
