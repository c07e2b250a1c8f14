package scenarios

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Verbs that start a chain (they make or find something) and verbs that
// continue one (they act on something made or found), as tool names use
// them.
var (
	makeVerbs = map[string]int{"create": 3, "add": 3, "new": 3, "insert": 3, "write": 3, "upload": 3, "post": 3, "save": 3, "register": 3, "put": 2,
		"list": 2, "search": 2, "find": 2, "query": 2, "browse": 1, "get": 1, "read": 1, "status": 1}
	useVerbs = map[string]int{"get": 3, "read": 3, "open": 3, "fetch": 3, "show": 3, "view": 3, "describe": 3, "inspect": 3,
		"update": 2, "edit": 2, "patch": 2, "modify": 2, "set": 2, "append": 2, "comment": 2, "add": 1, "move": 1, "rename": 1,
		"delete": 1, "remove": 1, "close": 1}
)

// identity says which argument names identify a thing a chain can carry
// from one call to the next, whatever their type; other strings of the
// same name carry too, but never free text, paging or the action.
var (
	identity = regexp.MustCompile(`(?i)(^|_)(id|ids|name|names|path|paths|url|uri|owner|repo|number|key|slug|sha|ref|email|channel|file|room|device|zone|entity|title)$|Id$|Name$|Path$`)
	noCarry  = regexp.MustCompile(`(?i)^(action|limit|count|offset|page|per_page|page_size|cursor|description|body|content|text|message|note|comment|query|q|reason|summary)$`)
)

// roles reads a tool name's verb: how well it starts a chain, how well it
// continues one, and its noun ("create_issue" makes issues).
func roles(name string) (maker, user, noun string) {
	words := strings.FieldsFunc(camelSplit(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	if len(words) == 0 {
		return "", "", ""
	}
	verb := strings.ToLower(words[0])
	if makeVerbs[verb] > 0 {
		maker = verb
	}
	if useVerbs[verb] > 0 {
		user = verb
	}
	if len(words) > 1 {
		noun = singular(strings.ToLower(words[len(words)-1]))
	}
	return maker, user, noun
}

func camelSplit(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// link sets b's identity arguments from what call a sent or returned:
// an argument or output field of the same name (or its singular, or
// "id" for "<noun>_id"). It returns the new arguments and the names
// carried over.
func link(b map[string]any, bProps map[string]any, aArgs map[string]any, aOut any) (map[string]any, []string) {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	var carried []string
	for _, name := range sortedKeys(bProps) {
		cur, present := b[name]
		if !present || noCarry.MatchString(name) {
			continue
		}
		if _, isStr := firstOf(cur).(string); !isStr && !identity.MatchString(name) {
			continue
		}
		v, ok := find(aArgs, name, 0)
		if !ok && aOut != nil {
			v, ok = find(aOut, name, 0)
		}
		if !ok {
			continue
		}
		// A list argument takes a found item as its only element; a
		// single argument takes a found list's first item.
		_, wantList := b[name].([]any)
		if l, isList := v.([]any); isList && !wantList {
			if len(l) == 0 {
				continue
			}
			v = l[0]
		} else if !isList && wantList {
			v = []any{v}
		}
		if !sameKind(firstOf(b[name]), firstOf(v)) {
			continue
		}
		out[name] = v
		carried = append(carried, name)
	}
	return out, carried
}

func firstOf(v any) any {
	if l, ok := v.([]any); ok && len(l) > 0 {
		return l[0]
	}
	return v
}

// find looks for a field named like name (itself, its singular, or id
// for a name ending in _id) in a JSON value, shallowest first.
func find(v any, name string, depth int) (any, bool) {
	if depth > 4 {
		return nil, false
	}
	keys := []string{name, singular(name)}
	if strings.HasSuffix(strings.ToLower(name), "_id") || strings.HasSuffix(name, "Id") {
		keys = append(keys, "id")
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			if fv, ok := x[k]; ok {
				return fv, true
			}
		}
		for _, k := range sortedKeys(x) {
			if fv, ok := find(x[k], name, depth+1); ok {
				return fv, true
			}
		}
	case []any:
		for _, e := range x {
			if fv, ok := find(e, name, depth+1); ok {
				return fv, true
			}
		}
	}
	return nil, false
}

// node is one valid call a chain can use: a tool with one of its
// argument sets, and the verb that names what it does (a coarse tool's
// action, else the tool's name).
type node struct {
	p          *plan
	args       json.RawMessage
	maker, use string
	noun       string
}

// chainsOf builds multi-call scenarios: for each valid call, the best
// calls to come before it (a maker of the same noun first) whose
// arguments or result give it an identity argument; where a call has two
// followers, a three-call chain. A generated domain's chains are executed
// on one fresh store and kept only when every call succeeds; an external
// tool's are mocked from one shared state, so that what the first call
// made is what the next one reads.
func chainsOf(source string, plans []*plan) {
	var nodes []node
	for _, p := range plans {
		for _, a := range p.args {
			name := p.t.Name
			if act, ok := argsMap(a)["action"].(string); ok {
				name = act
			}
			mk, use, noun := roles(name)
			nodes = append(nodes, node{p, a, mk, use, noun})
		}
	}
	type pair struct {
		a, b  int
		score int
	}
	followers := map[int][]pair{}
	for bi, b := range nodes {
		props, _ := b.p.root["properties"].(map[string]any)
		var best []pair
		for ai, a := range nodes {
			if ai == bi || a.use == "delete" || a.use == "remove" {
				continue // what a chain starts from must still be there
			}
			score := makeVerbs[a.maker] + useVerbs[b.use]
			if a.noun != "" && a.noun == b.noun {
				score += 4
			}
			_, carried := link(argsMap(b.args), props, argsMap(a.args), outputOf(a.p, a.args))
			if len(carried) == 0 {
				continue
			}
			best = append(best, pair{ai, bi, score + len(carried)})
		}
		sort.SliceStable(best, func(i, j int) bool { return best[i].score > best[j].score })
		kept := 0
		for _, pr := range best {
			if kept == 3 {
				break
			}
			if c, ok := chain(source, []node{nodes[pr.a], b}); ok {
				b.p.chains = append(b.p.chains, c)
				followers[pr.a] = append(followers[pr.a], pr)
				kept++
			}
		}
	}
	// Three calls: a maker and two of its followers.
	for ai := range nodes {
		ps := followers[ai]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].score > ps[j].score })
		for k := 1; k < len(ps); k++ {
			if nodes[ps[0].b].p == nodes[ps[k].b].p && string(nodes[ps[0].b].args) == string(nodes[ps[k].b].args) {
				continue
			}
			if c, ok := chain(source, []node{nodes[ai], nodes[ps[0].b], nodes[ps[k].b]}); ok {
				nodes[ai].p.chains = append(nodes[ai].p.chains, c)
				break
			}
		}
	}
}

