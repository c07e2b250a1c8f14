// Package gold executes a scenario's gold sequences through MCP tools/call
// on fresh stores: Verify proves the benchmark's content (every level's
// gold succeeds, meets the scenario's expectations and ends in the same
// store, every alternative and optional argument is equally right, every
// tool and action is used), and RightsOf gives the right final stores and
// gold reads package score grades a trial against. It stands on the
// scorer's checks and the in-process session of package serve, and on
// nothing of agents or the runner.
package gold

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// Failure is one way a scenario's gold fell short.
type Failure struct {
	Domain   string      `json:"domain"`
	Scenario string      `json:"scenario,omitempty"`
	Level    level.Level `json:"level,omitempty"`
	// Interface names the transformed interface a failed execution
	// played, beside its level.
	Interface string `json:"interface,omitempty"`
	// Step is the 1-based gold call; 0 is the scenario as a whole.
	Step int `json:"step,omitempty"`
	// Variant names the alternative or omission a variant run used.
	Variant string `json:"variant,omitempty"`
	Message string `json:"message"`
}

// String is the failure as granite verify prints it: where, then what.
func (f Failure) String() string {
	var b strings.Builder
	b.WriteString(f.Domain)
	if f.Scenario != "" {
		b.Reset()
		b.WriteString(f.Scenario)
	}
	switch {
	case f.Interface != "":
		b.WriteString(" " + f.Interface)
	case f.Level != "":
		b.WriteString(" " + string(f.Level))
	}
	if f.Step > 0 {
		fmt.Fprintf(&b, " step %d", f.Step)
	}
	if f.Variant != "" {
		b.WriteString(" (variant " + f.Variant + ")")
	}
	return b.String() + ": " + f.Message
}

// Verification is the outcome of Verify: failures, counts and coverage.
type Verification struct {
	Domains   int `json:"domains"`
	Scenarios int `json:"scenarios"`
	// Executions counts scenario x level gold runs; Variants the extra L4
	// runs with an alternative value or an optional argument left out.
	Executions int `json:"executions"`
	Variants   int `json:"variants"`
	// Interfaces counts the extra runs of each level's gold mapped onto
	// each transformed interface of the domain's catalogue.
	Interfaces int        `json:"interface_executions"`
	Coverage   []Coverage `json:"coverage"`
	Failures   []Failure  `json:"failures"`
}

// OK reports whether everything verified.
func (r *Verification) OK() bool { return len(r.Failures) == 0 }

// Summary is the one-line result.
func (r *Verification) Summary() string {
	var tools, toolsUsed, acts, actsUsed int
	for _, c := range r.Coverage {
		tools, toolsUsed = tools+c.Tools, toolsUsed+c.ToolsUsed
		acts, actsUsed = acts+c.Actions, actsUsed+c.ActionsUsed
	}
	return fmt.Sprintf("%s, %s, %s, %s and %s verified; coverage: tools %d/%d, actions %d/%d; %s",
		count(r.Domains, "domain"), count(r.Scenarios, "scenario"), count(r.Executions, "scenario×level execution"), count(r.Interfaces, "scenario×interface execution"), count(r.Variants, "variant"),
		toolsUsed, tools, actsUsed, acts, count(len(r.Failures), "failure"))
}

// count says "1 domain" or "9 domains".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Lookup finds the generated code of a domain.
type Lookup func(name string) (*mcpdomain.Domain, bool)

// Verify executes every gold sequence of the given domains (all when
// only is empty) at every level through MCP tools/call on a fresh store.
// It checks that no call errs, the expectations hold, the levels end in
// identical stores, every alternative and optional argument is equally
// right, and every tool and action is used by some gold.
func Verify(ctx context.Context, spec *speclang.Spec, lookup Lookup, only ...string) (*Verification, error) {
	domains, err := selectDomains(spec, only)
	if err != nil {
		return nil, err
	}
	// Domains share nothing, so they verify in parallel; their reports are
	// merged in spec order, so the result does not depend on scheduling.
	parts := make([]*Verification, len(domains))
	errs := make([]error, len(domains))
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, d := range domains {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			parts[i], errs[i] = verifyDomain(ctx, d, lookup)
		}()
	}
	wg.Wait()
	r := &Verification{Failures: []Failure{}}
	for i, p := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		r.Domains += p.Domains
		r.Scenarios += p.Scenarios
		r.Executions += p.Executions
		r.Variants += p.Variants
		r.Interfaces += p.Interfaces
		r.Coverage = append(r.Coverage, p.Coverage...)
		r.Failures = append(r.Failures, p.Failures...)
	}
	return r, nil
}

