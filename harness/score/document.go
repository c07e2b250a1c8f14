package score

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An answer is read as a document: Markdown headings, lead lines (a line
// ending in a colon, or a bold line alone) and the list items, nested
// items and plain lines under them, table rows, and paragraphs of
// sentences. Each statement (a sentence, an item, a table row) is a unit,
// and its scope is the lines it sits under: a value in a unit that names
// no subject of its kind belongs to the subject its scope names (the lead
// line "CM006 (car park south) is offline:" and the bullets under it),
// else to the last one named before it in its paragraph or item ("it",
// "its", "she"), else, in an answer about one subject, to that subject.

// unit is one statement of an answer.
type unit struct {
	text string
	// scope is the text of the headings, lead line and parent items the
	// unit sits under, innermost last, joined by ": ".
	scope string
	// prev is the index of the unit before it in its paragraph or item,
	// or -1.
	prev int
	// list identifies the list of items the unit is an item of (0: it
	// is none): items of one list are presented alike.
	list int
}

var (
	headingLine = regexp.MustCompile(`^\s*#{1,6}\s`)
	boldLine    = regexp.MustCompile(`^\s*(\*\*[^*]+\*\*|__[^_]+__)\s*:?\s*$`)
	listItem    = regexp.MustCompile(`^(\s*)([-*+•]|\d+[.)])\s+`)
	tableRule   = regexp.MustCompile(`^\s*\|?[\s:|-]*-[\s:|-]*\|?\s*$`)
)

// docScope is a line that scopes the lines after it.
type docScope struct {
	text    string
	indent  int
	heading int  // the heading's level, 0 for a lead line or an item
	item    bool // a list item, scoping its nested items
	list    int  // the list its own items make
	// items says a lead line has had items, so a plain line after them
	// is no longer under it.
	items bool
}

// splitUnits reads an answer into its units (see unit). JSON in an answer
// (the whole answer, a fenced block, or a line) reads as a line per row
// and a lead line per object (see readable).
func splitUnits(answer string) []unit {
	var out []unit
	var stack []docScope
	lists := 0
	blank, rootList := false, 0
	var header []string // the table's header cells, while in a table
	scopeText := func() string {
		parts := make([]string, len(stack))
		for i, s := range stack {
			parts[i] = strings.TrimRight(strings.TrimSpace(s.text), ":")
		}
		return strings.Join(parts, ": ")
	}
	emit := func(text string, prev, list int) {
		for i, s := range sentences(text) {
			p := prev
			if i > 0 {
				p = len(out) - 1
			}
			out = append(out, unit{text: s, scope: scopeText(), prev: p, list: list})
		}
	}
	lastPlain := -1 // the last unit of the paragraph being read, or -1
	for _, line := range answerLines(answer) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			blank, lastPlain, header = true, -1, nil
			continue
		}
		indent := indentOf(line)
		switch {
		case headingLine.MatchString(line):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			for len(stack) > 0 && (stack[len(stack)-1].heading == 0 || stack[len(stack)-1].heading >= level) {
				stack = stack[:len(stack)-1]
			}
			text := strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			emit(text, -1, 0)
			lists++
			stack = append(stack, docScope{text: text, heading: level, list: lists})
			lastPlain, header, rootList = -1, nil, 0
		case strings.HasPrefix(trimmed, "|") && strings.Count(trimmed, "|") >= 2:
			if tableRule.MatchString(trimmed) {
				continue
			}
			cells := tableCells(trimmed)
			if header == nil {
				header = cells
				emit(strings.Join(cells, " | "), -1, 0)
				continue
			}
			// A row binds its cells: each is read after its column's
			// header, so that "| VH008 | 12 |" under "| van | fuel % |"
			// reads "van: VH008 | fuel %: 12".
			var parts []string
			for i, c := range cells {
				if i < len(header) && header[i] != "" && c != "" {
					c = header[i] + ": " + c
				}
				parts = append(parts, c)
			}
			out = append(out, unit{text: strings.Join(parts, " | "), scope: scopeText(), prev: -1})
		case listItem.MatchString(line):
			m := listItem.FindStringSubmatch(line)
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				if top.item && top.indent >= indent || !top.item && top.heading == 0 && top.indent > indent {
					stack = stack[:len(stack)-1]
					continue
				}
				break
			}
			list := 0
			if n := len(stack); n > 0 {
				stack[n-1].items = true
				list = stack[n-1].list
			} else {
				if rootList == 0 {
					lists++
					rootList = lists
				}
				list = rootList
			}
			text := strings.TrimSpace(line[len(m[0]):])
			emit(text, -1, list)
			lists++
			stack = append(stack, docScope{text: text, indent: indent, item: true, list: lists})
			lastPlain = len(out) - 1
		default:
			if n := len(stack); n > 0 && stack[n-1].item && indent > stack[n-1].indent && !blank {
				// A line indented under an item goes on with it.
				emit(trimmed, len(out)-1, 0)
				lastPlain = len(out) - 1
				break
			}
			// A plain line ends the lists before it, and after a blank
			// line the lead lines too; a lead line with items no longer
			// scopes it.
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				if top.item || top.heading == 0 && (blank || top.items) {
					stack = stack[:len(stack)-1]
					continue
				}
				break
			}
			rootList = 0
			emit(trimmed, lastPlain, 0)
			lastPlain = len(out) - 1
			if strings.HasSuffix(trimmed, ":") || boldLine.MatchString(line) {
				lists++
				stack = append(stack, docScope{text: strings.Trim(trimmed, "*_ "), indent: indent, list: lists})
				lastPlain = -1
			}
		}
		blank = false
	}
	return out
}

