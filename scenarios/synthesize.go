package scenarios

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// Skip is a tool synthesis left out, and why.
type Skip struct {
	Tool string `json:"tool"`
	Why  string `json:"why"`
}

// OfflineResult is what offline synthesis made, what it left out, and how
// many scenarios the tools allowed in all.
type OfflineResult struct {
	Artifacts []Artifact
	// Skipped are tools whose schema no value could be derived for
	// (unsatisfiable, or a construct the validator cannot compile).
	Skipped []Skip
	// Possible is every scenario the usable tools allow; Requested the
	// count asked for (0: all of them).
	Possible, Requested int
	// Kinds counts the possible scenarios: valid calls, chains, refusals.
	Valid, Chains, Refusals int
}

// Shortfall says, when fewer scenarios were possible than requested, why
// ("" otherwise).
func (r *OfflineResult) Shortfall() string {
	if r.Requested <= 0 || r.Possible >= r.Requested {
		return ""
	}
	return fmt.Sprintf("%d requested, %d possible: the usable tools allow %d single calls, %d chains of calls and %d refusals",
		r.Requested, r.Possible, r.Valid, r.Chains, r.Refusals)
}

// Offline synthesizes scenarios from the schemas alone (see OfflineReport)
// and returns the artifacts; it fails only when no tool is usable.
func Offline(source string, tools []Tool, count int) ([]Artifact, error) {
	res, err := OfflineReport(source, tools, count)
	if err != nil {
		return nil, err
	}
	return res.Artifacts, nil
}

// OfflineReport synthesizes scenarios from the schemas alone. For each
// tool: calls with realistic values (required arguments, then every
// argument, varied); chains of calls that feed one call's result or
// arguments into the next (create then read, list then get, write then
// read); refusals, one per kind of constraint its arguments carry. A tool
// whose schema yields no valid call is skipped with why, never aborting
// the rest. Tools are taken in rounds, so with count >= the number of
// usable tools every one is used; count 0 means every variant.
func OfflineReport(source string, tools []Tool, count int) (*OfflineResult, error) {
	res := &OfflineResult{Requested: count}
	var usable []*plan
	for i := range tools {
		p, err := planTool(source, &tools[i])
		if err != nil {
			res.Skipped = append(res.Skipped, Skip{Tool: tools[i].Name, Why: err.Error()})
			continue
		}
		usable = append(usable, p)
	}
	if len(usable) == 0 {
		return nil, fmt.Errorf("no tool is usable: %s", skipText(res.Skipped))
	}
	chainsOf(source, usable)
	// Per tool: its first valid call, then chains and refusals in turn,
	// so that a short count still mixes kinds.
	var lists [][]Artifact
	for _, p := range usable {
		var l []Artifact
		rest := [][]Artifact{p.valid[1:], p.chains, p.refusals}
		l = append(l, p.valid[0])
		for k := 0; ; k++ {
			added := false
			for _, r := range rest {
				if k < len(r) {
					l = append(l, r[k])
					added = true
				}
			}
			if !added {
				break
			}
		}
		res.Valid += len(p.valid)
		res.Chains += len(p.chains)
		res.Refusals += len(p.refusals)
		lists = append(lists, l)
	}
	res.Possible = res.Valid + res.Chains + res.Refusals
	n := count
	if n <= 0 || n > res.Possible {
		n = res.Possible
	}
	for round := 0; len(res.Artifacts) < n; round++ {
		for _, l := range lists {
			if round < len(l) && len(res.Artifacts) < n {
				a := l[round]
				a.ID = artifactID(source, "offline", len(res.Artifacts)+1)
				res.Artifacts = append(res.Artifacts, a)
			}
		}
	}
	return res, nil
}

func skipText(skips []Skip) string {
	var parts []string
	for _, s := range skips {
		parts = append(parts, s.Tool+": "+s.Why)
	}
	return strings.Join(parts, "; ")
}

// plan is one tool's scenarios before they are mixed.
type plan struct {
	t                        *Tool
	root                     map[string]any
	doc                      schemaDoc
	args                     []json.RawMessage // valid arguments, realistic first
	valid, chains, refusals  []Artifact
	producer, consumer, noun string
}

// seed varies values per tool, so that two tools' first artifacts differ.
func seed(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % 7)
}

