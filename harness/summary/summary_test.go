package summary

import (
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// TestSummariseDomain: a domain's summary counts what its generated code
// and its spec hold, and its Ollama drops are the default backend's.
func TestSummariseDomain(t *testing.T) {
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range gen.Domains {
		sd := spec.Domain(d.Name)
		r := SummariseDomain(d, sd)
		scenarios := 0
		for _, n := range r.Scenarios {
			scenarios += n
		}
		if r.Name != d.Name || scenarios != len(sd.Scenarios) || r.Operations != len(d.Operations) {
			t.Errorf("%s: name %q, %d scenarios, %d operations; want %d scenarios, %d operations", d.Name, r.Name, scenarios, r.Operations, len(sd.Scenarios), len(d.Operations))
		}
		for _, l := range level.Levels {
			if r.Tools[l] != len(d.Tools[l]) || len(r.ToolNames[l]) != len(d.Tools[l]) {
				t.Errorf("%s %s: %d tools, %d names; want %d", d.Name, l, r.Tools[l], len(r.ToolNames[l]), len(d.Tools[l]))
			}
			if r.MeanCalls[l] <= 0 {
				t.Errorf("%s %s: mean gold calls %g; want more than 0", d.Name, l, r.MeanCalls[l])
			}
			if len(r.Dropped[l]) != len(r.DroppedByBackend[agent.Default().Name()][l]) {
				t.Errorf("%s %s: dropped_by_ollama is not the default backend's", d.Name, l)
			}
		}
		if len(r.ContextByBackend) == 0 {
			t.Errorf("%s: no backend says how its context is set", d.Name)
		}
	}
	// A domain without its spec has no scenarios, and no mean calls.
	if r := SummariseDomain(gen.Domains[0], nil); len(r.Scenarios) != 0 || len(r.MeanCalls) != 0 {
		t.Errorf("without a spec: scenarios %v, mean calls %v; want none", r.Scenarios, r.MeanCalls)
	}
}

func TestSummariseInterfaces(t *testing.T) {
	d := gen.Domains[0]
	cat, err := serve.DomainInterfaces(d)
	if err != nil {
		t.Fatal(err)
	}
	rows := SummariseInterfaces(d.Name, cat)
	if len(rows) != len(cat) {
		t.Fatalf("%d rows for %d interfaces", len(rows), len(cat))
	}
	for i, r := range rows {
		if r.Domain != d.Name || r.Interface != cat[i].Spec.Name || r.Level != cat[i].Spec.Level || r.Metrics.Tools == 0 {
			t.Errorf("row %d: %+v; want interface %s of %s, measured", i, r, cat[i].Spec.Name, d.Name)
		}
		if r.Transforms == nil || len(r.Transforms) != len(cat[i].Spec.Changes()) {
			t.Errorf("%s: transforms %v; want %v, never null", r.Interface, r.Transforms, cat[i].Spec.Changes())
		}
	}
}
