package reference

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/scenarios"
)

// TestCommandTemplate: a --mcp-cmd template expands per artifact of a
// reference scenario to its domain and level, in granite's and the
// reference's names; a plain command is itself for any artifact; a field
// granite does not fill, or a source without a domain, is refused.
func TestCommandTemplate(t *testing.T) {
	ref := func(source, lv string) *scenarios.Artifact {
		return &scenarios.Artifact{ID: "s@" + lv, Source: source, Scenario: "s", Level: lv}
	}
	const python = "python -m mcp_granite.mcp_servers.{{.Domain}}.{{.Granularity}}_server"
	for _, c := range []struct {
		name, text string
		art        *scenarios.Artifact
		want, err  string
	}{
		{"primitive", python, ref("reference:kitchen", "L4"), "python -m mcp_granite.mcp_servers.kitchen.primitive_server", ""},
		{"composite_4", python, ref("reference:orchard", "L3"), "python -m mcp_granite.mcp_servers.orchard.composite_4_server", ""},
		{"composite_2", python, ref("reference:harbour", "L2"), "python -m mcp_granite.mcp_servers.harbour.composite_2_server", ""},
		{"composite_1", python, ref("reference:harbour", "L1"), "python -m mcp_granite.mcp_servers.harbour.composite_1_server", ""},
		{"level", "granite serve --domain {{.Domain}} --level {{.Level}} --transport stdio", ref("reference:kitchen", "L2"), "granite serve --domain kitchen --level L2 --transport stdio", ""},
		{"plain", "node server.js --port 0", &scenarios.Artifact{ID: "a", Source: "tools:x.json"}, "node server.js --port 0", ""},
		{"unknown field", "server {{.Nope}}", nil, "", "can't evaluate field Nope"},
		{"unparsable", "server {{.Level", nil, "", "unclosed action"},
		{"no domain", python, ref("tools:x.json", "L4"), "", `source "tools:x.json": expected reference:<domain>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := ParseCommandTemplate(c.text)
			if err == nil && c.art != nil {
				var got string
				got, err = tmpl.Expand(c.art)
				if err == nil && got != c.want {
					t.Errorf("expanded to %q; want %q", got, c.want)
				}
			}
			switch {
			case c.err == "" && err != nil:
				t.Errorf("error %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("error %v; want one saying %q", err, c.err)
			}
		})
	}
}
