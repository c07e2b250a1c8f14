package agentlane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/sandbox"
	"github.com/mcpgranite/granite/internal/scriptedmodel"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
)

// clis are the lane's agent CLIs, each by the name of its entry in
// testdata/entries (and in docs/agents.md).
var clis = []string{"qwen-code", "claude-code", "codex", "gemini-cli"}

// dropped are the schema keywords a CLI leaves out of every tool's input
// schema before it sends it to the model, as this lane found them: the
// lane checks that each of them is in fact left out (so a version that
// keeps them is noticed) and that nothing else is.
var dropped = map[string][]string{
	// qwen-code 0.24.4 sends parameters without additionalProperties.
	"qwen-code": {"additionalProperties"},
	// Codex CLI 0.171.0 keeps a JSON Schema subset: no pattern, format,
	// bounds or default (which granite also states in each tool's
	// description, for clients like it), and no description of a
	// property (at L3-L1 that is where each action is explained).
	"codex": {"pattern", "format", "maximum", "minimum", "maxLength", "default", "description"},
}

// TestRealAgents runs every CLI, with its documented entry, on a read
// scenario and a write scenario at every level, in namespaces where the
// kernel allows them, against the scripted model server: each trial must
// score TC 1, and every request the CLI sent the model must offer each of
// the level's tools with its whole input schema.
func TestRealAgents(t *testing.T) {
	if os.Getenv("GRANITE_AGENTS") == "" {
		t.Skip("the real-agents lane runs under make agents-test (GRANITE_AGENTS=1): it installs the agent CLIs from npm, about 1 GB")
	}
	bin := install(t)
	spec := spectest.All(t)
	d, picked := pick(t, spec)
	var scripts []scriptedmodel.Script
	for _, s := range picked {
		answer := oracleAnswer(t, spec, d, s)
		for _, lv := range level.Levels {
			sc := scriptedmodel.Script{Prompt: s.Prompt, Answer: answer}
			for _, g := range s.Gold[lv] {
				sc.Calls = append(sc.Calls, scriptedmodel.Call{Tool: g.Tool, Arguments: g.JSON()})
			}
			scripts = append(scripts, sc)
		}
	}
	// Codex's --oss provider checks that its model is there (Ollama's
	// /api/tags) before it starts.
	model := scriptedmodel.New(scripts, "gpt-oss:20b")
	hs := httptest.NewServer(model)
	defer hs.Close()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range map[string]string{
		"OPENAI_BASE_URL": hs.URL + "/v1", "OPENAI_API_KEY": "sk-scripted", "OPENAI_MODEL": "scripted",
		"ANTHROPIC_BASE_URL": hs.URL, "ANTHROPIC_API_KEY": "sk-ant-scripted", "ANTHROPIC_MODEL": "scripted",
		"CODEX_API_KEY": "sk-scripted", "CODEX_OSS_BASE_URL": hs.URL + "/v1", "GEMINI_API_KEY": "scripted", "GOOGLE_GEMINI_BASE_URL": hs.URL,
	} {
		t.Setenv(k, v)
	}
	nsOK, why := sandbox.Available()
	if !nsOK {
		t.Logf("the CLIs run without namespaces here (%s): the lane checks them, not their containment", why)
	}
	only := os.Getenv("GRANITE_AGENTS_ONLY")
	for _, cli := range clis {
		if only != "" && !slices.Contains(strings.Split(only, ","), cli) {
			continue
		}
		t.Run(cli, func(t *testing.T) {
			before := len(model.Requests())
			recs := runCLI(t, spec, d, picked, cli)
			if len(recs) != len(picked)*len(levels()) {
				t.Errorf("%d records, want %d", len(recs), len(picked)*len(levels()))
			}
			for _, r := range recs {
				if r.Metrics == nil || r.Metrics.TC != 1 {
					var why []string
					if r.Metrics != nil {
						why = r.Metrics.Why
					}
					t.Errorf("%s: TC %v (%v), stop %s, class %s, error %q, %d calls, connection %+v, stderr %q", r.TrialID, tcOf(r), why, r.StopReason, r.ErrorClass, r.Error, len(r.Calls), connOf(r), stderrOf(r))
				}
				if c := r.Command; c == nil || c.Isolation == "" || nsOK && c.Isolation != agent.IsolationNamespaces {
					t.Errorf("%s: command %+v, want it run in namespaces where the kernel allows them (here: %v)", r.TrialID, c, nsOK)
				}
			}
			checkSchemas(t, d, dropped[cli], model.Requests()[before:])
		})
	}
	if only == "" || slices.Contains(strings.Split(only, ","), "misconfigured") {
		t.Run("misconfigured", func(t *testing.T) { misconfigured(t, spec, d, picked) })
	}
}

