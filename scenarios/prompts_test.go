package scenarios

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/mcpgranite/granite/internal/toolsrc"
)

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Get one vehicle by its ID (VH followed by 3 digits, e.g. VH003). Nothing changes.": "Get one vehicle by its ID (VH followed by 3 digits, e.g. VH003)",
		"List rooms, e.g. the hall. Then more.":                                             "List rooms, e.g. the hall",
		"Read a sensor, i.e. its value\nand unit.":                                          "Read a sensor, i.e. its value and unit",
		"Is it on? Ask it.":              "Is it on",
		"Version 1.2 of the API.":        "Version 1.2 of the API",
		"First paragraph\n\nSecond one.": "First paragraph",
		"No stop at all":                 "No stop at all",
		"":                               "",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestRequestReadsAsWords(t *testing.T) {
	coarse := &Tool{Tool: toolsrc.Tool{Name: "yard_query", Description: "Read anything in the fleet. Nothing changes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"action":{"type":"string","description":"What to do. list_carts: List vehicles (IDs like VH005). get_cart: Get one vehicle by its ID (e.g. VH003). forget_cart: Drop it."},
			"status":{"type":"string","description":"available: parked and ready. busy: on a trip."}}}`)}}
	for args, want := range map[string]string{
		`{"action":"get_cart","vehicle_id":"VH001"}`:             "Get one vehicle by its ID (e.g. VH003), with vehicle id VH001.",
		`{"action":"list_carts","status":"available","limit":5}`: "List vehicles (IDs like VH005), with limit 5 and status available.",
		`{"action":"unknown_op","note":"two words"}`:             `Read anything in the fleet, with action unknown_op and note "two words".`,
		`{}`: "Read anything in the fleet.",
	} {
		if got := coarse.request(json.RawMessage(args)); got != want {
			t.Errorf("request(%s) = %q; want %q", args, got, want)
		}
	}
	if got := actionDescription("forget_cart: Drop it. get_cart: Get it.", "get_cart"); got != "Get it" {
		t.Errorf("a value found inside another: %q", got)
	}
	if got := lowerFirst("GPU power of a node"); got != "GPU power of a node" {
		t.Errorf("lowerFirst lowered an acronym: %q", got)
	}
}

// TestArtifactIDsCarryNoCommandLine: an artifact id, and so the trial id
// built on it, is letters, digits, _ and - whatever the source: a live
// server's command line (spaces, @, slashes) or a model tag (a colon).
func TestArtifactIDsCarryNoCommandLine(t *testing.T) {
	for _, c := range []struct{ source, backend, want string }{
		{"domain:fleet/L4", "offline", "domain-fleet-L4-offline-0001"},
		{"mcp:npx -y @modelcontextprotocol/server-everything", "qwen3:4b", "mcp-npx-y-modelcontextprotocol-server-everything-qwen3-4b-0001"},
		{"tools:../x/tools.json", "offline", "tools-x-tools-json-offline-0001"},
	} {
		if got := artifactID(c.source, c.backend, 1); got != c.want {
			t.Errorf("artifactID(%q, %q) = %q; want %q", c.source, c.backend, got, c.want)
		}
	}
	arts, err := Offline("mcp:npx -y @scope/server --port 3", seventyTools()[:5], 0)
	if err != nil {
		t.Fatal(err)
	}
	safe := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	for _, a := range arts {
		if !safe.MatchString(a.ID) {
			t.Errorf("artifact id %q carries the command line", a.ID)
		}
	}
}
