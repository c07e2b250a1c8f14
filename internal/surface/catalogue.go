package surface

import (
	"bytes"
	"fmt"

	"github.com/mcpgranite/granite/internal/level"
)

// Catalogue is every standard interface of a server whose levels' tools
// are given: each level as written, then each preset over it, finest
// level first. A preset that changes nothing at a level (nested where no
// tool has actions, grouped where no arguments pair, camel on one-word
// names) is left out, so every interface listed is a distinct tool list.
// A composition (atomic) is left out too: it changes what a call does, and
// the gold with it, not how a model reads the tools.
func Catalogue(server string, levels map[level.Level][]Tool) ([]*Interface, error) {
	var out []*Interface
	for _, lv := range level.Levels {
		tools, ok := levels[lv]
		if !ok {
			continue
		}
		plain, err := Build(Spec{Name: string(lv), Level: lv}, server, tools)
		if err != nil {
			return nil, err
		}
		out = append(out, plain)
		seen := []*Interface{plain}
		for _, p := range Presets {
			spec := Spec{Name: string(lv) + "-" + p.Name, Level: lv, Transforms: p.Transforms}
			if len(spec.Check()) > 0 || p.Transforms.Composition != "" {
				// A preset the level cannot take (nested at L4), or a
				// composition: it changes what a call does and the gold
				// with it, a dimension a config names on its own.
				continue
			}
			iface, err := Build(spec, server, tools)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", server, err)
			}
			if sameTools(iface, seen) {
				continue
			}
			seen = append(seen, iface)
			out = append(out, iface)
		}
	}
	return out, nil
}

// sameTools reports whether iface lists what one of seen lists.
func sameTools(iface *Interface, seen []*Interface) bool {
	for _, s := range seen {
		if len(s.Tools) != len(iface.Tools) {
			continue
		}
		same := true
		for k, t := range s.Tools {
			u := iface.Tools[k]
			if t.Name != u.Name || t.Description != u.Description || !bytes.Equal(t.InputSchema, u.InputSchema) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}