// selectDomains lists the spec's domains named in only (all when it is
// empty), refusing a name the spec lacks.
func selectDomains(spec *speclang.Spec, only []string) ([]*speclang.Domain, error) {
	for _, name := range only {
		if spec.Domain(name) == nil {
			return nil, fmt.Errorf("unknown domain %q: want one of %s", name, strings.Join(domainNames(spec), ", "))
		}
	}
	var domains []*speclang.Domain
	for _, d := range spec.Domains {
		if len(only) == 0 || slices.Contains(only, d.Name) {
			domains = append(domains, d)
		}
	}
	return domains, nil
}

func verifyDomain(ctx context.Context, d *speclang.Domain, lookup Lookup) (*Verification, error) {
	r := &Verification{Domains: 1}
	dom, msg := Generated(d, lookup)
	if msg != "" {
		r.fail(Failure{Domain: d.Name, Message: msg})
		return r, nil
	}
	if len(d.Scenarios) == 0 {
		r.fail(Failure{Domain: d.Name, Message: fmt.Sprintf("no scenarios; expected them in %s/scenarios.yaml", d.Name)})
	}
	catalogue, err := serve.DomainInterfaces(dom)
	if err != nil {
		r.fail(Failure{Domain: d.Name, Message: "interfaces: " + err.Error()})
	}
	var ifaces []*surface.Interface
	for _, i := range catalogue {
		if !i.Spec.Plain() {
			ifaces = append(ifaces, i)
		}
	}
	// The compositions the catalogue leaves out, each played with the
	// gold it derives.
	comps, err := serve.Compositions(dom)
	if err != nil {
		r.fail(Failure{Domain: d.Name, Message: "compositions: " + err.Error()})
	}
	ifaces = append(ifaces, comps...)
	for _, s := range d.Scenarios {
		r.Scenarios++
		if err := r.scenario(ctx, d, dom, s, ifaces); err != nil {
			return nil, err
		}
	}
	r.coverage(d, dom)
	return r, nil
}

func (r *Verification) fail(f Failure) { r.Failures = append(r.Failures, f) }

func domainNames(spec *speclang.Spec) []string {
	var out []string
	for _, d := range spec.Domains {
		out = append(out, d.Name)
	}
	return out
}

// Generated is the domain's generated code, or what is wrong with it:
// missing, or generated from another version of the spec.
func Generated(d *speclang.Domain, lookup Lookup) (*mcpdomain.Domain, string) {
	dom, ok := lookup(d.Name)
	if !ok {
		return nil, "no generated code; run go generate ./... and rebuild"
	}
	return dom, stale(d, dom)
}

// stale says when the generated code was built from another version of
// the domain's spec: its recorded hash of domain.yaml differs (a changed
// seed value or description as much as a renamed tool), or, for code that
// records none, its tools differ.
func stale(d *speclang.Domain, dom *mcpdomain.Domain) string {
	const fix = "run go generate ./... and make build"
	if dom.SpecSHA256 != "" && dom.SpecSHA256 != d.SHA256 {
		return fmt.Sprintf("generated code is stale: gen/%s was generated from another %s (sha256 %.12s, this one %.12s); %s",
			d.Name, d.File, dom.SpecSHA256, d.SHA256, fix)
	}
	for i, lv := range d.Levels {
		level := level.Levels[i]
		var want, got []string
		for _, t := range lv.Tools {
			want = append(want, t.Name)
		}
		for _, t := range dom.Tools[level] {
			got = append(got, t.Name)
		}
		if !slices.Equal(want, got) {
			return fmt.Sprintf("generated code is stale: %s tools are %v, the spec says %v; %s", level, got, want, fix)
		}
	}
	return ""
}

// expectations checks runs against a scenario's expectations. Most runs of a
// scenario end in the same store, so state verdicts are kept by snapshot.
type expectations struct {
	s     *speclang.Scenario
	state map[string][]string
}

func (j *expectations) check(o *outcome) ([]string, error) {
	if o.step > 0 {
		return []string{o.err}, nil
	}
	s := j.s
	state, ok := j.state[string(o.final)]
	if !ok {
		var err error
		if state, err = score.CheckState(o.final, s.State); err != nil {
			return nil, err
		}
		j.state[string(o.final)] = state
	}
	var msgs []string
	for _, m := range state {
		msgs = append(msgs, "state: "+m)
	}
	outputs := strings.Join(o.texts, "\n")
	for _, f := range s.Answer {
		if !score.Stated(outputs, f) {
			msgs = append(msgs, fmt.Sprintf("answer fact %s (%s) appears in no gold tool output; expected the tools to report it", jsonString(f.Value), f.What))
		}
	}
	return msgs, nil
}

