package oneline

import (
	"fmt"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                "plain",
		"a\nb":                 `a\x0ab`,
		"cr\rover":             `cr\x0dover`,
		"x\x1b[2Jy":            `x\x1b[2Jy`,
		"tab\there, é stays":   `tab\x09here, é stays`,
		"\u0085next line (C1)": `\x85next line (C1)`,
		"del\x7f":              `del\x7f`,
		"\u202eevil":           `\u202eevil`,
		"\u2066iso\u2069":      `\u2066iso\u2069`,
		"ls\u2028ps\u2029":     `ls\u2028ps\u2029`,
		"日本語 ok":               "日本語 ok",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQuotedNamesAreSafeToo: %q, which messages quote names with,
// escapes every character Escape does, so either is safe on a terminal.
func TestQuotedNamesAreSafeToo(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		if Unsafe(r) && strings.ContainsRune(fmt.Sprintf("%q", string(r)), r) {
			t.Errorf("%%q keeps U+%04X raw", r)
		}
	}
}
