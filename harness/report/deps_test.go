package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReportLinksOnlyTheResults keeps granite report a reader of the
// results contract: it must not link the agents' Ollama client, the
// meters' NVML or the MCP servers.
func TestReportLinksOnlyTheResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/NVIDIA/go-nvml", "github.com/ollama/ollama", "github.com/mark3labs/mcp-go/server"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("harness/report links %s; it should import harness/results, not the packages that write results", dep)
			}
		}
	}
}