// indentOf is a line's indentation in columns, a tab counting four.
func indentOf(line string) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// tableCells splits a Markdown table row into its cells, trimmed.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	cells := strings.Split(row, "|")
	for i := range cells {
		cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "*_`")
	}
	return cells
}

// answerLines splits an answer into lines, reading JSON as readable
// text: the whole answer, a fenced block or a single line of it.
func answerLines(answer string) []string {
	if t := strings.TrimSpace(answer); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if r, ok := readableJSON(t); ok {
			return strings.Split(r, "\n")
		}
	}
	var lines []string
	raw := strings.Split(answer, "\n")
	for i := 0; i < len(raw); i++ {
		t := strings.TrimSpace(raw[i])
		if strings.HasPrefix(t, "```") {
			// A fenced block of JSON reads as JSON; any other stays text.
			end := i + 1
			for end < len(raw) && !strings.HasPrefix(strings.TrimSpace(raw[end]), "```") {
				end++
			}
			if r, ok := readableJSON(strings.Join(raw[i+1:min(end, len(raw))], "\n")); ok {
				lines = append(lines, strings.Split(r, "\n")...)
			} else {
				lines = append(lines, raw[i+1:min(end, len(raw))]...)
			}
			i = end
			continue
		}
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if r, ok := readableJSON(t); ok {
				lines = append(lines, strings.Split(r, "\n")...)
				continue
			}
		}
		lines = append(lines, raw[i])
	}
	return lines
}

// sentences splits a line after ., ! or ? followed by a space and a
// capital (or an opening bracket, quote or emphasis).
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line)-2; i++ {
		c := line[i]
		if c != '.' && c != '!' && c != '?' || line[i+1] != ' ' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(strings.TrimLeft(line[i+1:], " "))
		if unicode.IsUpper(r) || strings.ContainsRune("*(\"'[`", r) {
			out = append(out, line[start:i+1])
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// readableJSON reads JSON in an answer (a subject may answer with a
// tool's output, or with an object of the facts asked for) the way a
// careful agent would write it: a line per row ("VH008: fuel_pct 12,
// status available"), a statistic with a line per group, a count next to
// what it counts, and any other object as a lead line per key with its
// fields as items under it, so that each value is stated about its
// subject. ok is false when the text is no JSON.
func readableJSON(text string) (string, bool) {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return "", false
	}
	var b strings.Builder
	writeReadable(&b, v, "")
	return strings.TrimRight(b.String(), "\n"), true
}

func writeReadable(b *strings.Builder, v any, indent string) {
	x, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if _, isMap := e.(map[string]any); isMap {
					writeReadable(b, e, indent)
				} else {
					fmt.Fprintf(b, "%s- %s\n", indent, readableValue(e))
				}
			}
			return
		}
		fmt.Fprintf(b, "%s%s\n", indent, readableValue(v))
		return
	}
	entity, _ := x["entity"].(string)
	if groups, ok := x["groups"].([]any); ok || x["function"] != nil {
		fmt.Fprintf(b, "%s%s of %s over %s %s rows: %s\n", indent, readableValue(x["function"]), readableValue(x["field"]), readableValue(x["count"]), entity, readableValue(x["value"]))
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			fmt.Fprintf(b, "%s- %s %s: %s (%s %s rows)\n", indent, readableValue(x["group_by"]), readableValue(gm["key"]), readableValue(gm["value"]), readableValue(gm["count"]), entity)
		}
		return
	}
	if items, ok := x["items"].([]any); ok && entity != "" {
		fmt.Fprintf(b, "%s%s %s rows:\n", indent, readableValue(x["count"]), entity)
		for _, it := range items {
			b.WriteString(indent + "- ")
			writeReadable(b, it, "")
		}
		return
	}
	if id, ok := x["id"].(string); ok {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k != "id" && isScalar(x[k]) {
				parts = append(parts, k+" "+readableValue(x[k]))
			}
		}
		fmt.Fprintf(b, "%s%s: %s\n", indent, id, strings.Join(parts, ", "))
		return
	}
	// Any other object: a line per scalar field, a lead line per nested
	// one with its fields as items under it.
	for _, k := range slices.Sorted(maps.Keys(x)) {
		switch val := x[k].(type) {
		case map[string]any, []any:
			fmt.Fprintf(b, "%s- %s:\n", indent, k)
			writeReadable(b, val, indent+"  ")
		default:
			fmt.Fprintf(b, "%s- %s: %s\n", indent, k, readableValue(val))
		}
	}
}

// readableValue writes a string as it is and anything else as JSON (1000000,
// not fmt's 1e+06).
func readableValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonString(v)
}
