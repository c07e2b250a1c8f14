package score

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/internal/speclang"
)

// Every answer fact is about something: a field of a row ("SS003's
// battery is 12"), a group of a statistic ("the north zone averages
// 26.7"), a row itself as a member of the set the prompt asks for ("the
// probes with a low battery are SS003 and SS007"), or a number of rows
// ("7 valves are open"). The subject is derived from the gold's reads:
// the read whose output carries the value says which row and field, or
// which group, it came from. Where several do, the fact's own words
// (what) choose among them, and a scenario writes about where they cannot.

// subjectKind says what kind of thing a fact is about.
type subjectKind int

const (
	aboutTotal  subjectKind = iota // a statistic over everything: no row or group to name
	aboutRow                       // a field of one row
	aboutGroup                     // a group of a statistic
	aboutMember                    // the row (or group key) itself, a member of a set
	aboutCount                     // a number of rows
)

// subject is one thing a fact may be about.
type subject struct {
	kind subjectKind
	// key names the row ("soil_sensor/SS003") or the group ("zone=north");
	// class is what rows or groups it is one of ("soil_sensor", "zone=").
	key, class string
	// field is the quantity: the row's field or the statistic's field.
	field string
}

// String says the subject in words, for explanations.
func (s subject) String() string {
	switch s.kind {
	case aboutRow:
		return strings.ReplaceAll(s.key, "/", " ") + " " + s.field
	case aboutGroup:
		return "group " + s.key + " " + s.field
	case aboutMember:
		return strings.ReplaceAll(s.key, "/", " ") + " (a member of the set)"
	case aboutCount:
		return "the number of " + s.class + " rows"
	}
	return "the total " + s.field
}

// rowKeyOf names a row as a subject key.
func rowKeyOf(entity, id string) string { return entity + "/" + id }

// groupKeyOf names a statistic's group as a subject key.
func groupKeyOf(groupBy, key string) string { return groupBy + "=" + words(key) }

// candidates lists every subject a gold read reports the fact's value
// for.
func (fg *factGold) candidates(f *speclang.Fact, reads []GoldRead) []subject {
	var out []subject
	add := func(s subject) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range reads {
		fg.walk(f, r.Output, "", add)
	}
	return out
}

// walk finds the fact's value in one decoded output; row is the subject
// key of the row the value sits in, if any.
func (fg *factGold) walk(f *speclang.Fact, v any, row string, add func(subject)) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok {
			if key, known := fg.labels.ids[strings.ToLower(id)]; known {
				row = key
				if factIs(f, id) || fg.namesRow(f, key) {
					add(subject{kind: aboutMember, key: key, class: classOf(key)})
				}
			}
		}
		groupBy, _ := x["group_by"].(string)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			val := x[k]
			switch {
			case k == "groups" && groupBy != "":
				fg.walkGroups(f, x, groupBy, add)
				continue
			case k == "id":
				continue
			case (k == "count" || k == "total") && row == "" && isEntity(x["entity"]):
				if factEquals(f, val) {
					add(subject{kind: aboutCount, class: x["entity"].(string)})
				}
				continue
			case k == "value" && row == "" && x["function"] != nil:
				if factEquals(f, val) {
					field, _ := x["field"].(string)
					add(subject{kind: aboutTotal, field: field})
				}
				continue
			}
			if isScalar(val) {
				if row != "" && factEquals(f, val) {
					add(subject{kind: aboutRow, key: row, class: classOf(row), field: k})
				}
				continue
			}
			fg.walk(f, val, row, add)
		}
	case []any:
		for _, e := range x {
			fg.walk(f, e, row, add)
		}
	case string:
		if row == "" && Stated(x, f) {
			add(subject{kind: aboutTotal})
		}
	}
}

// walkGroups finds the fact's value in a statistic's groups.
func (fg *factGold) walkGroups(f *speclang.Fact, stat map[string]any, groupBy string, add func(subject)) {
	groups, _ := stat["groups"].([]any)
	field, _ := stat["field"].(string)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		key := fmt.Sprint(gm["key"])
		gk := fg.labels.groupKey(groupBy, key)
		if factIs(f, key) {
			add(subject{kind: aboutMember, key: gk, class: classOf(gk)})
		}
		if factEquals(f, gm["value"]) {
			add(subject{kind: aboutGroup, key: gk, class: classOf(gk), field: field})
		}
		if factEquals(f, gm["count"]) {
			add(subject{kind: aboutGroup, key: gk, class: classOf(gk), field: "count"})
		}
	}
}

