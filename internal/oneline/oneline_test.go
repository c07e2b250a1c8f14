package oneline

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                "plain",
		"a\nb":                 `a\x0ab`,
		"x\x1b[2Jy":            `x\x1b[2Jy`,
		"tab\there, é stays":   `tab\x09here, é stays`,
		"\u0085next line (C1)": `\x85next line (C1)`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
