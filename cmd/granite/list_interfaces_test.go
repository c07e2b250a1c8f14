package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/summary"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
)

// TestListInterfaces: `granite list --interfaces --json` lists each
// domain's standard catalogue in order, each interface with its level, its
// changes from the level and its metrics; terse descriptions cost fewer
// schema tokens than full ones at every level of every domain.
func TestListInterfaces(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"list", "--interfaces", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []summary.InterfaceSummary
	must(t, json.Unmarshal(out.Bytes(), &rows))
	var want []summary.InterfaceSummary
	for _, d := range gen.Domains {
		cat, err := serve.DomainInterfaces(d)
		must(t, err)
		for _, iface := range cat {
			want = append(want, summary.InterfaceSummary{Domain: d.Name, Interface: iface.Spec.Name, Level: iface.Spec.Level,
				Transforms: append([]string{}, iface.Spec.Changes()...), Metrics: harness.MeasureInterface(iface)})
		}
	}
	// The catalogue, then at each level with a composite operation its
	// atomic interface (which the catalogue leaves out); every row with
	// its gold calls per scenario, or why it has none.
	var catalogue []summary.InterfaceSummary
	for _, r := range rows {
		if r.GoldCalls == nil && r.NoGold == "" {
			t.Errorf("%s %s: no gold calls and no reason", r.Domain, r.Interface)
		}
		if !composition(r.Interface) {
			r.GoldCalls, r.NoGold = nil, ""
			catalogue = append(catalogue, r)
		}
	}
	if diff := cmp.Diff(want, catalogue); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	if len(rows) == len(catalogue) {
		t.Errorf("no atomic or composite interface listed; want them at each level that offers a preset or a workflow")
	}
	tokens := map[string]int{}
	for _, r := range rows {
		tokens[r.Domain+" "+r.Interface] = r.Metrics.SchemaTokens
		if r.Metrics.Tools == 0 || r.Metrics.SchemaTokens == 0 {
			t.Errorf("%s %s: metrics %+v; want tools and tokens counted", r.Domain, r.Interface, r.Metrics)
		}
		if (len(r.Transforms) == 0) != (r.Interface == string(r.Level)) {
			t.Errorf("%s %s: transforms %v at level %s; want none exactly for the level as written", r.Domain, r.Interface, r.Transforms, r.Level)
		}
	}
	for _, r := range rows {
		if len(r.Transforms) == 0 {
			full, terse := tokens[r.Domain+" "+r.Interface], tokens[r.Domain+" "+r.Interface+"-terse"]
			if terse == 0 || terse >= full {
				t.Errorf("%s %s: %d schema tokens terse, %d full; want terse listed and fewer", r.Domain, r.Interface, terse, full)
			}
		}
	}
}

// TestListInterfacesTable: the table has a row per interface of the
// domain --domain names, --domain narrows the plain listing too, and an
// unknown domain is refused with the choices.
func TestListInterfacesTable(t *testing.T) {
	d := gen.Domains[len(gen.Domains)-1]
	cat, err := serve.DomainInterfaces(d)
	must(t, err)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"list", "--interfaces", "--domain", d.Name}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if fields := strings.Fields(lines[0]); !slices.Equal(fields, []string{"DOMAIN", "INTERFACE", "LEVEL", "TRANSFORMS", "TOOLS", "SCHEMA", "TOKENS", "ARGS", "MAX", "ACTIONS", "MAX", "DEPTH", "SCHEMA-ONLY", "SHARE", "DROPPED", "KEYWORDS", "GOLD", "CALLS"}) {
		t.Errorf("header %q", lines[0])
	}
	var rows [][]string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == 12 && f[0] == d.Name && !composition(f[1]) {
			rows = append(rows, f)
		}
	}
	if len(rows) != len(cat) {
		t.Fatalf("%d rows of %s; want its %d interfaces:\n%s", len(rows), d.Name, len(cat), out.String())
	}
	for i, iface := range cat {
		transforms := strings.Join(iface.Spec.Changes(), ",")
		if transforms == "" {
			transforms = "-"
		}
		if rows[i][1] != iface.Spec.Name || rows[i][2] != string(iface.Spec.Level) || rows[i][3] != transforms {
			t.Errorf("row %d %v; want %s at %s, %s", i, rows[i], iface.Spec.Name, iface.Spec.Level, transforms)
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"list", "--domain", d.Name, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("list --domain: exit %d: %s", code, errb.String())
	}
	var summaries []summary.DomainSummary
	must(t, json.Unmarshal(out.Bytes(), &summaries))
	if len(summaries) != 1 || summaries[0].Name != d.Name {
		t.Errorf("list --domain %s: %d rows, first %+v; want that domain alone", d.Name, len(summaries), summaries)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"list", "--interfaces", "--domain", "kitchen"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown domain "kitchen": want one of `+domainNames()) {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestListServerInterfaces lists the catalogue of a server's regrouped
// levels from its tools/list file, and refuses a server beside --domain.
func TestListServerInterfaces(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"list", "--interfaces", "--json", "--tools", "../../harness/testdata/server-memory.tools.json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []summary.InterfaceSummary
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	levels := map[level.Level]int{}
	for _, r := range rows {
		levels[r.Level]++
		if r.Metrics.Tools == 0 || r.Metrics.SchemaTokens == 0 {
			t.Errorf("%s: metrics %+v", r.Interface, r.Metrics)
		}
	}
	if len(rows) < 12 || len(levels) != 4 {
		t.Errorf("%d interfaces over levels %v; want the presets at every level", len(rows), levels)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"list", "--domain", gen.Domains[0].Name, "--interfaces", "--tools", "x.json"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "without --domain") {
		t.Errorf("server beside --domain: exit %d, %s", code, errb.String())
	}
}

// composition reports whether an interface's name is a composition's,
// which the catalogue leaves out and granite list adds.
func composition(name string) bool {
	return strings.HasSuffix(name, "-atomic") || strings.HasSuffix(name, "-composite")
}
