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
	"maps"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Failure is one way a scenario's gold fell short.
type Failure struct {
	Domain   string          `json:"domain"`
	Scenario string          `json:"scenario,omitempty"`
	Level    mcpdomain.Level `json:"level,omitempty"`
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
	if f.Level != "" {
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

// Coverage is how much of one level's interface the gold of a domain uses.
type Coverage struct {
	Domain      string          `json:"domain"`
	Level       mcpdomain.Level `json:"level"`
	Tools       int             `json:"tools"`
	ToolsUsed   int             `json:"tools_used"`
	Actions     int             `json:"actions"`
	ActionsUsed int             `json:"actions_used"`
	// Missing lists unused tools and tool.action pairs.
	Missing []string `json:"missing,omitempty"`
}

// Complete reports whether every tool and action is used.
func (c Coverage) Complete() bool { return len(c.Missing) == 0 }

// Verification is the outcome of Verify: failures, counts and coverage.
type Verification struct {
	Domains   int `json:"domains"`
	Scenarios int `json:"scenarios"`
	// Executions counts scenario x level gold runs; Variants the extra L4
	// runs with an alternative value or an optional argument left out.
	Executions int        `json:"executions"`
	Variants   int        `json:"variants"`
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
	return fmt.Sprintf("%s, %s, %s and %s verified; coverage: tools %d/%d, actions %d/%d; %s",
		count(r.Domains, "domain"), count(r.Scenarios, "scenario"), count(r.Executions, "scenario×level execution"), count(r.Variants, "variant"),
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
		r.Coverage = append(r.Coverage, p.Coverage...)
		r.Failures = append(r.Failures, p.Failures...)
	}
	return r, nil
}

func verifyDomain(ctx context.Context, d *speclang.Domain, lookup Lookup) (*Verification, error) {
	r := &Verification{Domains: 1}
	rt, msg := Generated(d, lookup)
	if msg != "" {
		r.fail(Failure{Domain: d.Name, Message: msg})
		return r, nil
	}
	if len(d.Scenarios) == 0 {
		r.fail(Failure{Domain: d.Name, Message: fmt.Sprintf("no scenarios; expected them in %s/scenarios.yaml", d.Name)})
	}
	for _, s := range d.Scenarios {
		r.Scenarios++
		if err := r.scenario(ctx, d, rt, s); err != nil {
			return nil, err
		}
	}
	r.coverage(d)
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
	rt, ok := lookup(d.Name)
	if !ok {
		return nil, "no generated code; run go generate ./... and rebuild"
	}
	return rt, stale(d, rt)
}

// stale compares the spec's tools with the generated ones.
func stale(d *speclang.Domain, rt *mcpdomain.Domain) string {
	for i, lv := range d.Levels {
		level := mcpdomain.Levels[i]
		var want, got []string
		for _, t := range lv.Tools {
			want = append(want, t.Name)
		}
		for _, t := range rt.Tools[level] {
			got = append(got, t.Name)
		}
		if !slices.Equal(want, got) {
			return fmt.Sprintf("generated code is stale: %s tools are %v, the spec says %v; run go generate ./... and rebuild", level, got, want)
		}
	}
	return ""
}

// run is the outcome of one gold execution.
type run struct {
	final   []byte
	outputs string
	// reads are the calls' outputs, decoded.
	reads []score.GoldRead
	// step and err locate a call that failed; step is 0 when none did.
	step int
	err  string
}

// runGold executes calls on a fresh store at one level; replace, when not
// nil, gives other arguments for one step.
func runGold(ctx context.Context, rt *mcpdomain.Domain, level mcpdomain.Level, calls []*speclang.Call, replace func(i int) []byte) (*run, error) {
	s, err := serve.Open(ctx, rt, level)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := &run{}
	var texts []string
	for i, c := range calls {
		args := c.JSON()
		if replace != nil {
			if b := replace(i); b != nil {
				args = b
			}
		}
		res, err := s.Call(ctx, c.Tool, args)
		switch {
		case err != nil:
			out.step, out.err = i+1, fmt.Sprintf("%s %s: protocol error: %v", c.Tool, args, err)
		case res.IsError:
			out.step, out.err = i+1, fmt.Sprintf("%s %s: tool error: %s", c.Tool, args, res.Text)
		}
		if out.step > 0 {
			break
		}
		texts = append(texts, res.Text)
		var v any
		if json.Unmarshal([]byte(res.Text), &v) != nil {
			v = res.Text
		}
		out.reads = append(out.reads, score.GoldRead{Tool: c.Tool, Output: v})
	}
	out.final = s.Store.Snapshot()
	out.outputs = strings.Join(texts, "\n")
	return out, nil
}

// expectations checks runs against a scenario's expectations. Most runs of a
// scenario end in the same store, so state verdicts are kept by snapshot.
type expectations struct {
	s     *speclang.Scenario
	state map[string][]string
}

func (j *expectations) check(o *run) ([]string, error) {
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
	for _, f := range s.Answer {
		if !score.Stated(o.outputs, f) {
			msgs = append(msgs, fmt.Sprintf("answer fact %s (%s) appears in no gold tool output; expected the tools to report it", jsonString(f.Value), f.What))
		}
	}
	return msgs, nil
}

func (r *Verification) scenario(ctx context.Context, d *speclang.Domain, rt *mcpdomain.Domain, s *speclang.Scenario) error {
	fail := func(level mcpdomain.Level, step int, variant, msg string) {
		r.fail(Failure{Domain: d.Name, Scenario: s.ID, Level: level, Step: step, Variant: variant, Message: msg})
	}
	if len(s.State) > 0 {
		msgs, err := score.CheckState(rt.NewStore().Snapshot(), s.State)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			fail("", 0, "", "every state condition already holds on the fresh store; expected at least one that only the task's writes make true")
		}
	}
	j := &expectations{s: s, state: map[string][]string{}}
	var l4 []byte
	for _, level := range mcpdomain.Levels {
		o, err := runGold(ctx, rt, level, s.Gold[level], nil)
		if err != nil {
			return err
		}
		r.Executions++
		msgs, err := j.check(o)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fail(level, o.step, "", m)
		}
		if level == mcpdomain.L4 {
			l4 = o.final
			// Every fact must be about a subject the gold's reads
			// report it for.
			if o.step == 0 {
				right := &score.Rights{Finals: [][]byte{o.final}, Reads: o.reads}
				for _, m := range score.NewScenarioGold(d, s, rt.NewStore().Snapshot(), right).FactProblems() {
					fail(level, 0, "", m)
				}
			}
			continue
		}
		if diff := snapshotDiff(l4, o.final); diff != "" {
			fail(level, 0, "", "final store differs from L4 (-L4 +"+string(level)+"):\n"+diff)
		}
	}
	return r.variants(ctx, rt, j, fail)
}