// misconfigured runs Gemini CLI as its own hint suggests for an untrusted
// folder (--skip-trust, instead of trusting the workspace): it runs, but
// leaves granite's server disabled and answers without it. The record
// must say the agent never connected, not that it chose to call nothing.
func misconfigured(t *testing.T, spec *speclang.Spec, d *speclang.Domain, picked []*speclang.Scenario) {
	t.Helper()
	text := strings.NewReplacer("name: gemini-cli", "name: gemini-cli-skip-trust",
		"exec gemini -m", "exec gemini --skip-trust -m",
		`    env: {GEMINI_CLI_TRUST_WORKSPACE: "true"}`+"\n", "").Replace(entry(t, "gemini-cli"))
	if !strings.Contains(text, "--skip-trust") || strings.Contains(text, "GEMINI_CLI_TRUST_WORKSPACE") {
		t.Fatalf("could not derive the misconfigured entry from:\n%s", text)
	}
	recs := runEntry(t, spec, d, picked[:1], "gemini-cli-skip-trust", text, []string{"L4"})
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	t.Logf("%s: %s (%s), connection %+v", r.TrialID, r.ErrorClass, r.Error, connOf(r))
	if r.ErrorClass != results.ErrNotConnected || r.StopReason != results.StopError || len(r.Calls) != 0 || tcOf(r) != 0.0 {
		t.Errorf("class %q, stop %s, %d calls, TC %v, error %q, connection %+v, stderr %q; want agent_not_connected", r.ErrorClass, r.StopReason, len(r.Calls), tcOf(r), r.Error, connOf(r), stderrOf(r))
	}
}

func connOf(r results.Record) *results.Connection {
	if r.Command == nil {
		return nil
	}
	return r.Command.Connection
}

func stderrOf(r results.Record) string {
	if r.Command == nil {
		return ""
	}
	return r.Command.StderrTail
}

func tcOf(r results.Record) any {
	if r.Metrics == nil {
		return "unscored"
	}
	return r.Metrics.TC
}

// levels are the levels the lane plays: all four, or those
// GRANITE_AGENTS_LEVELS lists (L4,L1), to try one CLI faster.
func levels() []string {
	if v := os.Getenv("GRANITE_AGENTS_LEVELS"); v != "" {
		return strings.Split(v, ",")
	}
	var out []string
	for _, lv := range level.Levels {
		out = append(out, string(lv))
	}
	return out
}

// install installs the pinned CLIs and returns their bin folder.
func install(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not found: the real-agents lane needs Node (CI has it)")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", filepath.Join(dir, "install.sh")).CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	return filepath.Join(dir, "node_modules", ".bin")
}

// pick is the first domain's first scenario that changes nothing (a
// read) and first that changes the store (a write), read from the spec
// at run time.
func pick(t *testing.T, spec *speclang.Spec) (*speclang.Domain, []*speclang.Scenario) {
	t.Helper()
	d := spec.Domains[0]
	var read, write *speclang.Scenario
	for _, s := range d.Scenarios {
		switch {
		case len(s.State) == 0 && read == nil:
			read = s
		case len(s.State) > 0 && write == nil:
			write = s
		}
	}
	if read == nil || write == nil {
		t.Fatalf("domain %s has no read scenario or no write scenario", d.Name)
	}
	return d, []*speclang.Scenario{read, write}
}

// oracleAnswer is the built-in oracle's answer to a scenario: its facts,
// each bound to its subject, as a careful agent writes what it found.
func oracleAnswer(t *testing.T, spec *speclang.Spec, d *speclang.Domain, s *speclang.Scenario) string {
	t.Helper()
	dom, ok := gen.Lookup(d.Name)
	if !ok {
		t.Fatalf("domain %s is not generated", d.Name)
	}
	rights, err := gold.RightsOf(context.Background(), dom, s)
	if err != nil {
		t.Fatal(err)
	}
	return score.NewScenarioGold(d, s, dom.NewStore().Snapshot(), rights).Gold(level.L4, s.Gold[level.L4], dom).OracleAnswer()
}