func isEntity(v any) bool { s, ok := v.(string); return ok && s != "" }

// classOf is what rows or groups a subject key is one of.
func classOf(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	if i := strings.IndexByte(key, '='); i >= 0 {
		return key[:i+1]
	}
	return key
}

// namesRow reports whether a string fact's value is the display name of
// the row key.
func (fg *factGold) namesRow(f *speclang.Fact, key string) bool {
	for _, form := range f.Forms() {
		s, ok := form.(string)
		if ok && slices.Contains(fg.labels.names[key], words(s)) {
			return true
		}
	}
	return false
}

// factEquals reports whether an output value is the fact's value in one of
// its forms: numbers at the fact's precision, strings as whole words in it
// (the 22:10 of a timestamp, the CO2 of a message).
func factEquals(f *speclang.Fact, v any) bool {
	for _, form := range f.Forms() {
		switch w := form.(type) {
		case string:
			if s, ok := v.(string); ok && statesValue(s, w) {
				return true
			}
		default:
			want, ok1 := number(w)
			got, ok2 := number(v)
			if ok1 && ok2 && sameNumber(want, decimals(formatNumber(want)), got, decimals(formatNumber(got))) {
				return true
			}
		}
	}
	return false
}

// factIs reports whether a string is the fact's value in one of its
// forms, whole.
func factIs(f *speclang.Fact, v string) bool {
	for _, form := range f.Forms() {
		if s, ok := form.(string); ok && words(s) == words(v) && words(v) != "" {
			return true
		}
	}
	return false
}

func formatNumber(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// choose narrows the candidates to the fact's subjects: those the scenario
// names (about), else those the fact's own words name, else all of one
// row; it says why when the gold's reads cannot tell.
func (fg *factGold) choose(f *speclang.Fact, cands []subject) ([]subject, string) {
	if len(cands) == 0 {
		return nil, "no gold read reports it"
	}
	if a := f.About; a != nil {
		kept := slices.DeleteFunc(slices.Clone(cands), func(s subject) bool { return !matchesAbout(s, a) })
		if len(kept) == 0 {
			return nil, fmt.Sprintf("no gold read reports it as %s (it reports it as %s)", aboutWords(a), subjectList(cands))
		}
		return kept, ""
	}
	// A value that is a row's ID or name, or a statistic's group key, is
	// that row or group as a member of the set the prompt asks for, not
	// the reference other rows make to it.
	if members := slices.DeleteFunc(slices.Clone(cands), func(s subject) bool { return s.kind != aboutMember }); len(members) > 0 {
		return members, ""
	}
	// An enum value several rows hold ("lab", the building with the most
	// energy) is a member of that field's values.
	if m, ok := fg.enumMember(f, cands); ok {
		return []subject{m}, ""
	}
	// Counts are counts when the fact says so, or when nothing else
	// carries the value.
	counting := countWords(f.What) != nil
	if !counting && !slices.ContainsFunc(cands, func(s subject) bool { return s.kind != aboutCount }) {
		counting = true
	}
	// Members are gone; what is left are rows, groups, counts and totals.
	var named, rows, groups []subject
	mentioned := fg.labels.keysIn(f.What)
	for _, s := range cands {
		switch {
		case s.kind == aboutCount && counting:
			return []subject{s}, ""
		case s.kind == aboutCount, s.kind == aboutTotal:
			continue
		}
		if mentioned[s.key] {
			named = append(named, s)
		}
		if s.kind == aboutRow {
			rows = append(rows, s)
		} else {
			groups = append(groups, s)
		}
	}
	switch {
	case len(named) > 0:
		// The fact's words name the row; a group the same read grouped
		// the value by is as right a subject ("the west zone, 17.3 °C").
		for _, g := range groups {
			if !slices.Contains(named, g) {
				named = append(named, g)
			}
		}
		return named, ""
	case len(rows) == 0 && len(groups) == 0:
		if counting {
			return nil, "no gold read counts it"
		}
		// A statistic over everything names no row: it is stated
		// anywhere.
		for _, s := range cands {
			if s.kind == aboutTotal {
				return []subject{s}, ""
			}
		}
		return nil, "no gold read reports it as a row's, a group's or a total's value"
	}
	keys := map[string]bool{}
	for _, s := range rows {
		keys[s.key] = true
	}
	if len(keys) > 1 {
		if picked := fg.byField(f, rows); len(picked) > 0 {
			return append(picked, groups...), ""
		}
		return nil, fmt.Sprintf("the gold's reads report it for several rows (%s) and its words name none of them; write about: {id: …, field: …} to say which", subjectList(rows))
	}
	return append(rows, groups...), ""
}

// enumMember reads a string value that rows hold in one enum field as a
// member of that field's values.
func (fg *factGold) enumMember(f *speclang.Fact, cands []subject) (subject, bool) {
	v, ok := f.Value.(string)
	if !ok || len(cands) == 0 {
		return subject{}, false
	}
	field := ""
	for _, c := range cands {
		if c.kind != aboutRow || field != "" && c.field != field || !fg.enums[c.class+"."+c.field] {
			return subject{}, false
		}
		field = c.field
	}
	key := groupKeyOf(field, v)
	fg.labels.add(words(v), key)
	fg.labels.display[key] = v
	for _, a := range f.Alternatives {
		if s, ok := a.(string); ok {
			fg.labels.add(words(s), key)
		}
	}
	return subject{kind: aboutMember, key: key, class: field + "="}, true
}

// byField keeps the row candidates whose field the fact's words name, when
// they are the rows of one row.
func (fg *factGold) byField(f *speclang.Fact, rows []subject) []subject {
	what := " " + words(f.What) + " "
	var out []subject
	keys := map[string]bool{}
	for _, s := range rows {
		for _, cue := range cueWords(s.field) {
			if strings.Contains(what, " "+cue) {
				out, keys[s.key] = append(out, s), true
				break
			}
		}
	}
	if len(keys) != 1 {
		return nil
	}
	return out
}

func matchesAbout(s subject, a *speclang.About) bool {
	switch {
	case a.Count != "":
		return s.kind == aboutCount && s.class == a.Count
	case a.Group != "":
		return s.kind == aboutGroup && strings.HasSuffix(s.key, "="+words(a.Group)) && (a.Field == "" || s.field == a.Field)
	case a.ID != "" && a.Field != "":
		return s.kind == aboutRow && s.key == rowKeyOf(a.Entity, a.ID) && s.field == a.Field
	case a.ID != "":
		return s.kind == aboutMember && s.key == rowKeyOf(a.Entity, a.ID)
	}
	return false
}

func aboutWords(a *speclang.About) string {
	var parts []string
	for _, kv := range [][2]string{{"id", a.ID}, {"field", a.Field}, {"group", a.Group}, {"count", a.Count}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+": "+kv[1])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func subjectList(ss []subject) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.String())
	}
	return strings.Join(out, ", ")
}