// variants runs the L4 gold once per alternative value and once per
// optional argument left out: each must meet the expectations too.
func (r *Verification) variants(ctx context.Context, rt *mcpdomain.Domain, j *expectations, fail func(mcpdomain.Level, int, string, string)) error {
	calls := j.s.Gold[mcpdomain.L4]
	for _, v := range goldVariants(calls) {
		o, err := v.run(ctx, rt, calls)
		if err != nil {
			return err
		}
		r.Variants++
		msgs, err := j.check(o)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fail(mcpdomain.L4, v.step+1, v.name, m)
		}
	}
	return nil
}

// goldVariant is the L4 gold with one call changed: an alternative value
// of one argument, or an optional argument left out.
type goldVariant struct {
	step int
	name string
	args []byte
}

// goldVariants lists every variant of a gold sequence, in call order.
func goldVariants(calls []*speclang.Call) []goldVariant {
	var out []goldVariant
	for i, c := range calls {
		for _, arg := range slices.Sorted(maps.Keys(c.Alternatives)) {
			for _, v := range c.Alternatives[arg] {
				out = append(out, goldVariant{i, arg + "=" + jsonString(v), c.With(arg, v)})
			}
		}
		for _, arg := range c.Optional {
			out = append(out, goldVariant{i, "without " + arg, c.With(arg, nil)})
		}
	}
	return out
}

// run executes the variant at L4 on a fresh store.
func (v goldVariant) run(ctx context.Context, rt *mcpdomain.Domain, calls []*speclang.Call) (*run, error) {
	return runGold(ctx, rt, mcpdomain.L4, calls, func(j int) []byte {
		if j == v.step {
			return v.args
		}
		return nil
	})
}

// RightsOf runs a scenario's gold: the final stores are the L4 gold's and
// those of its variants (verify proves the levels end alike),
// deduplicated.
func RightsOf(ctx context.Context, rt *mcpdomain.Domain, s *speclang.Scenario) (*score.Rights, error) {
	calls := s.Gold[mcpdomain.L4]
	r := &score.Rights{}
	add := func(o *run, err error) error {
		if err != nil {
			return err
		}
		if o.step == 0 && !slices.ContainsFunc(r.Finals, func(b []byte) bool { return bytes.Equal(b, o.final) }) {
			r.Finals = append(r.Finals, o.final)
		}
		return nil
	}
	gold, err := runGold(ctx, rt, mcpdomain.L4, calls, nil)
	if err := add(gold, err); err != nil {
		return nil, err
	}
	r.Reads = gold.reads
	for _, v := range goldVariants(calls) {
		if err := add(v.run(ctx, rt, calls)); err != nil {
			return nil, err
		}
	}
	return r, nil
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

// coverage records which tools and actions of each level the domain's
// gold uses.
func (r *Verification) coverage(d *speclang.Domain) {
	for i, lv := range d.Levels {
		level := mcpdomain.Levels[i]
		used := map[string]bool{}
		for _, s := range d.Scenarios {
			for _, c := range s.Gold[level] {
				used[c.Tool] = true
				used[c.Tool+"."+c.Op] = true
			}
		}
		c := Coverage{Domain: d.Name, Level: level, Tools: len(lv.Tools)}
		for _, t := range lv.Tools {
			if used[t.Name] {
				c.ToolsUsed++
			} else {
				c.Missing = append(c.Missing, t.Name)
			}
			if len(t.Operations) < 2 {
				continue
			}
			for _, o := range t.Operations {
				c.Actions++
				if k := t.Name + "." + o.Name; used[k] {
					c.ActionsUsed++
				} else if used[t.Name] {
					c.Missing = append(c.Missing, k)
				}
			}
		}
		r.Coverage = append(r.Coverage, c)
		if !c.Complete() {
			r.fail(Failure{Domain: d.Name, Level: level, Message: "gold never uses " + strings.Join(c.Missing, ", ") + "; expected every tool and action in some scenario"})
		}
	}
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
