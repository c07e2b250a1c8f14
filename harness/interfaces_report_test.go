package harness

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/chattest"
	"github.com/mcpgranite/granite/internal/models/openai/openaitest"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
)

// toolsSignature tells the interfaces a request offers apart: each tool's
// name, description and top-level argument names, in name order (the
// order tools/list gives).
func toolsSignature(names []string, descs []string, props [][]string) string {
	var parts []string
	for i := range names {
		parts = append(parts, names[i]+"\x00"+descs[i]+"\x00"+strings.Join(props[i], ","))
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

func propNames(schema []byte) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	return slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
}

// TestReportRecoversInterfaceProperty runs a scripted subject whose
// success depends on one known property of the interface — it completes
// every task on an interface whose tools are described and none on one
// whose tools are not — over many interfaces of several domains, through
// the OpenAI-compatible wire format, and checks that the report names
// that property as the strongest predictor of TC, and that the paired
// tests against L4 flag exactly the interfaces without descriptions.
func TestReportRecoversInterfaceProperty(t *testing.T) {
	spec := loadSpec(t)
	repo := spec
	domains := spec.Domains[:3]
	var ifaceSpecs []surface.Spec
	for _, lv := range level.Levels {
		presets := []string{"terse", "nodesc", "schemaonly"}
		if lv != level.L4 {
			// Longer schemas with the same descriptions keep schema size
			// from standing in for the words.
			presets = append(presets, "oneof")
		}
		for _, p := range presets {
			s, err := surface.Parse(string(lv) + "-" + p)
			if err != nil {
				t.Fatal(err)
			}
			ifaceSpecs = append(ifaceSpecs, s)
		}
	}
	// What the subject calls for each prompt and tool list: the scenario's
	// gold as the interface encodes it.
	plays, answers := map[string][]chattest.Call{}, map[string]string{}
	var scenarioIDs []string
	for _, d := range domains {
		dom, _ := gen.Lookup(d.Name)
		scens := []int{0, len(d.Scenarios) / 2, len(d.Scenarios) - 1}
		for _, k := range scens {
			scenarioIDs = append(scenarioIDs, d.Scenarios[k].ID)
		}
		all := []surface.Spec{}
		for _, lv := range level.Levels {
			all = append(all, surface.Spec{Name: string(lv), Level: lv})
		}
		for _, spec := range append(all, ifaceSpecs...) {
			iface, err := serve.DomainInterface(dom, spec)
			if err != nil {
				t.Fatal(err)
			}
			var names, descs []string
			var props [][]string
			for _, tool := range iface.Tools {
				names, descs, props = append(names, tool.Name), append(descs, tool.Description), append(props, propNames(tool.InputSchema))
			}
			for _, k := range scens {
				s := d.Scenarios[k]
				var calls []chattest.Call
				for _, g := range s.Gold[spec.Level] {
					c := encodeCall(iface, g.Tool, g.Args)
					calls = append(calls, chattest.Call{Name: c.Name, Args: string(c.Arguments)})
				}
				plays[s.Prompt+"\x02"+toolsSignature(names, descs, props)] = calls
				answers[s.Prompt] = oracleAnswer(repo, gen.Lookup, s)
			}
		}
	}
	script := func(req openaitest.Request, _ int) openaitest.Step {
		prompt, _ := req.Progress()
		var names, descs []string
		var props [][]string
		for _, tool := range req.Tools {
			if tool.Function.Description == "" {
				return openaitest.Step{Content: "I cannot tell what these tools do."}
			}
			names, descs, props = append(names, tool.Function.Name), append(descs, tool.Function.Description), append(props, propNames(tool.Function.Parameters))
		}
		calls, ok := plays[prompt+"\x02"+toolsSignature(names, descs, props)]
		if !ok {
			return openaitest.Step{Content: "unknown task"}
		}
		if done := len(req.ToolResults()); done < len(calls) {
			return openaitest.Step{Calls: []openaitest.Call{calls[done]}}
		}
		return openaitest.Step{Content: answers[prompt]}
	}
	f := openaitest.NewServer(t, []string{"scripted"}, script)
	cfg := openaiConfig("property", f.URL, "scripted")
	cfg.Scenarios, cfg.Interfaces = scenarioIDs, ifaceSpecs
	out := t.TempDir()
	if _, err := Run(t.Context(), cfg, spec, Options{Out: out, Lookup: gen.Lookup}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := results.ReadJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(scenarioIDs) * (len(level.Levels) + len(ifaceSpecs)); len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		want := 1.0
		if strings.HasSuffix(r.InterfaceName(), "-nodesc") {
			want = 0
		}
		if r.Metrics.TC != want {
			t.Errorf("%s: TC %v, want %v: the script completes exactly the described interfaces", r.TrialID, r.Metrics.TC, want)
		}
	}
	res, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	checkPropertyRecovered(t, report.Build(res, 0))
}

// checkPropertyRecovered reads the report's complexity model and paired
// tests of a run whose subject fails exactly the interfaces without
// descriptions.
func checkPropertyRecovered(t *testing.T, r *report.Report) {
	t.Helper()
	cx := r.Table("complexity")
	if cx == nil || len(cx.Rows) == 0 {
		t.Fatalf("no complexity model: %v", r.Notes)
	}
	col := func(t *report.Table, name string) int { return slices.Index(t.Header, name) }
	term, rank, beta := col(cx, "term"), col(cx, "rank"), col(cx, "beta")
	for _, row := range cx.Rows {
		t.Logf("complexity: rank %v %v beta %.2f", row[rank], row[term], row[beta])
		if fmt.Sprint(row[rank]) == "1" {
			if row[term] != "description_chars" || row[beta].(float64) <= 0 {
				t.Errorf("strongest predictor %v (beta %v); want description_chars, positive", row[term], row[beta])
			}
		}
	}
	bi := r.Table("by_interface")
	if bi == nil {
		t.Fatal("no by_interface table")
	}
	name, sig := col(bi, "interface"), col(bi, "sig")
	for _, row := range bi.Rows {
		flagged := row[sig] != "" && row[sig] != "ref"
		if want := strings.HasSuffix(row[name].(string), "-nodesc"); flagged != want {
			t.Errorf("interface %v: sig %q; want flagged exactly when it has no descriptions", row[name], row[sig])
		}
	}
}
