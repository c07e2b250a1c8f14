package gold

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/specs"
)

func loadSpec(t testing.TB) *speclang.Spec { return spectest.All(t) }

// TestVerifyEverything is `granite verify` over every domain: the
// benchmark's content must hold at every commit.
func TestVerifyEverything(t *testing.T) {
	spec := loadSpec(t)
	rep, err := Verify(context.Background(), spec, gen.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures {
		t.Error(f)
	}
	if rep.Domains != len(gen.Domains) || rep.Executions != 4*rep.Scenarios {
		t.Errorf("verified %d domains (registry has %d), %d executions for %d scenarios", rep.Domains, len(gen.Domains), rep.Executions, rep.Scenarios)
	}
	for _, d := range spec.Domains {
		tiers := map[string]int{}
		for _, s := range d.Scenarios {
			tiers[s.Difficulty]++
		}
		for _, tier := range speclang.Tiers {
			if tiers[tier.Name] != 3 {
				t.Errorf("%s: %d %s scenarios; the benchmark has 3 per tier", d.Name, tiers[tier.Name], tier.Name)
			}
		}
	}
	for _, c := range rep.Coverage {
		if !c.Complete() || c.ToolsUsed != c.Tools || c.ActionsUsed != c.Actions {
			t.Errorf("coverage %+v", c)
		}
	}
	t.Log(rep.Summary())
}

// writer finds a scenario whose gold writes and whose first state
// condition names a seeded row with field values, with its domain.
func writer(t *testing.T, spec *speclang.Spec) (*speclang.Domain, *speclang.Scenario) {
	t.Helper()
	for _, d := range spec.Domains {
		for _, s := range d.Scenarios {
			if len(s.State) > 0 && s.State[0].ID != "" && len(s.State[0].Fields) > 0 && lastWrite(d, s) >= 0 {
				return d, s
			}
		}
	}
	t.Fatal("no scenario writes a seeded row")
	return nil, nil
}

// lastWrite is the index of the scenario's last L4 call that writes.
func lastWrite(d *speclang.Domain, s *speclang.Scenario) int {
	for i := len(s.Gold[level.L4]) - 1; i >= 0; i-- {
		for _, o := range d.Operations {
			if o.Name == s.Gold[level.L4][i].Op && !o.ReadOnly {
				return i
			}
		}
	}
	return -1
}

// TestVerifyCatchesBrokenGold breaks one scenario of the embedded specs
// in each way verify exists to catch, and checks the failure it reports.
func TestVerifyCatchesBrokenGold(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(d *speclang.Domain, s *speclang.Scenario)
		want   []string // substrings of the failures, in order
	}{
		{"gold does not reach its expected state", func(d *speclang.Domain, s *speclang.Scenario) {
			for k := range s.State[0].Fields {
				s.State[0].Fields[k] = "never this value"
			}
		}, []string{" L4: state: ", " L3: state: ", " L2: state: ", " L1: state: "}},
		{"levels end in different states", func(d *speclang.Domain, s *speclang.Scenario) {
			i := lastWrite(d, s)
			s.Gold[level.L2] = append(s.Gold[level.L2][:i:i], s.Gold[level.L2][i+1:]...)
		}, []string{" L2: final store differs from L4 (-L4 +L2):\n"}},
		{"a call the tool refuses", func(d *speclang.Domain, s *speclang.Scenario) {
			c := *s.Gold[level.L3][0]
			c.Args = map[string]any{"no_such_argument": 1}
			s.Gold[level.L3][0] = &c
		}, []string{" L3 step 1: " + s0Tool + ` {"no_such_argument":1}: tool error: `}},
		{"answer fact no tool reports", func(d *speclang.Domain, s *speclang.Scenario) {
			s.Answer = append(s.Answer, &speclang.Fact{Value: "zebra crossing", What: "nothing"})
		}, []string{` L4: answer fact "zebra crossing" (nothing) appears in no gold tool output`}},
		{"expectations that hold before the task", func(d *speclang.Domain, s *speclang.Scenario) {
			s.State = []*speclang.StateCheck{{Entity: s.State[0].Entity, Collection: s.State[0].Collection, ID: s.State[0].ID}}
		}, []string{": every state condition already holds on the fresh store"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := loadSpec(t)
			d, s := writer(t, spec)
			c.break_(d, s)
			rep, err := Verify(context.Background(), spec, gen.Lookup, d.Name)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Failures {
				got = append(got, f.String())
			}
			all := strings.Join(got, "\n")
			for _, w := range c.want {
				w = strings.ReplaceAll(w, s0Tool, s.Gold[level.L3][0].Tool)
				if !strings.Contains(all, s.ID+w) {
					t.Errorf("failures lack %q:\n%s", s.ID+w, all)
				}
			}
			if rep.OK() {
				t.Error("report is OK")
			}
		})
	}
}

