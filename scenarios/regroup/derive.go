package regroup

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

// Categories are the paper's four task categories, the L3 tools of a
// derivation, in this order.
var Categories = []string{"status_query", "action_execution", "configuration", "analysis"}

// Verbs and words that classify a tool by its name when its annotations
// do not. They are matched against the words of the name (split at _, -,
// spaces and camelCase humps), lowercased.
var (
	// readVerbs: a tool whose name starts with one of these only reads.
	readVerbs = set("get", "list", "read", "search", "find", "query", "show", "describe", "fetch", "lookup", "view",
		"open", "check", "count", "inspect", "browse", "explore", "retrieve", "load", "peek", "stat", "echo", "print")
	// analysisWords: a read-only tool whose name has one of these
	// computes over data rather than reading it.
	analysisWords = set("analyze", "analyse", "analysis", "aggregate", "compute", "calculate", "summarize", "summarise",
		"summary", "stats", "statistics", "compare", "diff", "sum", "average", "avg", "total", "trend", "trends",
		"forecast", "predict", "estimate", "evaluate", "metrics", "report", "score", "count")
	// configWords: a tool that changes things whose name has one of these
	// changes how the system behaves rather than acting in it.
	configWords = set("config", "configure", "configuration", "setting", "settings", "preference", "preferences",
		"option", "options", "rule", "rules", "policy", "policies", "schedule", "automation", "permission",
		"permissions", "enable", "disable", "toggle", "register", "unregister", "install", "uninstall",
		"subscribe", "unsubscribe", "allow", "deny", "mode", "level", "limit", "quota")
)

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

var hump = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// words splits a tool name into lowercase words.
func words(name string) []string {
	name = hump.ReplaceAllString(name, "${1} ${2}")
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Nature is how a derivation classed a tool.
type Nature struct {
	ReadOnly bool
	// ByVerb is set when the tool has no readOnlyHint and the verb of its
	// name decided.
	ByVerb   bool
	Category string
}

// Classify says whether a tool only reads, by its readOnlyHint or, when it
// has none, by the verb its name starts with (a verb not known to read
// counts as a change, the safe side); and its task category: a read
// naming an analysis word is analysis, other reads status_query; a change
// naming a configuration word is configuration, other changes
// action_execution.
func Classify(t *toolsrc.Tool) Nature {
	ws := words(t.Name)
	var n Nature
	if v, ok := t.Annotations["readOnlyHint"].(bool); ok {
		n.ReadOnly = v
	} else {
		n.ByVerb = true
		n.ReadOnly = len(ws) > 0 && readVerbs[ws[0]]
	}
	has := func(vocab map[string]bool) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return vocab[w] })
	}
	switch {
	case n.ReadOnly && has(analysisWords):
		n.Category = "analysis"
	case n.ReadOnly:
		n.Category = "status_query"
	case has(configWords):
		n.Category = "configuration"
	default:
		n.Category = "action_execution"
	}
	return n
}

// Derive groups a server's tools without a groups file: L3 by task
// category (Classify), L2 into reads (<server>_query) and changes
// (<server>_control), L1 as one tool named after the server. Tools keep
// the server's order inside a group; a level's groups follow Categories,
// then query before control. A group's description says which tools were
// classed by the verb of their name, having no readOnlyHint.
func Derive(server string, tools []toolsrc.Tool) *Groups {
	g := &Groups{Server: server}
	byCat := map[string][]string{}
	var reads, writes, byVerb []string
	for i := range tools {
		t := &tools[i]
		n := Classify(t)
		byCat[n.Category] = append(byCat[n.Category], t.Name)
		if n.ReadOnly {
			reads = append(reads, t.Name)
		} else {
			writes = append(writes, t.Name)
		}
		if n.ByVerb {
			byVerb = append(byVerb, t.Name)
		}
	}
	note := func(members []string) string {
		var mine []string
		for _, m := range members {
			if slices.Contains(byVerb, m) {
				mine = append(mine, m)
			}
		}
		if len(mine) == 0 {
			return ""
		}
		return fmt.Sprintf(" %s: no readOnlyHint, classed by the verb of the name.", strings.Join(mine, ", "))
	}
	for _, c := range Categories {
		if ms := byCat[c]; len(ms) > 0 {
			g.L3 = append(g.L3, Group{Name: server + "_" + c, Category: c, Tools: ms,
				Description: fmt.Sprintf("%s: %s.", server, strings.ReplaceAll(c, "_", " ")) + note(ms)})
		}
	}
	if len(reads) > 0 {
		g.L2 = append(g.L2, Group{Name: server + "_query", Category: "query", Tools: reads,
			Description: fmt.Sprintf("Read anything in %s; nothing changes.", server) + note(reads)})
	}
	if len(writes) > 0 {
		g.L2 = append(g.L2, Group{Name: server + "_control", Category: "control", Tools: writes,
			Description: fmt.Sprintf("Change %s.", server) + note(writes)})
	}
	var all []string
	for _, t := range tools {
		all = append(all, t.Name)
	}
	if len(all) > 0 {
		g.L1 = []Group{{Name: server, Category: "all", Tools: all, Description: fmt.Sprintf("Query and control %s.", server)}}
	}
	return g
}

// maxServerName bounds a server's short name so that every name derived
// from it fits the groups schema: the server at most 48 characters, a
// group (<server>_action_execution, the longest) at most 64.
const maxServerName = 32

// ServerName turns a server's self-reported name (or a file name) into a
// tool name prefix: lowercase words joined by _, without the words
// "mcp" and "server", which every such name has. Only ASCII letters and
// digits are kept, and at most maxServerName characters, as the groups
// schema allows in the names a groups file derives from it.
func ServerName(s string) string {
	var keep []string
	for _, w := range words(s) {
		w = strings.Map(func(r rune) rune {
			if r < utf8.RuneSelf {
				return r
			}
			return -1
		}, w)
		if w != "" && w != "mcp" && w != "server" && w != "servers" && w != "modelcontextprotocol" && w != "json" && w != "tools" {
			keep = append(keep, w)
		}
	}
	name := strings.Join(keep, "_")
	if len(name) > maxServerName {
		name = strings.TrimRight(name[:maxServerName], "_")
	}
	if name == "" {
		return "server"
	}
	return name
}
