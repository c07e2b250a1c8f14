package surface

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// namesTransform: as-written, camel (setDevice), verb-first
// (set_device), noun-first (device_set), prefixed (the server's name
// first) or opaque (tool_1, tool_2, … in the level's order, a control).
var namesTransform = newTransform("names", "tool names",
	func(t *Transforms) *string { return &t.Names },
	option{value: "as-written"},
	option{value: "camel", rename: func(_ string, _ int, name string) string { return camel(splitWords(name)) }},
	option{value: "verb-first", rename: func(_ string, _ int, name string) string { return reorder(name, true) }},
	option{value: "noun-first", rename: func(_ string, _ int, name string) string { return reorder(name, false) }},
	option{value: "prefixed", rename: prefixed},
	option{value: "opaque", rename: func(_ string, i int, _ string) string { return fmt.Sprintf("tool_%d", i+1) }},
)

// verbs are the words a tool name starts (or ends) with when it names an
// operation: verb-first and noun-first move the first of a name's words
// found here.
var verbs = map[string]bool{}

func init() {
	for _, v := range strings.Fields(`get list read set create add update delete remove manage run start stop
		query control search find compute analyze analyse schedule cancel assign move dispatch acknowledge ack
		record log apply send write edit open close lock unlock enable disable check count compare plan optimize
		optimise report reset configure register book release reserve sample measure calibrate inspect approve
		reject flag tag upload download fetch post put patch trigger toggle switch adjust change estimate forecast
		simulate predict scan execute invoke call restart pause resume transfer order return issue mark clear
		summarize summarise describe show view browse navigate`) {
		verbs[v] = true
	}
}

// validName is what MCP clients accept as a tool name.
var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// toolNames names the interface's tools, one per level tool, in order,
// as the names value how does.
func toolNames(how, server string, tools []Tool) ([]string, error) {
	rename := namesTransform.option(Transforms{Names: how}).rename
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
		if rename != nil {
			out[i] = rename(server, i, t.Name)
		}
	}
	for i, n := range out {
		if !validName.MatchString(n) {
			return nil, fmt.Errorf("names: %s makes tool %s %q, which is not a valid MCP tool name (1 to 64 letters, digits, _ . -)", how, tools[i].Name, n)
		}
		if j := slices.Index(out, n); j < i {
			return nil, fmt.Errorf("names: %s gives tools %s and %s the one name %q; expected distinct names (choose another names transform)", how, tools[j].Name, tools[i].Name, n)
		}
	}
	return out, nil
}

// splitWords splits snake_case, kebab-case, dotted and camelCase names
// into lower-case words.
func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = nil
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

func camel(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i == 0 {
			b.WriteString(w)
			continue
		}
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// reorder puts a name's verb first (or last), joined the way the name
// joins its words; a name without a verb is kept.
func reorder(name string, verbFirst bool) string {
	words := splitWords(name)
	at := slices.IndexFunc(words, func(w string) bool { return verbs[w] })
	if at < 0 || len(words) < 2 {
		return name
	}
	verb := words[at]
	rest := slices.Delete(slices.Clone(words), at, at+1)
	if verbFirst {
		words = append([]string{verb}, rest...)
	} else {
		words = append(rest, verb)
	}
	switch {
	case strings.Contains(name, "_"):
		return strings.Join(words, "_")
	case strings.Contains(name, "-"):
		return strings.Join(words, "-")
	case strings.Contains(name, "."):
		return strings.Join(words, ".")
	}
	return camel(words)
}

// prefixed puts the server's name first, unless the tool's name already
// starts with it.
func prefixed(server string, _ int, name string) string {
	p := prefixWord(server)
	if p != "" && name != p && !strings.HasPrefix(name, p+"_") {
		return p + "_" + name
	}
	return name
}

// prefixWord is a server's name as a tool name prefix: snake_case, with
// what is not a letter or digit dropped.
func prefixWord(server string) string {
	return strings.Join(splitWords(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return ' '
	}, server)), "_")
}
