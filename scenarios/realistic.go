package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
)

// valueGen derives argument values a real user would send from a schema
// and the words around it: default, examples, const, enum, format,
// pattern, ranges and multipleOf, minItems and minLength, the property's
// name and numbers its description states. variant picks among several
// realistic values, so that artifacts of one tool differ; plain turns the
// words off and gives the smallest valid value, a fallback for schemas
// the realistic value does not satisfy.
type valueGen struct {
	doc     schemaDoc
	variant int
	all     bool // optional properties too
	plain   bool
}

// valid is the plain, smallest valid value (mock outputs, fallbacks).
func (d schemaDoc) valid(s map[string]any, all bool, depth int) any {
	return valueGen{doc: d, all: all, plain: true}.value(s, "", depth)
}

func (g valueGen) value(s map[string]any, name string, depth int) any {
	s = g.doc.resolve(s)
	if depth > 8 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	desc, _ := s["description"].(string)
	if d, ok := s["default"]; ok && !g.plain && (g.variant%3 == 0 || !varies(s)) {
		return d
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && !g.plain {
		return ex[g.variant%len(ex)]
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		if g.plain {
			return e[0]
		}
		return e[g.variant%len(e)]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && !isNull(g.doc.resolve(m)) {
					merged := map[string]any{}
					if desc != "" {
						merged["description"] = desc
					}
					mergeSchema(merged, g.doc.resolve(m))
					return g.value(merged, name, depth+1)
				}
			}
		}
	}
	if parts, ok := s["allOf"].([]any); ok && len(parts) > 0 {
		merged := map[string]any{}
		for k, v := range s {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, p := range parts {
			if m, ok := p.(map[string]any); ok {
				mergeSchema(merged, g.doc.resolve(m))
			}
		}
		return g.value(merged, name, depth+1)
	}
	ts := types(s)
	t := "string"
	if len(ts) > 0 {
		t = ts[0]
		if t == "null" && len(ts) > 1 {
			t = ts[1]
		}
	}
	switch t {
	case "object":
		return g.object(s, depth)
	case "array":
		return g.array(s, name, depth)
	case "integer", "number":
		return g.number(s, name, desc, t == "integer")
	case "boolean":
		if g.plain {
			return true
		}
		// A flag that warns of danger stays off; others are exercised.
		return !dangerous(name, desc)
	case "null":
		return nil
	}
	return g.str(s, name, desc)
}

// varies reports whether a schema with a default has other values worth
// trying (an enum, a range), so that some artifacts leave the default.
func varies(s map[string]any) bool {
	_, e := s["enum"]
	_, lo := s["minimum"]
	_, hi := s["maximum"]
	return e || (lo && hi)
}

func (g valueGen) object(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	for _, r := range asList(s["required"]) {
		req[r] = true
	}
	for _, name := range sortedKeys(props) {
		m, ok := props[name].(map[string]any)
		if !ok || (!req[name] && !(g.all && depth < 3)) {
			continue
		}
		if !req[name] && !g.plain {
			ps := g.doc.resolve(m)
			if d, _ := ps["description"].(string); slicesHas(types(ps), "boolean") && dangerous(name, d) {
				continue // an optional dangerous flag is left out, off by default
			}
		}
		out[name] = g.value(m, name, depth+1)
	}
	// A required property the schema does not declare takes any value.
	for _, r := range asList(s["required"]) {
		if _, ok := out[r]; !ok {
			out[r] = g.str(map[string]any{}, r, "")
		}
	}
	// patternProperties with minProperties: add keys matching a pattern.
	minProps, _ := num(s["minProperties"])
	pp, _ := s["patternProperties"].(map[string]any)
	for i := 0; len(out) < int(minProps) && i < 16; i++ {
		added := false
		for _, p := range sortedKeys(pp) {
			key, err := fromPatternVar(p, g.variant+i)
			if err != nil || key == "" {
				continue
			}
			if _, dup := out[key]; dup {
				continue
			}
			ps, _ := pp[p].(map[string]any)
			out[key] = g.value(ps, key, depth+1)
			added = true
			break
		}
		if !added && s["additionalProperties"] != false {
			out[fmt.Sprintf("key_%d", len(out)+1)] = g.str(map[string]any{}, "value", "")
		}
	}
	return out
}