// s0Tool stands for the tool of the broken call in a wanted failure.
const s0Tool = "<tool>"

func TestVerifyCoverageAndStaleness(t *testing.T) {
	spec := loadSpec(t)
	d := spec.Domains[0]
	d.Scenarios = d.Scenarios[:1]
	rep, err := Verify(context.Background(), spec, gen.Lookup, d.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(rep.Failures[0].String(), d.Name+" L4: gold never uses ") {
		t.Errorf("a domain with one scenario: %v", rep.Failures)
	}
	for _, c := range rep.Coverage {
		if c.Complete() || c.ToolsUsed >= c.Tools && c.ActionsUsed >= c.Actions {
			t.Errorf("coverage %+v", c)
		}
	}

	stale := func(name string) (*mcpdomain.Domain, bool) {
		dom, ok := gen.Lookup(name)
		cp := *dom
		cp.Tools = map[level.Level][]*mcpdomain.Tool{}
		for l, ts := range dom.Tools {
			cp.Tools[l] = ts[1:]
		}
		return &cp, ok
	}
	rep, err = Verify(context.Background(), loadSpec(t), stale, d.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Message, "generated code is stale") {
		t.Errorf("stale code: %v", rep.Failures)
	}
	missing := func(string) (*mcpdomain.Domain, bool) { return nil, false }
	rep, _ = Verify(context.Background(), loadSpec(t), missing, d.Name)
	if len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Message, "no generated code; run go generate") {
		t.Errorf("missing code: %v", rep.Failures)
	}
	if _, err := Verify(context.Background(), loadSpec(t), gen.Lookup, "atlantis"); err == nil || !strings.Contains(err.Error(), `unknown domain "atlantis"`) {
		t.Errorf("unknown domain: %v", err)
	}
}

// BenchmarkVerifyAll is `granite verify` without the spec loading: every
// scenario at every level plus the variants, through MCP.
func BenchmarkVerifyAll(b *testing.B) {
	spec := loadSpec(b)
	var rep *Verification
	for b.Loop() {
		var err error
		if rep, err = Verify(context.Background(), spec, gen.Lookup); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Executions), "executions")
	b.ReportMetric(float64(rep.Variants), "variants")
}

// BenchmarkLoadAndVerifyAll adds loading and checking the specs and
// scenario tables: the whole of `granite verify`.
func BenchmarkLoadAndVerifyAll(b *testing.B) {
	for b.Loop() {
		if _, err := Verify(context.Background(), loadSpec(b), gen.Lookup); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVerifySeesAChangedSpec: code generated from another version of a
// domain.yaml is stale even when its tools are the same (a changed title,
// description or seed value), and the failure names what to run.
func TestVerifySeesAChangedSpec(t *testing.T) {
	fsys := fstest.MapFS{}
	if err := fs.WalkDir(specs.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := fs.ReadFile(specs.FS, p)
		fsys[p] = &fstest.MapFile{Data: data}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	name := gen.Domains[0].Name
	f := fsys[name+"/domain.yaml"]
	f.Data = []byte(strings.Replace(string(f.Data), "\ntitle: ", "\ntitle: Edited ", 1))
	spec, err := speclang.LoadAll(fsys)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), spec, gen.Lookup, name)
	if err != nil {
		t.Fatal(err)
	}
	want := "generated code is stale: gen/" + name + " was generated from another " + name + "/domain.yaml"
	if len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Message, want) || !strings.HasSuffix(rep.Failures[0].Message, "; run go generate ./... and make build") {
		t.Errorf("a changed spec: %v; want one failure saying %q", rep.Failures, want)
	}
	if rep, _ := Verify(context.Background(), loadSpec(t), gen.Lookup, name); !rep.OK() {
		t.Errorf("the unchanged spec: %v", rep.Failures)
	}
}
