package toolsrc

import (
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestFromDomainListsEveryTool: a domain's tools at each level, in its
// order, each with a schema that compiles.
func TestFromDomainListsEveryTool(t *testing.T) {
	for _, lv := range []level.Level{level.L4, level.L3, level.L2, level.L1} {
		tools := FromDomain(tiny.Domain, lv)
		want := tiny.Domain.Tools[lv]
		if len(tools) != len(want) {
			t.Fatalf("%s: %d tools, want %d", lv, len(tools), len(want))
		}
		for i := range tools {
			if tools[i].Name != want[i].Name || tools[i].Description != want[i].Description {
				t.Errorf("%s: tool %d is %q, want %q", lv, i, tools[i].Name, want[i].Name)
			}
			if err := tools[i].Compile(); err != nil {
				t.Errorf("%s: %v", lv, err)
			}
		}
	}
}
