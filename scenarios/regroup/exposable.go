package regroup

import (
	"regexp"
	"slices"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// clientName is a tool name every MCP client takes: what the MCP
// specification says a name SHOULD be (ASCII letters, digits, _, - and
// .), at most 64 characters, as package surface requires of each tool
// of an interface it builds.
var clientName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Skip is a tool left out of what granite builds over a server, and why.
type Skip struct {
	Tool string
	Why  string
}

// Exposable splits a server's tools into those whose names an interface
// (package surface: granite list --interfaces, granite advise) can carry
// and those skipped, each with why, so that one name outside what
// clients take leaves the rest of the server usable. The specification
// only recommends its characters, so regrouping and relaying (granite
// regroup, granite serve) keep every tool, whatever its name.
func Exposable(tools []toolsrc.Tool) ([]toolsrc.Tool, []Skip) {
	var kept []toolsrc.Tool
	var skipped []Skip
	for _, t := range tools {
		if !clientName.MatchString(t.Name) {
			skipped = append(skipped, Skip{Tool: t.Name, Why: "its name is not one every MCP client takes (1 to 64 ASCII letters, digits, _ . -), which an interface needs; granite regroup and granite serve keep it"})
			continue
		}
		kept = append(kept, t)
	}
	return kept, skipped
}

// Only returns the groups of just these tools (those Exposable kept): the
// others are taken out of every group, a group left empty is dropped,
// and a level left with no group is derived anew.
func (g *Groups) Only(tools []toolsrc.Tool) *Groups {
	kept := map[string]bool{}
	for _, t := range tools {
		kept[t.Name] = true
	}
	out := &Groups{Server: g.Server}
	d := Derive(g.Server, tools)
	for _, lv := range []level.Level{level.L3, level.L2, level.L1} {
		var groups []Group
		for _, grp := range g.Level(lv) {
			grp.Tools = slices.DeleteFunc(slices.Clone(grp.Tools), func(n string) bool { return !kept[n] })
			if len(grp.Tools) > 0 {
				groups = append(groups, grp)
			}
		}
		if groups == nil {
			groups = d.Level(lv)
		}
		out.set(lv, groups)
	}
	return out
}