// entry is a CLI's entry as docs/agents.md gives it.
func entry(t *testing.T, cli string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "entries", cli+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runCLI runs the CLI's entry on the picked scenarios at every level and
// returns the records.
func runCLI(t *testing.T, spec *speclang.Spec, d *speclang.Domain, picked []*speclang.Scenario, cli string) []results.Record {
	t.Helper()
	return runEntry(t, spec, d, picked, cli, entry(t, cli), levels())
}

// runEntry runs an entry's text on the picked scenarios at the levels and
// returns the records.
func runEntry(t *testing.T, spec *speclang.Spec, d *speclang.Domain, picked []*speclang.Scenario, cli, text string, lvs []string) []results.Record {
	t.Helper()
	var ids []string
	for _, s := range picked {
		ids = append(ids, s.ID)
	}
	cfgText := fmt.Sprintf("name: agents-%s\ndomains: [%s]\nscenarios: [%s]\ngranularities: [%s]\nmeter: none\nagent_timeout_seconds: 120\nmodels:\n%s",
		cli, d.Name, strings.Join(ids, ", "), strings.Join(lvs, ", "), text)
	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := harness.LoadConfig(path, spec)
	if err != nil {
		t.Fatalf("the %s entry does not load: %v", cli, err)
	}
	out := t.TempDir()
	if _, err := harness.Run(context.Background(), cfg, spec, harness.Options{Out: out, Lookup: gen.Lookup, Isolation: agent.IsolationAuto}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkSchemas checks that every request that played a script offered
// each of its level's tools with the server's whole input schema.
func checkSchemas(t *testing.T, d *speclang.Domain, drops []string, reqs []scriptedmodel.Request) {
	t.Helper()
	dom, _ := gen.Lookup(d.Name)
	played, lost := 0, map[string]bool{}
	for _, r := range reqs {
		if r.Script < 0 {
			continue
		}
		played++
		lv := level.Levels[r.Script%len(level.Levels)]
		for _, tool := range dom.Tools[lv] {
			i := scriptedmodel.Offered(tool.Name, r.Tools)
			if i < 0 {
				t.Errorf("a %s request at %s does not offer %s (offered %d tools)", r.API, lv, tool.Name, len(r.Tools))
				continue
			}
			var want, got any
			if err := json.Unmarshal([]byte(tool.InputSchema), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(r.Tools[i].Schema, &got); err != nil {
				t.Errorf("a %s request at %s: %s's schema is not JSON: %v", r.API, lv, tool.Name, err)
				continue
			}
			if miss := missing(want, got, "$", drops, lost); miss != "" {
				t.Errorf("a %s request at %s: %s's input schema lacks %s of the server's; it sent %.600s", r.API, lv, tool.Name, miss, r.Tools[i].Schema)
			}
			if !strings.Contains(r.Tools[i].Description, firstLine(tool.Description)) {
				t.Errorf("a %s request at %s: %s's description %q lacks the server's %q", r.API, lv, tool.Name, r.Tools[i].Description, firstLine(tool.Description))
			}
		}
	}
	for _, k := range drops {
		if wasLost, ok := lost[k]; ok && !wasLost {
			t.Errorf("the CLI now keeps %s in the schemas it sends: take it off its dropped list", k)
		}
	}
	if played == 0 {
		t.Errorf("no request played a script: the CLI never asked the model with a scenario's prompt and tools")
		for _, r := range reqs {
			var names []string
			for _, x := range r.Tools {
				names = append(names, x.Name)
			}
			t.Logf("%s request, model %q, tools %v, user text %q", r.API, r.Model, names, r.User)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// missing is the first path of want that got does not hold ("" when it
// holds all of it): every key of an object, every item of an array,
// every value, the same. A key of drops got may leave out: lost notes
// each such key want has, true once got left it out.
func missing(want, got any, at string, drops []string, lost map[string]bool) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return at
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range w {
				if !yield(k) {
					return
				}
			}
		}) {
			if k == "$schema" {
				continue // a dialect tag, which clients drop
			}
			if _, kept := g[k]; slices.Contains(drops, k) {
				lost[k] = lost[k] || !kept // false: seen, and kept
				if !kept {
					continue
				}
			}
			if m := missing(w[k], g[k], at+"."+k, drops, lost); m != "" {
				return m
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return at
		}
		for i := range w {
			if m := missing(w[i], g[i], fmt.Sprintf("%s[%d]", at, i), drops, lost); m != "" {
				return m
			}
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return at
		}
		return ""
	}
}