// planTool derives a tool's valid calls and refusals; an error says why
// the tool cannot be used.
func planTool(source string, t *Tool) (*plan, error) {
	if err := t.Compile(); err != nil {
		return nil, fmt.Errorf("its schema does not compile: %v", firstLine(err.Error()))
	}
	var root map[string]any
	if err := json.Unmarshal(t.InputSchema, &root); err != nil {
		return nil, fmt.Errorf("its input schema is not an object: %v", err)
	}
	p := &plan{t: t, root: root, doc: schemaDoc{root: root}}
	p.producer, p.consumer, p.noun = roles(t.Name)
	type cand struct {
		args json.RawMessage
		kind string
	}
	var cands []cand
	for _, ex := range t.examples {
		cands = append(cands, cand{ex, "an operation's example"})
	}
	v := seed(t.Name)
	var lastErr error
	for _, all := range []bool{false, true} {
		kind := map[bool]string{false: "required arguments", true: "every argument"}[all]
		for _, g := range []valueGen{{doc: p.doc, variant: v, all: all}, {doc: p.doc, all: all}, {doc: p.doc, all: all, plain: true}} {
			b, _ := json.Marshal(g.value(root, "", 0))
			if err := t.Validate(b); err != nil {
				lastErr = err
				continue
			}
			cands = append(cands, cand{b, kind})
			break
		}
		v++
	}
	for i, c := range cands {
		if !t.Valid(c.args) || containsJSON(p.args, c.args) {
			continue
		}
		// A tool that can run (a generated one) keeps only calls its
		// operations accept: its input schema at a coarse level is the
		// union of its actions', wider than any one action.
		var mock MockOutput
		if t.run != nil {
			out, isErr := t.run(c.args)
			if isErr && i >= len(t.examples) {
				continue
			}
			mock = MockOutput{Output: out, IsError: isErr, Grounding: "executed"}
		} else {
			mock = MockOutput{Output: mockFor(t, argsMap(c.args)), Grounding: t.Grounding()}
		}
		p.args = append(p.args, c.args)
		a := t.artifact(source, c.args, fmt.Sprintf("call %s with %s", t.Name, describe(c.args)))
		a.Assertions = append(a.Assertions, Assertion{Kind: "tool_call", Tool: t.Name, Arguments: c.args, Severity: "blocker", Note: "the agent must make this call"})
		if len(t.OutputSchema) > 0 {
			a.Assertions = append(a.Assertions, Assertion{Kind: "output_schema", Tool: t.Name, Severity: "warning", Note: "the result must fit the tool's output schema"})
		}
		a.MockOutputs = []MockOutput{mock}
		a.Title = t.Name + " with " + c.kind
		p.valid = append(p.valid, a)
	}
	if len(p.valid) == 0 {
		why := "no valid call could be derived from its schema"
		if lastErr != nil {
			why += " (" + firstLine(lastErr.Error()) + ")"
		}
		return nil, fmt.Errorf("%s", why)
	}
	p.refusals = p.refusalsOf(source)
	return p, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func argsMap(b json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(b, &m)
	return m
}

// refusalsOf makes one refusal per kind of constraint the tool's
// arguments carry: required ones first, then optional ones for kinds not
// probed yet; a missing required argument; an unknown argument where
// additionalProperties is false. Each is checked to be refused by the
// tool's schema, and names the constraint it probes.
func (p *plan) refusalsOf(source string) []Artifact {
	t := p.t
	base := argsMap(p.args[0])
	for _, ex := range t.examples { // prefer an example that has arguments
		if m := argsMap(ex); len(m) > 1 {
			base = m
			break
		}
	}
	// A full call gives optional arguments good values to break.
	full := map[string]any{}
	if len(p.args) > 1 && len(t.examples) == 0 {
		full = argsMap(p.args[len(p.args)-1])
	}
	props, _ := p.root["properties"].(map[string]any)
	required := asList(p.root["required"])
	names := append([]string{}, required...)
	if len(t.examples) > 0 {
		// A coarse tool requires little but its action; corrupt the
		// arguments its operation example gives instead.
		names = sortedKeys(base)
	}
	sort.Strings(names)
	isReq := map[string]bool{}
	for _, n := range names {
		isReq[n] = true
	}
	for _, n := range sortedKeys(props) {
		if !isReq[n] {
			names = append(names, n)
		}
	}
	seen := map[string]bool{}
	var probes []probe
	for _, name := range names {
		ps, _ := props[name].(map[string]any)
		if ps == nil || name == "action" {
			continue
		}
		good, ok := base[name]
		if !ok {
			good = full[name]
		}
		for _, pr := range p.doc.probesOf(name, ps, good) {
			if !seen[pr.kind] {
				probes = append(probes, pr)
				seen[pr.kind] = true
			}
		}
	}
	for _, r := range required {
		if _, given := base[r]; given && r != "action" {
			probes = append(probes, probe{kind: ProbeRequired, arg: r, remove: true, why: "left out, though required"})
			break
		}
	}
	if p.root["additionalProperties"] == false {
		probes = append(probes, probe{kind: ProbeUnknown, arg: "unexpected_option", value: true, why: "an argument the tool does not declare"})
	}
	var out []Artifact
	for _, pr := range probes {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		if pr.remove {
			delete(m, pr.arg)
		} else {
			m[pr.arg] = pr.value
		}
		b, _ := json.Marshal(m)
		if t.Valid(b) {
			continue
		}
		a := t.artifact(source, b, fmt.Sprintf("call %s with %s (%s: %s)", t.Name, describe(b), pr.arg, pr.why))
		a.ExpectedCalls = nil
		a.Assertions = []Assertion{{Kind: "not_call", Tool: t.Name, Arguments: b, Severity: "blocker", Probes: pr.kind,
			Note: fmt.Sprintf("argument %q is %s (probes %s); a good agent refuses or repairs it", pr.arg, pr.why, pr.kind)}}
		a.Title = fmt.Sprintf("%s with %s: %s, probing %s (to refuse or repair)", t.Name, pr.arg, pr.why, pr.kind)
		out = append(out, a)
	}
	return out
}

func (t *Tool) artifact(source string, args json.RawMessage, reason string) Artifact {
	prompt := t.request(args)
	return Artifact{Version: ArtifactVersion, Source: source, Tier: "simple",
		Turns:         []Turn{{Prompt: prompt}},
		ExpectedCalls: []ExpectedCall{{Tool: t.Name, Arguments: args, Reason: reason}},
		Provenance:    Provenance{Backend: "offline", Stage: "scenario"}}
}

// mockFor is a mock output for an external tool called with args (and
// what earlier calls of its scenario set): the tool's example output or
// its output schema's smallest value, with every field named like an
// argument set to that argument's value, so that outputs agree with the
// calls and with each other. It falls back to the unchanged mock when the
// edit breaks the output schema or the example's shape.
func mockFor(t *Tool, state map[string]any) string {
	base := mockFromSchema(t)
	var v any
	if json.Unmarshal([]byte(base), &v) != nil || len(state) == 0 {
		return base
	}
	v = echo(v, state, 0)
	b, err := json.Marshal(v)
	if err != nil || t.OutputFits(string(b)) != nil || t.ShapeMismatch(string(b)) != "" {
		return base
	}
	return string(b)
}

// echo sets fields named like a state key (or its singular) to the
// state's value when the kinds agree.
func echo(v any, state map[string]any, depth int) any {
	if depth > 6 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, cur := range x {
			if sv, ok := lookupState(state, k); ok && sameKind(cur, sv) {
				x[k] = sv
				continue
			}
			x[k] = echo(cur, state, depth+1)
		}
	case []any:
		for i := range x {
			x[i] = echo(x[i], state, depth+1)
		}
	}
	return v
}

func lookupState(state map[string]any, k string) (any, bool) {
	if v, ok := state[k]; ok {
		return v, true
	}
	for sk, v := range state {
		if singular(sk) == k {
			if l, ok := v.([]any); ok && len(l) > 0 {
				return l[0], true
			}
		}
	}
	return nil, false
}

func sameKind(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case float64:
		_, ok := b.(float64)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	}
	return false
}

// Usable splits tools into those some valid call fits and those skipped,
// each with why, so that one unsatisfiable schema leaves the rest of a
// source usable by either backend.
func Usable(source string, tools []Tool) ([]Tool, []Skip) {
	var ok []Tool
	var skipped []Skip
	for i := range tools {
		if _, err := planTool(source, &tools[i]); err != nil {
			skipped = append(skipped, Skip{Tool: tools[i].Name, Why: err.Error()})
			continue
		}
		ok = append(ok, tools[i])
	}
	return ok, skipped
}