func (g valueGen) array(s map[string]any, name string, depth int) []any {
	out := []any{}
	if pre, ok := s["prefixItems"].([]any); ok {
		for i, p := range pre {
			ps, _ := p.(map[string]any)
			out = append(out, valueGen{g.doc, g.variant + i, g.all, g.plain}.value(ps, name, depth+1))
		}
	}
	n := 0
	if m, ok := num(s["minItems"]); ok {
		n = int(m)
	}
	// An array the call needs has something in it: an empty list of
	// entities creates nothing.
	if n < 1 && !g.plain {
		n = 1
	}
	if m, ok := num(s["maxItems"]); ok && n > int(m) {
		n = int(m)
	}
	items, _ := s["items"].(map[string]any)
	if items == nil && len(out) > 0 {
		return out
	}
	unique := s["uniqueItems"] == true
	for tries := 0; len(out) < n && tries < 4*n+8; tries++ {
		// Unique items need distinct values, which only the realistic
		// generator varies.
		v := valueGen{g.doc, g.variant + tries, g.all, g.plain && !unique}.value(items, singular(name), depth+1)
		if unique && containsValue(out, v) {
			continue
		}
		out = append(out, v)
	}
	return out
}

func containsValue(list []any, v any) bool {
	key := fmt.Sprintf("%#v", v)
	for _, x := range list {
		if fmt.Sprintf("%#v", x) == key {
			return true
		}
	}
	return false
}

// singular names an array's element: "names" -> "name", "entities" ->
// "entity".
func singular(name string) string {
	switch {
	case strings.HasSuffix(name, "ies"):
		return strings.TrimSuffix(name, "ies") + "y"
	case strings.HasSuffix(name, "ses"), strings.HasSuffix(name, "xes"):
		return strings.TrimSuffix(name, "es")
	case strings.HasSuffix(name, "s") && !strings.HasSuffix(name, "ss"):
		return strings.TrimSuffix(name, "s")
	}
	return name
}

// bounds reads a numeric schema's range as lo <= x <= hi, turning
// exclusive bounds (numbers, or draft-04 booleans) into inclusive ones.
func bounds(s map[string]any, integer bool) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	step := 1e-3
	if integer {
		step = 1
	}
	if m, ok := num(s["minimum"]); ok {
		lo = m
		if s["exclusiveMinimum"] == true {
			lo += step
		}
	}
	if m, ok := num(s["maximum"]); ok {
		hi = m
		if s["exclusiveMaximum"] == true {
			hi -= step
		}
	}
	if m, ok := num(s["exclusiveMinimum"]); ok {
		lo = math.Max(lo, m+step)
		if integer {
			lo = math.Max(lo, math.Floor(m)+1)
		}
	}
	if m, ok := num(s["exclusiveMaximum"]); ok {
		hi = math.Min(hi, m-step)
		if integer {
			hi = math.Min(hi, math.Ceil(m)-1)
		}
	}
	if integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)
	}
	return lo, hi
}

var (
	descDefault = regexp.MustCompile(`(?i)default(?:s)?(?:\s+(?:is|of|to|value))?\s*[:=]?\s*(-?\d+(?:\.\d+)?)`)
	descRange   = regexp.MustCompile(`(?i)(?:\(|between\s+|from\s+|range\s+)(-?\d+(?:\.\d+)?)\s*(?:-|–|to|and|\.\.)\s*(-?\d+(?:\.\d+)?)`)
	descMax     = regexp.MustCompile(`(?i)(?:max(?:imum)?|at most|up to)\s*(?:of\s*)?(\d+)`)
)

// number picks a number in range: the default the description states,
// else one the property's name suggests, else the low end of the stated
// range; rounded to multipleOf and to an integer when asked.
func (g valueGen) number(s map[string]any, name, desc string, integer bool) float64 {
	lo, hi := bounds(s, integer)
	if !g.plain {
		if m := descRange.FindStringSubmatch(desc); m != nil {
			a, _ := strconv.ParseFloat(m[1], 64)
			b, _ := strconv.ParseFloat(m[2], 64)
			if a < b {
				lo, hi = math.Max(lo, a), math.Min(hi, b)
			}
		}
		if m := descMax.FindStringSubmatch(desc); m != nil {
			b, _ := strconv.ParseFloat(m[1], 64)
			hi = math.Min(hi, b)
		}
	}
	x := 0.0
	switch {
	case g.plain:
	case descDefault.MatchString(desc) && g.variant%3 == 0:
		x, _ = strconv.ParseFloat(descDefault.FindStringSubmatch(desc)[1], 64)
	default:
		x = byName(name, g.variant)
		if !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && g.variant > 0 {
			// Another artifact, another value in range.
			x = lo + math.Mod(float64(g.variant)*0.37*(hi-lo), hi-lo+1)
		}
	}
	x = math.Min(math.Max(x, lo), hi)
	if m, ok := num(s["multipleOf"]); ok && m > 0 {
		k := math.Ceil(x/m - 1e-9)
		if k*m > hi {
			k = math.Floor(hi / m)
		}
		x = k * m
		// Keep the product exact in decimal (0.1 * 3 is not 0.3).
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'f', 10, 64), 64)
	}
	if integer {
		x = math.Round(x)
	} else if !g.plain {
		x = math.Round(x*100) / 100
	}
	return x
}