func (r *Verification) scenario(ctx context.Context, d *speclang.Domain, dom *mcpdomain.Domain, s *speclang.Scenario, ifaces []*surface.Interface) error {
	fail := func(level level.Level, step int, variant, msg string) {
		r.fail(Failure{Domain: d.Name, Scenario: s.ID, Level: level, Step: step, Variant: variant, Message: msg})
	}
	if len(s.State) > 0 {
		msgs, err := score.CheckState(dom.NewStore().Snapshot(), s.State)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			fail("", 0, "", "every state condition already holds on the fresh store; expected at least one that only the task's writes make true")
		}
	}
	j := &expectations{s: s, state: map[string][]string{}}
	var l4 []byte
	for _, lv := range level.Levels {
		o, err := runGold(ctx, dom, lv, s.Gold[lv], nil)
		if err != nil {
			return err
		}
		r.Executions++
		msgs, err := j.check(o)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fail(lv, o.step, "", m)
		}
		if lv == level.L4 {
			l4 = o.final
			// Every fact must be about a subject the gold's reads
			// report it for.
			if o.step == 0 {
				right := &score.Rights{Finals: [][]byte{o.final}, Reads: o.reads}
				for _, m := range score.NewScenarioGold(d, s, dom.NewStore().Snapshot(), right).FactProblems() {
					fail(lv, 0, "", m)
				}
			}
			continue
		}
		if diff := snapshotDiff(l4, o.final); diff != "" {
			fail(lv, 0, "", "final store differs from L4 (-L4 +"+string(lv)+"):\n"+diff)
		}
	}
	if err := r.interfaces(ctx, d, dom, s, ifaces, l4); err != nil {
		return err
	}
	return r.variants(ctx, dom, j, fail)
}

// interfaces runs each level's gold mapped onto each interface over that
// level (as the interface's composition makes it): every call must
// succeed and the store end as L4's does.
func (r *Verification) interfaces(ctx context.Context, d *speclang.Domain, dom *mcpdomain.Domain, s *speclang.Scenario, ifaces []*surface.Interface, l4 []byte) error {
	for _, iface := range ifaces {
		calls, err := Composed(d, dom, iface.Spec, s)
		if err != nil {
			r.fail(Failure{Domain: d.Name, Scenario: s.ID, Level: iface.Spec.Level, Interface: iface.Spec.Name, Message: "its gold at " + iface.Spec.Get("composition") + ": " + err.Error()})
			continue
		}
		o, err := runInterface(ctx, dom, iface, calls)
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.ID, iface.Spec.Name, err)
		}
		r.Interfaces++
		f := Failure{Domain: d.Name, Scenario: s.ID, Level: iface.Spec.Level, Interface: iface.Spec.Name, Step: o.step, Message: o.err}
		if o.step == 0 {
			diff := snapshotDiff(l4, o.final)
			if diff == "" {
				continue
			}
			f.Message = "final store differs from L4 (-L4 +" + iface.Spec.Name + "):\n" + diff
		}
		r.fail(f)
	}
	return nil
}

// variants runs the L4 gold once per alternative value and once per
// optional argument left out: each must meet the expectations too.
func (r *Verification) variants(ctx context.Context, dom *mcpdomain.Domain, j *expectations, fail func(level.Level, int, string, string)) error {
	calls := j.s.Gold[level.L4]
	for _, v := range goldVariants(calls) {
		o, err := v.run(ctx, dom, calls)
		if err != nil {
			return err
		}
		r.Variants++
		msgs, err := j.check(o)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fail(level.L4, v.step+1, v.name, m)
		}
	}
	return nil
}

// snapshotDiff compares two snapshots as JSON values.
func snapshotDiff(a, b []byte) string {
	if bytes.Equal(a, b) { // snapshots are canonical: equal states, equal bytes
		return ""
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		if string(a) == string(b) {
			return ""
		}
		return "snapshots are not JSON"
	}
	return cmp.Diff(x, y)
}

// jsonString writes a value as JSON for a message (as fmt prints it when
// it is none); package score keeps the same rule for its own messages.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
