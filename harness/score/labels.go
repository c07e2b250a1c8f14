package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
)

// labelIndex knows every name of the rows and groups a scenario may talk
// about.
type labelIndex struct {
	// ids maps a lower-case ID to its row key.
	ids map[string]string
	// rows and groups index the phrases that name rows and groups by
	// their first word, longest first.
	rows, groups phraseIndex
	// names holds each key's full names (as words), and display its ID.
	names   map[string][]string
	display map[string]string
	// parts holds the phrases that name a row by a part of its name: a
	// group named the same ("perimeter", a zone) is the group.
	parts map[string]bool
}

// phraseIndex holds phrases by their first word, longest first.
type phraseIndex map[string][]phrase

// phrase is a run of words and the keys it names.
type phrase struct {
	words []string
	keys  []string
}

// add makes a phrase (as words) name a key.
func (pi phraseIndex) add(text, key string) {
	ws := strings.Fields(text)
	if len(ws) == 0 {
		return
	}
	list := pi[ws[0]]
	for i := range list {
		if slices.Equal(list[i].words, ws) {
			if !slices.Contains(list[i].keys, key) {
				list[i].keys = append(list[i].keys, key)
			}
			return
		}
	}
	list = append(list, phrase{ws, []string{key}})
	slices.SortStableFunc(list, func(a, b phrase) int { return len(b.words) - len(a.words) })
	pi[ws[0]] = list
}

// match returns the longest phrase starting at word i, if any.
func (pi phraseIndex) match(ws []wordTok, i int) (phrase, bool) {
	for _, p := range pi[ws[i].w] {
		if i+len(p.words) > len(ws) {
			continue
		}
		ok := true
		for k, w := range p.words[1:] {
			if ws[i+1+k].w != w {
				ok = false
				break
			}
		}
		if ok {
			return p, true
		}
	}
	return phrase{}, false
}

// displayField is the field that names an entity's rows for people: name
// or label (also by the parts of it no other row shares), else title
// (named whole: a title is composed like a sentence); "" when the entity
// has none, and its rows are named by ID alone.
func displayField(e *speclang.Entity) (field string, parts bool) {
	for _, want := range []string{"name", "label", "title"} {
		for _, f := range e.Fields {
			if f.Name == want && f.Type == speclang.TString {
				return f.Name, want != "title"
			}
		}
	}
	return "", false
}

// newLabelIndex indexes the IDs and names of every row of the seed and the
// right stores, and the keys of the groups of the gold's statistics.
func newLabelIndex(d *speclang.Domain, stores []map[string]map[string]any, reads []GoldRead) *labelIndex {
	li := &labelIndex{ids: map[string]string{}, rows: phraseIndex{}, groups: phraseIndex{}, names: map[string][]string{}, display: map[string]string{}, parts: map[string]bool{}}
	if d == nil {
		return li
	}
	type display struct {
		field string
		parts bool
	}
	fields := map[string]display{}
	for _, e := range d.Entities {
		f, p := displayField(e)
		fields[e.Name] = display{f, p}
	}
	names := map[string]map[string]string{} // entity → key → name, as words
	for _, rows := range stores {
		for key, row := range rows {
			entity := classOf(key)
			id := key[len(entity)+1:]
			li.ids[strings.ToLower(id)], li.display[key] = key, id
			if name, ok := row[fields[entity].field].(string); ok && words(name) != "" {
				if names[entity] == nil {
					names[entity] = map[string]string{}
				}
				names[entity][key] = strings.ToLower(name)
			}
		}
	}
	for _, entity := range slices.Sorted(maps.Keys(names)) {
		rows := names[entity]
		padded := map[string]string{}
		for key, name := range rows {
			padded[key] = " " + words(name) + " "
		}
		for _, key := range slices.Sorted(maps.Keys(rows)) {
			full := words(rows[key])
			li.names[key] = append(li.names[key], full)
			li.rows.add(full, key)
			if fields[entity].parts {
				for _, p := range uniqueParts(rows[key], key, padded) {
					li.rows.add(p, key)
					li.parts[p] = true
				}
			}
		}
	}
	for _, r := range reads {
		eachGroup(r.Output, func(groupBy string, g map[string]any) {
			k := fmt.Sprint(g["key"])
			if key := li.groupKey(groupBy, k); strings.Contains(key, "=") {
				li.add(words(k), key)
				li.display[key] = k
			}
		})
	}
	return li
}

// eachGroup calls fn with every group of every statistic in a decoded
// output.
func eachGroup(v any, fn func(groupBy string, g map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if groupBy, ok := x["group_by"].(string); ok {
			gs, _ := x["groups"].([]any)
			for _, g := range gs {
				if gm, ok := g.(map[string]any); ok {
					fn(groupBy, gm)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			eachGroup(x[k], fn)
		}
	case []any:
		for _, e := range x {
			eachGroup(e, fn)
		}
	}
}

// add makes a phrase name a key: a row's, or a group's (groups are named
// apart from rows: "lab" names the lab building inside "Lab building
// feeder", a meter's name).
func (li *labelIndex) add(phrase, key string) {
	if strings.Contains(key, "=") {
		li.groups.add(phrase, key)
	} else {
		li.rows.add(phrase, key)
	}
}

// groupKey names a statistic's group; a group keyed by a row's ID (a
// statistic grouped by field_id) is that row.
func (li *labelIndex) groupKey(groupBy, key string) string {
	if row, ok := li.ids[strings.ToLower(key)]; ok {
		return row
	}
	return groupKeyOf(groupBy, key)
}

// uniqueParts lists the runs of words of a row's name that no other row of
// its entity has in its name (padded: each name as words, between
// spaces): "A1 spindle vibration" names one sensor. Runs start and end
// where the name's own words do (the 4 of "B4" is no run); a run of one
// word must be five letters or more, and no run starts or ends with a stop
// word or is made of numbers and single letters alone.
func uniqueParts(name, key string, padded map[string]string) []string {
	ws := strings.Fields(name)
	var out []string
	for i := range ws {
		for j := i + 1; j <= len(ws) && j-i <= 6; j++ {
			run := ws[i:j]
			if i == 0 && j == len(ws) || stopWords[words(run[0])] || stopWords[words(run[len(run)-1])] {
				continue
			}
			p := words(strings.Join(run, " "))
			if len(run) == 1 && (len(p) < 5 || strings.ContainsAny(p, "0123456789 ")) || !slices.ContainsFunc(strings.Fields(p), func(w string) bool {
				return len(w) > 1 && !strings.ContainsAny(w, "0123456789")
			}) {
				continue
			}
			unique := true
			for other, name := range padded {
				if other != key && strings.Contains(name, " "+p+" ") {
					unique = false
					break
				}
			}
			if unique {
				out = append(out, p)
			}
		}
	}
	return out
}

// keysIn lists the keys a text names.
func (li *labelIndex) keysIn(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range li.scan(text).mentions {
		for _, k := range m.keys {
			out[k] = true
		}
	}
	return out
}

// say names a key for people: its ID or group key.
func (li *labelIndex) say(key string) string {
	if d, ok := li.display[key]; ok {
		if strings.Contains(key, "=") {
			return classOf(key)[:len(classOf(key))-1] + " " + d
		}
		return d
	}
	return key
}