// byName is a number the property's name suggests.
func byName(name string, variant int) float64 {
	n := strings.ToLower(name)
	pick := func(xs ...float64) float64 { return xs[variant%len(xs)] }
	switch {
	case has(n, "page_size", "pagesize", "per_page", "perpage", "limit", "count", "max_results", "maxresults", "top_k", "topk", "num", "size"):
		return pick(10, 5, 20)
	case n == "page":
		return pick(1, 2)
	case has(n, "offset", "skip", "start"):
		return pick(0, 10)
	case has(n, "port"):
		return pick(8080, 443)
	case has(n, "timeout", "seconds", "delay", "wait"):
		return pick(30, 10)
	case has(n, "year"):
		return pick(2026, 2025)
	case has(n, "lat"):
		return pick(48.8566, 45.764)
	case has(n, "lon", "lng"):
		return pick(2.3522, 4.8357)
	case has(n, "temperature", "temp"):
		return pick(21.5, 19)
	case has(n, "radius", "distance"):
		return pick(1000, 500)
	case has(n, "width"):
		return pick(1280, 800)
	case has(n, "height"):
		return pick(720, 600)
	case has(n, "number", "issue", "pull", "id"):
		return pick(42, 7, 101)
	case has(n, "line", "head", "tail"):
		return pick(20, 10)
	case has(n, "quantity", "amount", "thought"):
		return pick(2, 3, 1)
	case has(n, "depth", "level"):
		return pick(2, 1)
	}
	return pick(3, 5, 12)
}

