// Package oneline writes text that came from someone else (a server's
// name, an experiment's, a model's) onto one line of granite's own output
// — a Markdown report, a YAML comment, a terminal — with its control
// characters, a line break among them, as escapes, so that none of it
// starts a line or moves the cursor.
package oneline

import (
	"fmt"
	"strings"
	"unicode"
)

// Escape returns s with each control character written as \xNN.
func Escape(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
