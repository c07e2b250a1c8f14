package scenarios

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The offline backend writes its prompts from the tools' own words: what
// a call does is the first sentence of the description that says it (the
// chosen action's, where an argument's description documents its values
// as "value: what it does"), and its arguments read as a phrase. A prompt
// reads as a request, not as a template, and names no tool.

// request is the prompt of one call of t: what the call does, with the
// values it takes (less the action, which the purpose already says).
func (t *Tool) request(args json.RawMessage) string {
	key, purpose := t.action(args)
	if with := phrase(args, key); with != "" {
		return purpose + ", with " + with + "."
	}
	return purpose + "."
}

// purposeOf is what a call of t with args does (see action).
func (t *Tool) purposeOf(args json.RawMessage) string {
	_, purpose := t.action(args)
	return purpose
}

// purpose is the first sentence of the tool's description, or "Run NAME".
func (t *Tool) purpose() string {
	if s := firstSentence(t.Description); s != "" {
		return s
	}
	return "Run " + t.Name
}

// actionNames are the names servers give the argument that picks what a
// coarse tool does (granite's own levels L3-L1 call it action).
var actionNames = []string{"action", "operation", "op", "command", "method"}

// action finds the argument of args whose value picks what the call does
// and what that is: one named as such (actionNames) whose property's
// description documents the value given as "value: what it does", and the
// first sentence of that. An argument like status, whose values may be
// documented the same way, says how, not what. Without one, the purpose
// is the tool's (see purpose) and key is "".
func (t *Tool) action(args json.RawMessage) (key, purpose string) {
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &schema) == nil {
		m := argsMap(args)
		for _, k := range actionNames {
			if v, ok := m[k].(string); ok {
				if s := actionDescription(schema.Properties[k].Description, v); s != "" {
					return k, s
				}
			}
		}
	}
	return "", t.purpose()
}

// actionDescription finds "value: what it does" in a description that
// documents an argument's values, and returns that sentence.
func actionDescription(desc, value string) string {
	if value == "" {
		return ""
	}
	for from := 0; ; {
		i := strings.Index(desc[from:], value+":")
		if i < 0 {
			return ""
		}
		at := from + i
		// The value must start a word: "get_vehicle:" is not found in
		// "forget_vehicle:".
		if at == 0 || !isWordByte(desc[at-1]) {
			return firstSentence(desc[at+len(value)+1:])
		}
		from = at + len(value)
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// abbreviations end in a full stop that ends no sentence.
var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "approx": true, "incl": true, "no": true, "resp": true}

// firstSentence is the text up to the first full stop (or ! or ?) that
// ends a sentence: outside parentheses, not an abbreviation's (e.g., i.e.),
// followed by a space or the end; a blank line ends it too. Line breaks
// within are spaces, and the final stop is left off.
func firstSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		desc = desc[:i]
	}
	desc = strings.Join(strings.Fields(desc), " ")
	depth := 0
	for i, r := range desc {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth = max(0, depth-1)
		case '.', '!', '?':
			if depth > 0 || (i+1 < len(desc) && desc[i+1] != ' ') {
				continue
			}
			word := desc[strings.LastIndexAny(desc[:i], " (")+1 : i]
			if r == '.' && abbreviations[strings.ToLower(word)] {
				continue
			}
			return desc[:i]
		}
	}
	return strings.TrimRight(desc, ".")
}

// phrase reads a call's arguments as words: "vehicle id VH001, status
// \"cancelled\" and limit 5", leaving out the argument named skip (the
// action its purpose already says).
func phrase(args json.RawMessage, skip string) string {
	m := argsMap(args)
	var parts []string
	for _, k := range sortedKeys(m) {
		if k == skip {
			continue
		}
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+valueWords(m[k]))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// valueWords writes a value as a person would: an identifier or a number
// bare, text with spaces in quotes, anything else as JSON.
func valueWords(v any) string {
	switch v := v.(type) {
	case string:
		if v != "" && !strings.ContainsAny(v, " \t\n\",") {
			return v
		}
		return fmt.Sprintf("%q", v)
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// lowerFirst lowers a sentence's first letter for use after "Then:",
// leaving acronyms (GPU, VH001) as they are.
func lowerFirst(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 || strings.ToUpper(f[0]) == f[0] {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
