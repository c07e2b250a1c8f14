package mcpdomain

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// The bounds that keep one client from making the server hold, or send,
// what it cannot afford: every stored string is bounded, and so is every
// result.
const (
	// DefaultMaxString bounds a string argument, at any depth, whose schema
	// sets no maxLength of its own. No gold argument comes near it.
	DefaultMaxString = 1000
	// MaxResultBytes bounds a tool result's JSON encoding.
	MaxResultBytes = 1 << 20
	// echoRunes bounds how much of a bad value an error message repeats.
	echoRunes = 40
)

// maxLengths returns the maxLength each top-level property of a schema
// declares, 0 for none.
func maxLengths(schema string) map[string]int {
	var s struct {
		Properties map[string]struct {
			MaxLength int `json:"maxLength"`
		} `json:"properties"`
	}
	_ = json.Unmarshal([]byte(schema), &s)
	out := make(map[string]int, len(s.Properties))
	for name, p := range s.Properties {
		out[name] = p.MaxLength
	}
	return out
}

// checkStrings refuses a string argument over its bound: the schema's
// maxLength, which the validator enforces, or else DefaultMaxString.
func (o *Operation) checkStrings(args map[string]any) error {
	o.once.Do(o.compile)
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if o.maxLen[name] > 0 {
			continue
		}
		if path, n := longString(args[name], name); path != "" {
			return Errorf("argument %q: a string of %d characters is over the limit of %d; shorten it", path, n, DefaultMaxString)
		}
	}
	return nil
}

// longString returns the path and length of the first string in v over
// DefaultMaxString characters, or "" if there is none.
func longString(v any, path string) (string, int) {
	switch v := v.(type) {
	case string:
		if n := utf8.RuneCountInString(v); n > DefaultMaxString {
			return path, n
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, n := longString(v[k], path+"."+k); p != "" {
				return p, n
			}
		}
	case []any:
		for i, e := range v {
			if p, n := longString(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, n
			}
		}
	}
	return "", 0
}

// Clip shortens a bad value an error message repeats to a short prefix
// that says how long the whole was.
func Clip(s string) string {
	head, n := runePrefix(s, echoRunes)
	if n <= echoRunes {
		return s
	}
	return head + fmt.Sprintf("… (%d characters)", n)
}

// runePrefix is s's first max characters and how many s has, without
// turning a megabyte argument into runes to repeat forty of them.
func runePrefix(s string, max int) (string, int) {
	n := 0
	for i := range s {
		if n == max {
			return s[:i], n + utf8.RuneCountInString(s[i:])
		}
		n++
	}
	return s, n
}

// quote quotes a string an error message repeats, clipped to a prefix that
// says how long the whole was.
func quote(s string) string {
	head, n := runePrefix(s, echoRunes)
	if n <= echoRunes {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q (%d characters)", head+"…", n)
}