// outputOf is what a call returns: the store's answer for a generated
// tool, the mock for an external one; nil when it is not JSON.
func outputOf(p *plan, args json.RawMessage) any {
	var text string
	if p.t.run != nil {
		out, isErr := p.t.run(args)
		if isErr {
			return nil
		}
		text = out
	} else {
		text = mockFor(p.t, argsMap(args))
	}
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return nil
	}
	return v
}

// chain builds one multi-call artifact, or reports that it could not.
func chain(source string, nodes []node) (Artifact, bool) {
	steps := make([]*plan, len(nodes))
	for i, n := range nodes {
		steps[i] = n.p
	}
	var calls []ExpectedCall
	state := map[string]any{}
	var prevArgs map[string]any
	var prevOut any
	var links []string
	exec := steps[0].t.run != nil
	for i, p := range steps {
		args := argsMap(nodes[i].args)
		if i > 0 {
			props, _ := p.root["properties"].(map[string]any)
			linked, carried := link(args, props, prevArgs, prevOut)
			b, _ := json.Marshal(linked)
			if len(carried) > 0 && p.t.Valid(b) {
				args = linked
				for _, c := range carried {
					links = append(links, fmt.Sprintf("%s of %s from %s", c, p.t.Name, steps[i-1].t.Name))
				}
			}
		}
		b, _ := json.Marshal(args)
		if !p.t.Valid(b) {
			return Artifact{}, false
		}
		calls = append(calls, ExpectedCall{Tool: p.t.Name, Arguments: b, Reason: fmt.Sprintf("step %d: %s", i+1, lowerFirst(p.t.purposeOf(b)))})
		for k, v := range args {
			state[k] = v
		}
		prevArgs = args
		if exec {
			prevOut = nil
			if out := steps[0].t.runSeq(calls); out != nil {
				last := out[len(out)-1]
				if last.IsError {
					return Artifact{}, false
				}
				_ = json.Unmarshal([]byte(last.Output), &prevOut)
			}
		} else {
			var v any
			_ = json.Unmarshal([]byte(mockFor(p.t, state)), &v)
			prevOut = v
		}
	}
	if len(links) == 0 {
		return Artifact{}, false
	}
	var mocks []MockOutput
	if exec {
		mocks = steps[0].t.runSeq(calls)
		for i := range mocks {
			if mocks[i].IsError {
				return Artifact{}, false
			}
			mocks[i].Call = i
		}
	} else {
		st := map[string]any{}
		for i, c := range calls {
			for k, v := range argsMap(c.Arguments) {
				st[k] = v
			}
			t := steps[i].t
			mocks = append(mocks, MockOutput{Call: i, Output: mockFor(t, st), Grounding: t.Grounding()})
		}
	}
	var sentences []string
	var assertions []Assertion
	var names []string
	for i, c := range calls {
		t := steps[i].t
		word := "Then"
		if i == 0 {
			word = "First"
		}
		sentences = append(sentences, word+": "+lowerFirst(t.request(c.Arguments)))
		assertions = append(assertions, Assertion{Kind: "tool_call", Tool: t.Name, Arguments: c.Arguments, Severity: "blocker", Note: fmt.Sprintf("step %d of the chain", i+1)})
		names = append(names, t.Name)
	}
	tier := "simple"
	if len(calls) >= 3 {
		tier = "complex"
	}
	return Artifact{Version: ArtifactVersion, Source: source, Tier: tier,
		Title:         strings.Join(names, " then "),
		Novelty:       "carries " + strings.Join(links, "; "),
		Turns:         []Turn{{Prompt: strings.Join(sentences, " ")}},
		ExpectedCalls: calls, MockOutputs: mocks, Assertions: assertions,
		Provenance: Provenance{Backend: "offline", Stage: "scenario"}}, true
}
