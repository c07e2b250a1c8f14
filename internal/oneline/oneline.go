// Package oneline writes text that came from someone else (a server's
// name, a tool's, an experiment's, a model's) onto one line of granite's
// own output — a Markdown report, a YAML comment, a terminal, an error
// message — with its control characters, a line break among them, and
// its bidirectional formatting characters as escapes, so that none of it
// starts a line, moves the cursor or reorders what a reader sees after it.
// Printable text, letters of any script included, stays as it is. A
// name quoted with %q needs none of this: strconv.Quote escapes what is
// not printable, these characters among them.
package oneline

import (
	"fmt"
	"strings"
	"unicode"
)

// Escape returns s with each character Unsafe names written as an
// escape: \xNN for a control character (C0, DEL, C1), \uNNNN for a
// line or paragraph separator or a bidirectional formatting character.
func Escape(s string) string {
	if !strings.ContainsFunc(s, Unsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !Unsafe(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// Unsafe reports whether r is one that Escape rewrites: a control
// character, which a terminal acts on (ESC starts a sequence, CR and LF
// move the cursor); U+2028 and U+2029, which editors and some readers
// take as line breaks; and the bidirectional marks, embeddings, overrides
// and isolates (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
// U+2069), which reorder the text that follows them on screen.
func Unsafe(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
