package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// catalogueSpecs are every transformed interface of the standard
// catalogue that some domain has, in first-seen order.
func catalogueSpecs(tb testing.TB, spec *speclang.Spec) []surface.Spec {
	tb.Helper()
	var out []surface.Spec
	seen := map[string]bool{}
	for _, d := range spec.Domains {
		dom, _ := gen.Lookup(d.Name)
		ifaces, err := serve.DomainInterfaces(dom)
		if err != nil {
			tb.Fatal(err)
		}
		for _, i := range ifaces {
			if !i.Spec.Plain() && !seen[i.Spec.Name] {
				seen[i.Spec.Name] = true
				out = append(out, i.Spec)
			}
		}
	}
	return out
}

// BenchmarkInterfaceGold maps every scenario's gold onto every interface
// of its domain's catalogue, and measures every interface (schema tokens
// in cl100k_base, keywords the default backend drops). us/scenario is
// the mapping per scenario and interface, ms/interface building and
// measuring one, and ms/scenario both per scenario and interface, an
// interface's metrics shared by its domain's scenarios. Target: under
// 1 ms per scenario.
func BenchmarkInterfaceGold(b *testing.B) {
	spec := loadSpec(b)
	var mapped, measured int
	var mapping, measuring time.Duration
	for b.Loop() {
		for _, d := range spec.Domains {
			dom, _ := gen.Lookup(d.Name)
			start := time.Now()
			ifaces, err := serve.DomainInterfaces(dom)
			if err != nil {
				b.Fatal(err)
			}
			for _, iface := range ifaces {
				MeasureInterface(iface)
			}
			measuring += time.Since(start)
			measured += len(ifaces)
			start = time.Now()
			for _, iface := range ifaces {
				for _, s := range d.Scenarios {
					for _, c := range s.Gold[iface.Spec.Level] {
						encodeCall(iface, c.Tool, c.Args)
					}
					mapped++
				}
			}
			mapping += time.Since(start)
		}
	}
	b.ReportMetric(float64(mapping.Microseconds())/float64(mapped), "us/scenario")
	b.ReportMetric(float64(measuring.Microseconds())/1e3/float64(measured), "ms/interface")
	b.ReportMetric(float64((mapping+measuring).Microseconds())/1e3/float64(mapped), "ms/scenario")
	b.ReportMetric(float64(measured)/float64(b.N), "interfaces")
}

// BenchmarkOracleAllInterfaces runs the oracle over the paper's scenarios
// on every level and every interface of the standard catalogue, one
// repetition each, every trial on a fresh store behind its interface,
// journaled and scored. Target: < 10 s.
func BenchmarkOracleAllInterfaces(b *testing.B) {
	spec := loadSpec(b)
	cfg := testConfig("oracle-interfaces", "http://127.0.0.1:1", agent.Oracle)
	cfg.Interfaces = catalogueSpecs(b, spec)
	var trials int
	for b.Loop() {
		sum, err := Run(context.Background(), cfg, spec, Options{Out: b.TempDir(), Lookup: gen.Lookup})
		if err != nil {
			b.Fatal(err)
		}
		if sum.TC[agent.Oracle] != 1 {
			b.Fatalf("%+v", sum)
		}
		trials = sum.Ran
	}
	b.ReportMetric(float64(trials), "trials/op")
}

// listServerInterfaces does what granite list --interfaces --tools does
// with a tools file: read it, regroup it, build the catalogue and
// measure every interface. It returns how many interfaces it measured.
func listServerInterfaces(tb testing.TB, file []byte) int {
	tb.Helper()
	tools, err := toolsrc.ParseTools("bench.json", file)
	if err != nil {
		tb.Fatal(err)
	}
	rg, err := regroup.Build(tools, regroup.Derive("bench", tools))
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := rg.Catalogue("bench")
	if err != nil {
		tb.Fatal(err)
	}
	for _, iface := range cat {
		MeasureInterface(iface)
	}
	return len(cat)
}

// BenchmarkInterfacesDeepSchema lists the interfaces of a server whose
// one tool nests 60 argument objects (121 levels of JSON, within
// schemacheck.MaxSchemaDepth): the red team's probe, 1,000 deep, took
// granite list --interfaces 41 to 57 s and is now refused.
func BenchmarkInterfacesDeepSchema(b *testing.B) {
	schema := strings.Repeat(`{"type":"object","description":"A level. Its argument a is the next.","properties":{"a":`, 60) +
		`{"type":"string","description":"The bottom."}` + strings.Repeat(`}}`, 60)
	file := []byte(`{"tools":[{"name":"deep","description":"A deep tool.","inputSchema":` + schema + `}]}`)
	var n int
	for b.Loop() {
		n = listServerInterfaces(b, file)
	}
	b.ReportMetric(float64(n), "interfaces")
}

// BenchmarkInterfacesHugeEnum lists the interfaces of a server whose one
// tool's argument lists 100,000 enum values (schemacheck.MaxEnumValues):
// the red team's probe, 300,000 values, took granite list --interfaces
// 48 to 66 s and is now refused.
func BenchmarkInterfacesHugeEnum(b *testing.B) {
	vals := make([]string, 100_000)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"value_%d"`, i)
	}
	file := []byte(`{"tools":[{"name":"huge","description":"A tool of many values.","inputSchema":{"type":"object","properties":{"v":{"type":"string","description":"A value. Any of the enum.","enum":[` +
		strings.Join(vals, ",") + `]}}}}]}`)
	var n int
	for b.Loop() {
		n = listServerInterfaces(b, file)
	}
	b.ReportMetric(float64(n), "interfaces")
}
