package scenarios

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
)

// independent compiles a schema with a compiler of its own (formats
// asserted), so that validity is not the synthesizer's own word.
func independent(t testing.TB, url string, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validates(t testing.TB, s *jsonschema.Schema, raw []byte) bool {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}

// figures are what the issue asks to measure of a set of artifacts.
type figures struct {
	tools, used, calls, validCalls, refusals, invalidRefusals, multi, arts int
	formatValues, patternValues                                            int
	kinds, allowed                                                         map[string]bool
	// strict holds the set to the 30% share of multi-call artifacts; a
	// single level of one domain is only logged (see the totals).
	strict bool
}

// allowedKinds lists the constraint keywords a schema's top-level
// properties carry, read straight from the schema.
func allowedKinds(root map[string]any, into map[string]bool) {
	doc := schemaDoc{root: root}
	props, _ := root["properties"].(map[string]any)
	if len(asList(root["required"])) > 0 {
		into[ProbeRequired] = true
	}
	if root["additionalProperties"] == false {
		into[ProbeUnknown] = true
	}
	for _, p := range props {
		m, _ := p.(map[string]any)
		m = doc.resolve(m)
		for _, k := range []string{"enum", "pattern", "format", "minimum", "maximum", "minLength", "maxLength", "minItems"} {
			if _, ok := m[k]; ok {
				into[k] = true
			}
		}
	}
}

// measure checks artifacts against independently compiled schemas and
// counts what the issue asks for; format and pattern values of valid
// calls are each validated alone by the same validator.
func measure(t *testing.T, tools []Tool, arts []Artifact, coarse bool) figures {
	f := figures{tools: len(tools), arts: len(arts), kinds: map[string]bool{}, allowed: map[string]bool{}}
	schemas := map[string]*jsonschema.Schema{}
	roots := map[string]map[string]any{}
	for _, tl := range tools {
		schemas[tl.Name] = independent(t, "indep:"+tl.Name, tl.InputSchema)
		var root map[string]any
		_ = json.Unmarshal(tl.InputSchema, &root)
		roots[tl.Name] = root
		allowedKinds(root, f.allowed)
	}
	if coarse {
		// A coarse tool requires only its action; its examples give the
		// rest, so a missing required argument cannot be probed.
		delete(f.allowed, ProbeRequired)
	}
	used := map[string]bool{}
	for _, a := range arts {
		if len(a.ExpectedCalls) >= 2 {
			f.multi++
		}
		for _, c := range a.ExpectedCalls {
			f.calls++
			used[c.Tool] = true
			if validates(t, schemas[c.Tool], c.Arguments) {
				f.validCalls++
			} else {
				t.Errorf("%s: call of %s with %s is invalid", a.ID, c.Tool, c.Arguments)
			}
			args := argsMap(c.Arguments)
			props, _ := roots[c.Tool]["properties"].(map[string]any)
			doc := schemaDoc{root: roots[c.Tool]}
			for name, v := range args {
				ps, _ := props[name].(map[string]any)
				ps = doc.resolve(ps)
				str, isStr := v.(string)
				if ps == nil || !isStr {
					continue
				}
				for _, k := range []string{"format", "pattern"} {
					if kw, ok := ps[k].(string); ok {
						b, _ := json.Marshal(map[string]any{"type": "string", k: kw})
						one := independent(t, fmt.Sprintf("indep:%s:%s", k, kw), b)
						q, _ := json.Marshal(str)
						if !validates(t, one, q) {
							t.Errorf("%s: %s=%q does not match %s %s", a.ID, name, str, k, kw)
						}
						if k == "format" {
							f.formatValues++
						} else {
							f.patternValues++
						}
					}
				}
			}
		}
		for _, as := range a.Assertions {
			if as.Kind != "not_call" {
				continue
			}
			f.refusals++
			f.kinds[as.Probes] = true
			if !validates(t, schemas[as.Tool], as.Arguments) {
				f.invalidRefusals++
			} else {
				t.Errorf("%s: refusal %s of %s is valid", a.ID, as.Arguments, as.Tool)
			}
		}
	}
	f.used = len(used)
	return f
}

func (f figures) check(t *testing.T, name string) {
	t.Helper()
	var missing []string
	for k := range f.allowed {
		if !f.kinds[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	share := float64(f.multi) / float64(f.arts)
	t.Logf("%s: %d/%d tools covered, %d/%d valid calls valid, %d/%d refusals invalid, %d of %d artifacts (%.0f%%) with 2+ calls, %d format and %d pattern values checked, refusal kinds %v",
		name, f.used, f.tools, f.validCalls, f.calls, f.invalidRefusals, f.refusals, f.multi, f.arts, 100*share, f.formatValues, f.patternValues, keys(f.kinds))
	if f.used != f.tools || f.validCalls != f.calls || f.invalidRefusals != f.refusals {
		t.Errorf("%s: coverage or validity below 100%%", name)
	}
	if share < 0.30 && f.strict {
		t.Errorf("%s: %.0f%% of artifacts have two or more calls; want at least 30%%", name, 100*share)
	}
	if len(missing) > 0 {
		t.Errorf("%s: no refusal probes %v, which the schemas carry", name, missing)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestFiguresGeneratedDomains: the figures on every generated
// domain at every level.
func TestFiguresGeneratedDomains(t *testing.T) {
	multi, all := 0, 0
	for _, d := range gen.Domains {
		for _, l := range level.Levels {
			tools := FromDomain(d, l)
			arts, err := Offline("domain:"+d.Name+"/"+string(l), tools, 0)
			if err != nil {
				t.Fatal(err)
			}
			f := measure(t, tools, arts, l != level.L4)
			f.check(t, d.Name+"/"+string(l))
			multi += f.multi
			all += f.arts
		}
	}
	t.Logf("all generated domains and levels: %d of %d artifacts (%.0f%%) with 2+ calls", multi, all, 100*float64(multi)/float64(all))
	if 10*multi < 3*all {
		t.Errorf("%d of %d artifacts have two or more calls; want at least 30%%", multi, all)
	}
}

// TestFiguresSeventyTools: the same figures on the 70-tool spec and on the
// public-style tools.
func TestFiguresSeventyTools(t *testing.T) {
	tools := seventyTools()
	arts, err := Offline("tools:synthetic", tools, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkArtifacts(t, arts)
	f := measure(t, tools, arts, false)
	f.strict = true
	f.check(t, "70 tools")
	pub, err := loadTools("testdata/public_style_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	arts, err = Offline("tools:public", pub, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkArtifacts(t, arts)
	measure(t, pub, arts, false).check(t, "public-style tools")
}