// cueWords are the words of a field's name that say its quantity, without
// the unit abbreviations names end in (moisture_pct: moisture).
func cueWords(field string) []string {
	var out []string
	for _, w := range strings.Split(field, "_") {
		if len(w) >= 3 && !unitAbbrev[w] {
			out = append(out, w)
		}
	}
	return out
}

var unitAbbrev = map[string]bool{"pct": true, "kmh": true, "kwh": true, "lpm": true, "bpm": true, "mmhg": true, "ppm": true, "min": true, "sec": true, "cm": true}

// countWords returns the words a count fact names what it counts with
// ("number of open valves after the changes": open, valves), or nil when
// the fact is no count.
func countWords(what string) []string {
	w := " " + words(what) + " "
	for _, lead := range []string{" number of ", " how many ", " count of ", " amount of "} {
		if i := strings.Index(w, lead); i >= 0 {
			var out []string
			for _, t := range strings.Fields(w[i+len(lead):]) {
				if stopWords[t] {
					break
				}
				out = append(out, t)
			}
			return out
		}
	}
	return nil
}

// stopWords end a counted noun phrase and make no label alone.
var stopWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "at": true, "to": true, "for": true,
	"after": true, "before": true, "with": true, "by": true, "from": true, "that": true, "which": true, "still": true, "now": true, "and": true,
	"or": true, "is": true, "are": true, "was": true, "were": true, "it": true, "its": true, "this": true, "there": true}

// keyedRows names a store's rows (indexed by collection and ID) by their
// subject keys.
func keyedRows(d *speclang.Domain, indexed map[string]map[string]map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	if d == nil {
		return out
	}
	for _, e := range d.Entities {
		for id, row := range indexed[e.Plural] {
			out[rowKeyOf(e.Name, id)] = row
		}
	}
	return out
}
