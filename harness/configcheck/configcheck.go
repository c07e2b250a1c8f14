// Package configcheck checks what the experiment schema
// (specs/experiment.schema.json) cannot say of a config, each problem at
// its position: model entries by their backends, interfaces that conflict
// or are named as another, fault settings. harness.LoadConfig runs every
// check and reports all problems at once.
package configcheck

import (
	"encoding/json"
	"strings"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/surface"
)

// Models checks what the schema cannot say of the model entries:
// built-in agents by name, names given once, and the fields each backend
// takes.
func Models(doc *speclang.Document, models []results.ModelEntry) speclang.ErrorList {
	var list speclang.ErrorList
	seen := map[string]bool{}
	for i, m := range models {
		at := func(field string) []any {
			if field == "" || m.IsPlain() {
				return []any{"models", i}
			}
			return []any{"models", i, field}
		}
		if seen[m.Name] {
			list = append(list, doc.Errorf(at("name"), "found model name %q again; expected each name once: trial ids, records and the report tell models apart by it", m.Name))
		}
		seen[m.Name] = true
		list = append(list, agent.For(m).Check(doc, m, at)...)
	}
	return list
}

// Interfaces checks what the schema cannot say of the interfaces:
// transforms that conflict, transforms that change nothing at L4 (whose
// tools, a domain's or a server's as published, have no actions), names
// given once among the interfaces and the granularities, and names that
// say what the interface is. A missing name is filled with the standard
// one (surface.DefaultName), so that it is what granite list --interfaces
// and granite serve --interface call the same interface.
func Interfaces(doc *speclang.Document, c *results.Config) speclang.ErrorList {
	var list speclang.ErrorList
	// seen maps each name to what it names; same maps each interface's
	// level and transforms to its name, so that one interface listed twice
	// under two names is found too.
	type key struct {
		lv level.Level
		t  surface.Transforms
	}
	seen := map[string]string{}
	same := map[key]string{}
	for _, lv := range c.Granularities {
		seen[string(lv)] = "granularities"
		same[key{lv, surface.Transforms{}}] = string(lv)
	}
	for i := range c.Interfaces {
		s := &c.Interfaces[i]
		at := func(field string) []any { return []any{"interfaces", i, field} }
		for _, p := range s.Check() {
			list = append(list, doc.Errorf(at(p.Key), "%s", p.Msg))
		}
		named := s.Name != ""
		if !named {
			s.Name = surface.DefaultName(s.Level, s.Transforms)
		}
		// A name that reads as another interface (a bare level name is the
		// level as written) would have records say one and hold another.
		if p, err := surface.Parse(s.Name); err == nil && named && (p.Level != s.Level || p.Transforms.Normal() != s.Transforms.Normal()) {
			list = append(list, doc.Errorf(at("name"), "found name %q on %s; expected a name of its own, or no name for its standard one, %s: %q is the standard name of %s, and records, scores and the report tell interfaces apart by name",
				s.Name, describe(s.Level, s.Transforms), surface.DefaultName(s.Level, s.Transforms), s.Name, describe(p.Level, p.Transforms)))
			continue
		}
		if where, ok := seen[s.Name]; ok {
			what := "again"
			if where == "granularities" {
				what = "again, which granularities already runs as the level as written"
			}
			list = append(list, doc.Errorf(at("name"), "found interface name %q %s; expected each name once among interfaces and granularities: records, scores and the report tell interfaces apart by it", s.Name, what))
			continue
		}
		seen[s.Name] = "interfaces"
		k := key{s.Level, s.Transforms.Normal()}
		if other, ok := same[k]; ok {
			list = append(list, doc.Errorf([]any{"interfaces", i}, "found interface %q, which is %q again (%s); expected each interface once: its trials would repeat the other's", s.Name, other, describe(s.Level, s.Transforms)))
			continue
		}
		same[k] = s.Name
	}
	return list
}

// InterfaceNames parses each interface a config gives by name, so
// that a name surface.Parse refuses is an error at its place rather than
// a failure to decode the config.
func InterfaceNames(doc *speclang.Document) speclang.ErrorList {
	var raw struct {
		Interfaces []json.RawMessage `json:"interfaces"`
	}
	if doc.Decode(&raw) != nil {
		return nil // a family's name: the schema allows only those
	}
	var list speclang.ErrorList
	for i, item := range raw.Interfaces {
		var name string
		if json.Unmarshal(item, &name) != nil {
			continue
		}
		if _, err := surface.Parse(name); err != nil {
			list = append(list, doc.Errorf([]any{"interfaces", i}, "%v", err))
		}
	}
	return list
}

// describe says what an interface is: its level and its transforms away
// from the defaults.
func describe(lv level.Level, t surface.Transforms) string {
	if ch := t.Changes(); len(ch) > 0 {
		return string(lv) + " with " + strings.Join(ch, ", ")
	}
	return string(lv) + " as written"
}

// Faults checks what the schema cannot say of the fault settings
// (faults.Check), and that there is a server to inject them into: a
// scenario run's generated domain, or the regrouped server artifacts are
// played on at levels or interfaces, or on a live source.
func Faults(doc *speclang.Document, c *results.Config) speclang.ErrorList {
	var list speclang.ErrorList
	regrouped := len(c.Granularities) > 0 || len(c.Interfaces) > 0 || c.ArtifactCmd != "" || c.ArtifactURL != ""
	if len(c.Faults) > 0 && c.Artifacts != "" && !regrouped {
		list = append(list, doc.Errorf([]any{"faults"}, "found faults beside artifacts played as published; expected granularities, interfaces, artifact_cmd or artifact_url beside them: faults are injected where a generated domain's server runs a call or at a regrouped server's relay to its source, and an artifact's replay server as published has neither"))
	}
	for _, p := range faults.Check(c.Faults) {
		list = append(list, doc.Errorf([]any{"faults", p.Index, p.Field}, "%s", p.Msg))
	}
	return list
}
