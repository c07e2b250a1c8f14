package agent

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/sandbox"
)

// TestIsolationFallsBack: where the kernel refuses namespaces, a run of
// agent commands says so before the first trial and runs them with
// isolation none, unless --isolation namespaces asks for them; a run with
// no agent command decides nothing.
func TestIsolationFallsBack(t *testing.T) {
	// The entries with trials to run: an agent command's, or none (a run
	// of the oracle alone).
	commands := []results.ModelEntry{{Name: "agent", Backend: BackendCommand, Command: []string{"agent"}, MCPConfig: results.MCPConfigEnv}}
	was := namespacesAvailable
	namespacesAvailable = func() (bool, string) { return false, "user namespaces are off (user.max_user_namespaces = 0)" }
	defer func() { namespacesAvailable = was }()
	cases := []struct {
		name, asked string
		entries     []results.ModelEntry
		want        sandbox.Mode
		says, err   string
	}{
		{"auto", "", commands, sandbox.None, "namespaces are unavailable here (user namespaces are off", ""},
		{"none asked", IsolationNone, commands, sandbox.None, "--isolation none", ""},
		{"namespaces asked", IsolationNamespaces, commands, "", "", "cannot run in namespaces here: user namespaces are off"},
		{"a typo", "namespace", commands, "", "", `found isolation "namespace"; expected auto, namespaces or none`},
		{"no agent command", IsolationNamespaces, nil, "", "", ""},
	}
	for _, c := range cases {
		var w strings.Builder
		got, err := isolation(c.entries, c.asked, &w)
		if got != c.want || !strings.Contains(w.String(), c.says) || (c.says == "") != (w.Len() == 0) {
			t.Errorf("%s: mode %q, said %q; want %q, saying %q", c.name, got, w.String(), c.want, c.says)
		}
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v; want %q", c.name, err, c.err)
		}
	}
}
