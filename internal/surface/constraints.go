package surface

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// constraintKeys are the schema keywords that constrain a value beyond its
// type and enum: what Ollama's tool types drop (all of them but the
// item counts), and what granite's generator also states in words.
var constraintKeys = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "multipleOf"}

// formatWords are the words that state a format in a description.
var formatWords = map[string][]string{
	"date-time": {"RFC 3339", "RFC3339", "ISO 8601", "ISO8601"},
	"date":      {"YYYY-MM-DD", "ISO 8601", "RFC 3339"},
	"time":      {"HH:MM", "RFC 3339"},
	"email":     {"email", "e-mail"},
	"uri":       {"URI", "URL"},
	"uuid":      {"UUID"},
}

// states reports whether the sentence states the constraint key of the
// argument schema p: it gives the bound's number, a value the pattern
// matches (an example ID), or the format's name.
func states(p obj, key, sentence string) bool {
	v, _ := p.get(key)
	switch key {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "minLength", "maxLength":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		found := numbers(sentence)
		if !slices.Contains(found, normalNumber(string(n))) {
			return false
		}
		// A range states both its bounds: a lone 0 in "(0 for other
		// kinds)" does not state a minimum of 0 when there is a maximum.
		if pair := bounds[key]; pair != "" {
			if m, ok := p.get(pair); ok {
				mn, _ := m.(json.Number)
				return slices.Contains(found, normalNumber(string(mn)))
			}
		}
		return true
	case "pattern":
		s, _ := v.(string)
		re, err := regexp.Compile(s)
		if err != nil {
			return false
		}
		if strings.Contains(sentence, s) {
			return true
		}
		for _, w := range strings.FieldsFunc(sentence, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '(' || r == ')' }) {
			if re.MatchString(strings.TrimRight(w, ".")) {
				return true
			}
		}
	case "format":
		s, _ := v.(string)
		for _, w := range append([]string{s}, formatWords[s]...) {
			if strings.Contains(strings.ToLower(sentence), strings.ToLower(w)) {
				return true
			}
		}
	}
	return false
}

// bounds pairs each bound with the other end of its range.
var bounds = map[string]string{"minimum": "maximum", "maximum": "minimum", "minLength": "maxLength", "maxLength": "minLength", "minItems": "maxItems", "maxItems": "minItems"}

// number is a number as a description writes it.
var number = regexp.MustCompile(`-?\d+(?:\.\d+)?`)

func numbers(s string) []string {
	found := number.FindAllString(s, -1)
	for i, n := range found {
		found[i] = normalNumber(n)
	}
	return found
}

// normalNumber writes 5, 5.0 and 5e0 alike.
func normalNumber(n string) string {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return n
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// constraintsOf lists the constraint keywords an argument schema has.
func constraintsOf(p obj) []string {
	var out []string
	for _, k := range constraintKeys {
		if _, ok := p.get(k); ok {
			out = append(out, k)
		}
	}
	return out
}

// unstated is p's description without the sentences that state one of its
// constraints.
func unstated(p obj) string {
	keys := constraintsOf(p)
	desc := p.getString("description")
	if len(keys) == 0 || desc == "" {
		return desc
	}
	var keep []string
	for _, s := range sentences(desc) {
		if !slices.ContainsFunc(keys, func(k string) bool { return states(p, k, s) }) {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, " ")
}

// schemaOnly counts p's constraints and those its description does not
// state.
func schemaOnly(p obj) (constraints, only int) {
	ss := sentences(p.getString("description"))
	for _, k := range constraintsOf(p) {
		constraints++
		if !slices.ContainsFunc(ss, func(s string) bool { return states(p, k, s) }) {
			only++
		}
	}
	return constraints, only
}
