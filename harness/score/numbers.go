package score

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// minusRunes are the other ways a text writes a minus sign: the Unicode
// minus, the small and the full-width hyphen-minus.
const minusRunes = "\u2212\ufe63\uff0d"

// statesNumber reports whether text holds a number equal to v at the
// coarser of the two precisions. A value with decimals needs at least one
// decimal place in the text: "21.5" states 21.46, "21" does not. Numbers
// are read the way people write them: with thousands separators
// (1,180.9), a unit glued on (142.8kW, 102.2bpm), a Unicode minus
// (−23.5), and as percentages (78% states 78, and 0.78). A number that is
// part of an identifier (SN005, 5G2) or an ordinal (2nd) states nothing.
func statesNumber(text string, v float64, dv int) bool {
	return slices.ContainsFunc(numberTokens(text), func(n numberTok) bool { return n.states(v, dv) })
}

// sameNumber reports whether x, written with dx decimals, equals v, which
// has dv decimals, at the coarser precision; a v with decimals needs an x
// with some, and a whole v an x whose decimals are zeros.
func sameNumber(x float64, dx int, v float64, dv int) bool {
	if dv > 0 && dx == 0 {
		return false
	}
	// A whole value's decimals must be zeros: 1.5 is not 1, 1.0 is.
	return math.Abs(x-v) <= 0.5*math.Pow10(-min(dx, dv))+1e-9 && (dv > 0 || dx == 0 || math.Abs(x-v) < 0.5*math.Pow10(-dx)+1e-9)
}

// afterGroup reports whether a number starts right after "<digit>,": it
// is the tail of a number with thousands separators (the 180 of 1,180),
// which the grouped reading takes whole.
func afterGroup(before string) bool {
	n := len(before)
	return n >= 2 && before[n-1] == ',' && before[n-2] >= '0' && before[n-2] <= '9'
}

// standsAlone reports whether a number token, followed by rest, is a
// quantity: followed by nothing alphanumeric, or by a unit (letters, then
// nothing alphanumeric). Letters then digits make an identifier, and
// st, nd, rd and th after a whole number an ordinal.
func standsAlone(tok, rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	switch {
	case rest == "" || unicode.IsDigit(r):
		return rest == ""
	case r == '-' && len(rest) > 1 && unicode.IsLetter(rune(rest[1])):
		return false // a compound word: 24-pack, 3-phase
	case !unicode.IsLetter(r):
		return true
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) })
	suffix := rest
	if end >= 0 {
		suffix = rest[:end]
		if r, _ := utf8.DecodeRuneInString(rest[end:]); unicode.IsDigit(r) || r == '_' {
			return false
		}
	}
	switch strings.ToLower(suffix) {
	case "st", "nd", "rd", "th":
		return strings.Contains(tok, ".")
	}
	return true
}

func decimals(num string) int {
	if i := strings.IndexByte(num, '.'); i >= 0 {
		return len(num) - i - 1
	}
	return 0
}

// span is a range of bytes of a unit's text.
type span struct{ start, end int }

// numberTok is a number as an answer writes it.
type numberTok struct {
	span
	text string
	x    float64
	dx   int
	pct  bool
}

// states reports whether the written number states v (with dv decimals).
func (n numberTok) states(v float64, dv int) bool {
	return sameNumber(n.x, n.dx, v, dv) || n.pct && sameNumber(n.x/100, n.dx+2, v, dv)
}

// numberTokens lists the numbers a text states (see statesNumber), where
// each stands; both readings of "1,180" are listed.
func numberTokens(text string) []numberTok {
	if !strings.ContainsAny(text, "0123456789") {
		return nil
	}
	norm := text
	if strings.ContainsAny(text, minusRunes) {
		// Offsets must stay those of text: each minus sign becomes
		// spaces and a hyphen of the same length.
		norm = sameLengthMinus(text)
	}
	var out []numberTok
	// add reads the number written at start..end as value (its digits
	// with a point for decimals, no separators).
	add := func(start, end int, value string) {
		tok := norm[start:end]
		if afterGroup(norm[:start]) || !standsAlone(tok, norm[end:]) {
			return
		}
		x, err := strconv.ParseFloat(value, 64)
		if err == nil {
			out = append(out, numberTok{span{start, end}, tok, x, decimals(value), strings.HasPrefix(norm[end:], "%")})
		}
	}
	for i := 0; i < len(norm); i++ {
		digits := i
		if norm[i] == '-' {
			digits++
		}
		if digits >= len(norm) || !isDigit(norm[digits]) {
			continue
		}
		// A number starts the text or follows what is no part of a word,
		// a number or a decimal (SN005, 5.2.1); a grouped one no comma.
		prev, _ := utf8.DecodeLastRuneInString(norm[:i])
		if i > 0 && (unicode.IsLetter(prev) || unicode.IsNumber(prev) || prev == '.' || prev == '_') {
			continue
		}
		plain := digitsEnd(norm, digits)
		if grouped := groupedEnd(norm, digits, plain, ','); grouped > plain && (i == 0 || prev != ',') {
			end := fractionEnd(norm, grouped, '.')
			add(i, end, strings.ReplaceAll(norm[i:end], ",", ""))
		}
		// Decimal commas, as written in languages that use them: 142,8
		// and 1.180,9.
		if dotted := groupedEnd(norm, digits, plain, '.'); dotted > plain && norm[digits] != '0' {
			if end := fractionEnd(norm, dotted, ','); end > dotted {
				add(i, end, strings.ReplaceAll(strings.ReplaceAll(norm[i:end], ".", ""), ",", "."))
			} else if dotted == fractionEnd(norm, plain, '.') || dotted > fractionEnd(norm, plain, '.') {
				// 1.180 is 1180 where points group thousands, and 1.18
				// where they mark decimals: both readings.
				add(i, dotted, strings.ReplaceAll(norm[i:dotted], ".", ""))
			}
		}
		// A comma and three digits is also a decimal comma (26,725),
		// beside the thousands reading.
		if end := fractionEnd(norm, plain, ','); end > plain && !(end+1 < len(norm) && (norm[end] == ',' || norm[end] == '.') && isDigit(norm[end+1])) {
			add(i, end, norm[i:plain]+"."+norm[plain+1:end])
		}
		end := fractionEnd(norm, plain, '.')
		add(i, end, norm[i:end])
		i = end - 1
	}
	return out
}

// digitsEnd is where the run of digits from i ends.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// fractionEnd is where a number ending at i ends with its decimals, if
// the decimal mark and a digit follow.
func fractionEnd(s string, i int, mark byte) int {
	if i+1 < len(s) && s[i] == mark && isDigit(s[i+1]) {
		return digitsEnd(s, i+1)
	}
	return i
}

// groupedEnd is where a number with thousands separators (sep) from i
// ends: one to three digits, then groups of the separator and three
// digits; i when it has none.
func groupedEnd(s string, i, run int, sep byte) int {
	if run-i > 3 {
		return i
	}
	end := i
	for j := run; j+3 < len(s) && s[j] == sep && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]); j += 4 {
		end = j + 4
	}
	return end
}

// sameLengthMinus writes each Unicode minus sign as spaces and a hyphen of
// its byte length.
func sameLengthMinus(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if strings.ContainsRune(minusRunes, r) {
			b.WriteString(strings.Repeat(" ", n-1) + "-")
		} else {
			b.WriteString(text[i : i+n]) // the bytes as they are, valid or not
		}
		i += n
	}
	return b.String()
}
