package score

import (
	"strings"
	"unicode"
)

// words lower-cases a text and splits it into words of only letters or
// only digits, so that living_room, "Living room" and "living-room" read
// the same, and so do 2026-03-13T22:10:00Z and "22:10".
func words(s string) string {
	toks := wordTokens(s)
	ws := make([]string, len(toks))
	for i, t := range toks {
		ws[i] = t.w
	}
	return strings.Join(ws, " ")
}

// wordTok is one word of a unit, lower-cased.
type wordTok struct {
	span
	w string
}

// wordTokens splits a text into words (see words), keeping where each
// stands.
func wordTokens(text string) []wordTok {
	var out []wordTok
	start, class := -1, ' '
	flush := func(end int) {
		if start >= 0 {
			out = append(out, wordTok{span{start, end}, strings.ToLower(text[start:end])})
		}
		start = -1
	}
	for i, r := range text {
		c := wordClass(r)
		if c != class {
			flush(i)
			if c != ' ' {
				start = i
			}
			class = c
		}
	}
	flush(len(text))
	return out
}

// wordClass says whether a rune is part of a word of letters ('a'), of
// digits ('0'), or of no word.
func wordClass(r rune) rune {
	switch {
	case unicode.IsLetter(r):
		return 'a'
	case unicode.IsDigit(r):
		return '0'
	}
	return ' '
}