func has(n string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func slicesHas(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

var danger = regexp.MustCompile(`(?i)danger|unsafe|insecure|\bforce|overwrite|destroy|destructive|wipe|purge|\bdrop|delete|recursive|irreversib|permanent|bypass|skip[_ ]?(verif|check|valid)|no[_ ]?verify|disable|allow[_ ]?all|sudo|as[_ ]?root`)

// dangerous reports whether a flag's name or description warns of danger.
func dangerous(name, desc string) bool {
	return danger.MatchString(name) || danger.MatchString(desc)
}

// formatValues are realistic values per JSON Schema format, varied.
var formatValues = map[string][]string{
	"date-time":     {"2026-03-14T09:30:00Z", "2026-05-02T16:45:00+02:00", "2025-11-20T07:05:00Z"},
	"date":          {"2026-03-14", "2026-05-02", "2025-11-20"},
	"time":          {"09:30:00Z", "16:45:00+02:00"},
	"email":         {"alice.martin@example.com", "ops-team@example.org", "bob@example.net"},
	"idn-email":     {"alice.martin@example.com"},
	"uri":           {"https://example.com/docs/getting-started", "https://example.org/blog/2026/release-notes", "https://api.example.net/v1/status"},
	"url":           {"https://example.com/docs/getting-started", "https://example.org/blog/2026/release-notes"},
	"uri-reference": {"/docs/getting-started", "https://example.org/blog"},
	"iri":           {"https://example.com/docs/getting-started"},
	"uuid":          {"3f2b8c1e-9a4d-4e7b-8c21-5d6f7a8b9c0d", "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"},
	"ipv4":          {"192.168.1.20", "10.0.0.15", "203.0.113.7"},
	"ipv6":          {"2001:db8::1", "fe80::1ff:fe23:4567:890a"},
	"hostname":      {"api.example.com", "db-01.internal.example.org", "mail.example.net"},
	"idn-hostname":  {"api.example.com"},
	"duration":      {"PT15M", "P1D"},
	"regex":         {"^error.*", "[0-9]+"},
	"json-pointer":  {"/items/0/name"},
}

// namePools are realistic strings by what a property's name says it holds,
// checked in order; the first group whose words the name contains wins.
var namePools = []struct {
	words  []string
	values []string
}{
	{[]string{"source", "src", "from_path", "old_path"}, []string{"/home/user/projects/notes.md", "/home/user/projects/draft-report.txt"}},
	{[]string{"destination", "dest", "target", "to_path", "new_path"}, []string{"/home/user/projects/archive/notes.md", "/home/user/projects/final-report.txt"}},
	{[]string{"path", "file", "dir", "folder"}, []string{"/home/user/projects/notes.md", "/home/user/projects/report.txt", "/home/user/projects/src/main.go"}},
	{[]string{"url", "uri", "link", "href", "endpoint", "website"}, []string{"https://example.com/docs/getting-started", "https://example.org/blog/2026/release-notes", "https://news.example.net/today"}},
	{[]string{"email", "mail"}, []string{"alice.martin@example.com", "ops-team@example.org"}},
	{[]string{"sql", "statement"}, []string{"SELECT id, name FROM users ORDER BY id LIMIT 10", "SELECT status, count(*) FROM orders GROUP BY status"}},
	{[]string{"query", "search", "keyword", "term", "q"}, []string{"energy usage last week", "coffee shops near Lyon", "open issues labelled bug"}},
	{[]string{"channel"}, []string{"C0123ABCD", "C07QX9Z2K"}},
	{[]string{"owner", "org", "organization", "login", "username", "user", "author", "assignee"}, []string{"octocat", "alice-dev", "acme-corp"}},
	{[]string{"repo", "repository", "project"}, []string{"hello-world", "granite", "weather-station"}},
	{[]string{"branch", "ref"}, []string{"main", "feature/login-timeout"}},
	{[]string{"sha", "commit"}, []string{"9fceb02d0ae598e95dc970b74767f19372d61af8"}},
	{[]string{"timezone", "tz"}, []string{"Europe/Paris", "America/New_York"}},
	{[]string{"locale", "lang", "language"}, []string{"en", "fr"}},
	{[]string{"country"}, []string{"FR", "US"}},
	{[]string{"city"}, []string{"Lyon", "Berlin"}},
	{[]string{"address", "location", "origin", "place"}, []string{"10 Rue de la Paix, Paris", "Alexanderplatz 1, Berlin"}},
	{[]string{"phone"}, []string{"+33 1 23 45 67 89"}},
	{[]string{"color", "colour"}, []string{"#3366ff", "#ff8800"}},
	{[]string{"selector"}, []string{"#submit", "button.primary"}},
	{[]string{"script", "expression", "code"}, []string{"document.title", "window.location.href"}},
	{[]string{"entitytype", "entity_type", "type", "kind", "category"}, []string{"person", "organization", "project"}},
	{[]string{"relation"}, []string{"works_at", "manages"}},
	{[]string{"observation"}, []string{"Speaks French", "Prefers morning meetings"}},
	{[]string{"thought", "reason"}, []string{"First list what is known, then check the missing step."}},
	{[]string{"title", "subject", "summary"}, []string{"Fix login timeout on mobile", "Quarterly energy report", "Plan the spring release"}},
	{[]string{"content", "text", "body", "message", "comment", "note", "description", "instructions"}, []string{"Meeting notes: ship the beta on Friday and review the open bugs.", "The sensor in room 2 reads 3 degrees too high since Monday.", "Please review the draft before noon."}},
	{[]string{"name", "label", "entity", "from", "to"}, []string{"Alice Martin", "Acme Corp", "Project Falcon"}},
	{[]string{"tag"}, []string{"release", "urgent"}},
	{[]string{"status", "state"}, []string{"open", "closed"}},
	{[]string{"id", "key", "token"}, []string{"id-1001", "id-2047", "id-3310"}},
}

// str builds a string: a format's value, a name's realistic value when
// the pattern (if any) accepts it, else a string generated from the
// pattern; padded to minLength and cut to maxLength.
func (g valueGen) str(s map[string]any, name, desc string) string {
	pattern, _ := s["pattern"].(string)
	var cands []string
	if f, ok := s["format"].(string); ok && len(formatValues[f]) > 0 {
		vs := formatValues[f]
		cands = append(cands, vs[g.variant%len(vs)], vs[0])
	}
	if !g.plain && len(cands) == 0 {
		if v := fromName(name, g.variant); v != "" {
			cands = append(cands, v)
		}
	}
	if pattern != "" {
		for _, c := range cands {
			if matches(pattern, c) {
				return fitLength(s, c)
			}
		}
		v := g.variant
		if g.plain {
			v = 0
		}
		if out, err := fromPatternVar(pattern, v); err == nil {
			return fitLength(s, out)
		}
	}
	if len(cands) > 0 {
		return fitLength(s, cands[0])
	}
	if g.plain {
		return fitLength(s, "example")
	}
	return fitLength(s, "sample "+strings.ReplaceAll(strings.ToLower(name), "_", " "))
}

// fromName is a realistic value for a property's name ("" when the name
// says nothing).
func fromName(name string, variant int) string {
	n := strings.ToLower(name)
	words := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for _, p := range namePools {
		for _, w := range p.words {
			if len(w) <= 2 || w == "to" || w == "from" || w == "ref" || w == "id" || w == "key" || w == "tag" {
				// Short words match whole words only ("q" is not in
				// "unique", "id" not in "width").
				if slicesHas(words, w) || (w == "id" && strings.HasSuffix(n, "id")) {
					return p.values[variant%len(p.values)]
				}
				continue
			}
			if strings.Contains(n, w) {
				return p.values[variant%len(p.values)]
			}
		}
	}
	return ""
}

func fitLength(s map[string]any, out string) string {
	if m, ok := num(s["minLength"]); ok {
		for len([]rune(out)) < int(m) {
			out += "x"
		}
	}
	if m, ok := num(s["maxLength"]); ok && len([]rune(out)) > int(m) {
		out = string([]rune(out)[:int(m)])
	}
	return out
}

var patterns sync.Map // pattern -> *regexp.Regexp or nil

// matches reports whether s matches a schema pattern, with Go's regexp
// package, which is the engine jsonschema/v6 validates patterns with.
func matches(pattern, s string) bool {
	v, ok := patterns.Load(pattern)
	if !ok {
		re, err := regexp.Compile(pattern)
		if err != nil {
			re = nil
		}
		v, _ = patterns.LoadOrStore(pattern, re)
	}
	re, _ := v.(*regexp.Regexp)
	return re != nil && re.MatchString(s)
}

// fromPattern returns a short string matching a regular expression.
func fromPattern(p string) (string, error) { return fromPatternVar(p, 0) }

// fromPatternVar returns a string matching a regular expression, by
// walking its syntax tree; variant picks among alternatives, class
// members and repeat counts, so different artifacts get different
// strings.
func fromPatternVar(p string, variant int) (string, error) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	step := 0
	next := func() int { step++; return variant + step }
	var walk func(*syntax.Regexp) error
	walk = func(r *syntax.Regexp) error {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) == 0 {
				return fmt.Errorf("empty class")
			}
			b.WriteRune(classMember(r.Rune, variant+step))
			step++
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte("abcxyz"[next()%6])
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpConcat:
			for _, s := range r.Sub {
				if err := walk(s); err != nil {
					return err
				}
			}
		case syntax.OpAlternate:
			return walk(r.Sub[variant%len(r.Sub)])
		case syntax.OpPlus, syntax.OpStar:
			n := 1 + variant%3
			if r.Op == syntax.OpStar && variant == 0 {
				n = 1
			}
			for range n {
				if err := walk(r.Sub[0]); err != nil {
					return err
				}
			}
		case syntax.OpQuest:
			if variant%2 == 1 {
				return walk(r.Sub[0])
			}
		case syntax.OpRepeat:
			n := r.Min
			if r.Max > r.Min || r.Max < 0 {
				n += variant % 2
			}
			for range max(n, 0) {
				if err := walk(r.Sub[0]); err != nil {
					return err
				}
			}
		case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
			syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return fmt.Errorf("unsupported %v", r.Op)
		}
		return nil
	}
	if err := walk(re); err != nil {
		return "", err
	}
	out := b.String()
	if !matches(p, out) {
		// A construct the walk cannot honour (a boundary between two word
		// characters); the first choices everywhere are the safer bet.
		if variant != 0 {
			return fromPatternVar(p, 0)
		}
		return "", fmt.Errorf("could not build a string matching %s", p)
	}
	return out, nil
}

// classMember picks a readable member of a character class (pairs of
// rune ranges): letters and digits first.
func classMember(ranges []rune, variant int) rune {
	var nice []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && len(nice) < 64; r++ {
			if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
				nice = append(nice, r)
			}
		}
	}
	if len(nice) > 0 {
		return nice[(variant*7)%len(nice)]
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] >= 0x21 && ranges[i] < 0x7f {
			return ranges[i]
		}
	}
	return ranges[0]
}
