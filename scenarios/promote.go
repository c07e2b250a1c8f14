package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// PromotedScenario is one entry of a scenarios.yaml table.
type PromotedScenario struct {
	ID         string                      `yaml:"id"`
	Title      string                      `yaml:"title,omitempty"`
	Difficulty string                      `yaml:"difficulty"`
	Prompt     string                      `yaml:"prompt"`
	Gold       map[string][]map[string]any `yaml:"gold"`
	Expect     map[string][]map[string]any `yaml:"expect"`
}

// Promote turns executed-grounded artifacts of a generated domain into
// scenarios in the scenarios.yaml form, which granite verify can check.
// The gold is the artifact's calls, mapped to L4; the expectations are
// read off the store the calls leave: changed fields of seeded rows,
// deleted rows, created rows (matched by their values), and for read-only
// scenarios a value the outputs report. It returns the promoted scenarios
// and, per artifact left out, why.
func Promote(d *speclang.Domain, dom *mcpdomain.Domain, arts []Artifact, firstID int) ([]PromotedScenario, []string) {
	var out []PromotedScenario
	var skipped []string
	names := map[string]bool{}
	for _, lv := range d.Levels {
		for _, t := range lv.Tools {
			names[t.Name] = true
		}
	}
	snake := regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)
	for _, a := range arts {
		skip := func(why string) { skipped = append(skipped, a.ID+": "+why) }
		name, level, ok := DomainSource(a.Source)
		ok = ok && name == d.Name
		if !ok {
			skip(fmt.Sprintf("its source %q is not domain %s", a.Source, d.Name))
			continue
		}
		if len(a.MockOutputs) != len(a.ExpectedCalls) || slices.ContainsFunc(a.MockOutputs, func(m MockOutput) bool { return m.Grounding != "executed" || m.IsError }) {
			skip("not every call was executed without error")
			continue
		}
		var parts []string
		for _, t := range a.Turns {
			parts = append(parts, t.Prompt)
		}
		prompt := strings.Join(parts, " ")
		if slices.ContainsFunc(snake.FindAllString(prompt, -1), func(w string) bool { return names[w] }) {
			skip("its prompt names a tool")
			continue
		}
		n := len(a.ExpectedCalls)
		tier, ok := tierOf(n)
		if !ok {
			skip(fmt.Sprintf("%d calls fit no tier (easy 1-2, medium 4-5, hard 9-10)", n))
			continue
		}
		var gold []map[string]any
		bad, writes := false, false
		for _, c := range a.ExpectedCalls {
			t := dom.Tool(level, c.Tool)
			if t == nil {
				bad = true
				break
			}
			op, args, err := t.Prepare(c.Arguments)
			if err != nil {
				bad = true
				break
			}
			var m map[string]any
			_ = json.Unmarshal(args, &m)
			delete(m, "action")
			gold = append(gold, map[string]any{"tool": op.Name, "arguments": wholeNumbers(m)})
			writes = writes || !op.ReadOnly
		}
		if bad {
			skip("a call does not prepare")
			continue
		}
		expect, err := expectations(d, dom, level, a, writes)
		if err != nil {
			skip(err.Error())
			continue
		}
		out = append(out, PromotedScenario{ID: fmt.Sprintf("%s-%03d", d.Name, firstID+len(out)), Title: a.ID, Difficulty: tier,
			Prompt: prompt, Gold: map[string][]map[string]any{"L4": gold}, Expect: expect})
	}
	return out, skipped
}

func tierOf(n int) (string, bool) {
	for _, t := range speclang.Tiers {
		if n >= t.Min && n <= t.Max {
			return t.Name, true
		}
	}
	return "", false
}

// expectations replays the calls on a fresh store and describes what
// changed, or a reported value when nothing did and nothing was meant to
// (writes, when a call writes: a scenario that writes must say what it
// leaves behind, and verify wants a condition only its writes make true).
func expectations(d *speclang.Domain, dom *mcpdomain.Domain, level level.Level, a Artifact, writes bool) (map[string][]map[string]any, error) {
	st := dom.NewStore()
	before, err := mcpdomain.Rows(st.Snapshot())
	if err != nil {
		return nil, err
	}
	for _, m := range runCalls(dom, level, st, a.ExpectedCalls) {
		if m.IsError {
			return nil, fmt.Errorf("replaying call %d: %s", m.Call, m.Output)
		}
	}
	after, err := mcpdomain.Rows(st.Snapshot())
	if err != nil {
		return nil, err
	}
	var state []map[string]any
	for _, e := range d.Entities {
		old := map[string]map[string]any{}
		for _, r := range before[e.Plural] {
			old[fmt.Sprint(r["id"])] = r
		}
		seen := map[string]bool{}
		for _, r := range after[e.Plural] {
			id := fmt.Sprint(r["id"])
			seen[id] = true
			prev, existed := old[id]
			if !existed {
				where := map[string]any{}
				for k, v := range r {
					if _, scalar := v.(map[string]any); k != "id" && !scalar && v != nil {
						if _, list := v.([]any); !list {
							where[k] = v
						}
					}
				}
				state = append(state, map[string]any{"entity": e.Name, "where": wholeNumbers(where), "count": 1})
				continue
			}
			changed := map[string]any{}
			for k, v := range r {
				if fmt.Sprint(prev[k]) != fmt.Sprint(v) {
					changed[k] = v
				}
			}
			if len(changed) > 0 {
				state = append(state, map[string]any{"entity": e.Name, "id": id, "fields": wholeNumbers(changed)})
			}
		}
		for id := range old {
			if !seen[id] {
				state = append(state, map[string]any{"entity": e.Name, "id": id, "absent": true})
			}
		}
	}
	sort.SliceStable(state, func(i, j int) bool {
		return fmt.Sprint(state[i]["entity"], state[i]["id"]) < fmt.Sprint(state[j]["entity"], state[j]["id"])
	})
	if len(state) > 0 {
		return map[string][]map[string]any{"state": state}, nil
	}
	if writes {
		return nil, fmt.Errorf("its writes leave the store as it was, so no state condition tells doing them from not")
	}
	if v, ok := reported(a.MockOutputs); ok {
		return map[string][]map[string]any{"answer": {{"value": v, "what": "a value the tools report"}}}, nil
	}
	return nil, fmt.Errorf("no state change and no reported value to expect")
}

// wholeNumbers writes a whole JSON number (which decodes as float64) as
// an integer, in a map's values and in lists and maps within them: YAML
// would write 60 as 60.0, which an integer field refuses; a number field
// takes 60 as well.
func wholeNumbers[T any](v T) T {
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				return int64(v)
			}
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		}
		return v
	}
	return walk(v).(T)
}

// reported picks a distinctive value from the outputs: the first ID.
func reported(outs []MockOutput) (string, bool) {
	idRe := regexp.MustCompile(`"id":"([A-Z]+[0-9]+)"`)
	for _, o := range outs {
		if m := idRe.FindStringSubmatch(o.Output); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// PromotedYAML renders promoted scenarios as a scenarios.yaml table; a
// prompt or a value a model wrote is quoted where YAML would read it
// otherwise (speclang.MarshalYAML).
func PromotedYAML(domain string, scs []PromotedScenario) ([]byte, error) {
	b, err := speclang.MarshalYAML(map[string]any{"domain": domain, "scenarios": scs})
	if err != nil {
		return nil, err
	}
	return append([]byte("# yaml-language-server: $schema=../scenario.schema.json\n"), b...), nil
}
