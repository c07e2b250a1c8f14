package harness

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/speclang"
)

// CheckState returns the conditions a store snapshot fails, each with why;
// none means the state is as expected.
func CheckState(snapshot []byte, checks []*speclang.StateCheck) ([]string, error) {
	rows, err := mcpdomain.Rows(snapshot)
	if err != nil {
		return nil, err
	}
	return checkRows(rows, checks), nil
}

// checkRows is CheckState on a decoded snapshot.
func checkRows(rows map[string][]map[string]any, checks []*speclang.StateCheck) []string {
	var failed []string
	for _, c := range checks {
		if why := checkOne(rows[c.Collection], c); why != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", c, why))
		}
	}
	return failed
}

func checkOne(rows []map[string]any, c *speclang.StateCheck) string {
	var sel []map[string]any
	for _, r := range rows {
		if c.ID != "" && r["id"] == c.ID || c.ID == "" && holds(r, c.Where) == "" {
			sel = append(sel, r)
		}
	}
	switch {
	case c.Absent && len(sel) > 0:
		return fmt.Sprintf("found %d matching row(s); expected none", len(sel))
	case c.Absent:
		return ""
	case c.Count != nil && len(sel) != *c.Count:
		return fmt.Sprintf("found %d matching row(s); expected %d", len(sel), *c.Count)
	case len(sel) == 0:
		return "found no such row; expected one"
	}
	for _, r := range sel {
		if why := holds(r, c.Fields); why != "" {
			return fmt.Sprintf("row %v: %s", r["id"], why)
		}
	}
	return ""
}

// holds says which field of a row differs from the wanted values, or "".
// Values compare as arguments do (see sameValue), free text loosely: a
// model that names a task "corner deli" did what was asked of "Corner
// Deli" (enum values are exact already: the schema refuses any other
// spelling).
//
// A nil wanted value asks for an optional field without a value: the
// snapshot leaves such a field out.
func holds(row map[string]any, want map[string]any) string {
	for _, k := range slices.Sorted(maps.Keys(want)) { // the same reason every time
		w := want[k]
		got, ok := row[k]
		switch {
		case w == nil && (!ok || got == nil):
			continue
		case w == nil:
			return fmt.Sprintf("found %s = %s; expected it unset", k, jsonString(got))
		case !ok || got == nil:
			return fmt.Sprintf("found %s unset; expected %s", k, jsonString(w))
		}
		if !sameValue(got, w, false) {
			return fmt.Sprintf("found %s = %s; expected %s", k, jsonString(got), jsonString(w))
		}
	}
	return ""
}

// sameValue is the one comparison of values the harness makes, for state
// conditions and arguments alike: numbers by value (21 = 21.0), objects key
// by key, arrays in order; strings trimmed and case-folded, and
// timestamps by instant, unless exact.
func sameValue(got, want any, exact bool) bool {
	if same, scalar := sameScalar(got, want, exact); scalar {
		return same
	}
	opts := looseValues
	if exact {
		opts = exactValues
	}
	return cmp.Equal(normalize(got), normalize(want), opts)
}

// sameScalar is sameValue for two strings, numbers or booleans, without
// the JSON round trip: most values compared are scalars. scalar is false
// when either value is of another kind.
func sameScalar(got, want any, exact bool) (same, scalar bool) {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		if !ok {
			return false, isScalar(got)
		}
		if exact {
			return g == w, true
		}
		return strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(w)) || sameInstant(g, w), true
	case bool:
		g, ok := got.(bool)
		return ok && g == w, isScalar(got)
	}
	if w, ok := number(want); ok {
		g, ok := number(got)
		if !ok {
			return false, isScalar(got)
		}
		return sameFloat(g, w), true
	}
	return false, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	_, ok := number(v)
	return ok
}

// number reads the numeric types decoded JSON and the spec loader use.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// sameFloat is how the harness compares numbers: by value, within a
// relative 1e-9 so that 0.1+0.2 is 0.3.
func sameFloat(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

var (
	numbers     = cmp.Comparer(sameFloat)
	exactValues = cmp.Options{numbers}
	looseValues = cmp.Options{numbers, cmp.Comparer(func(a, b string) bool {
		return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) || sameInstant(a, b)
	})}
)

// sameInstant reports whether two strings are timestamps of the same
// instant, however their zones are written (Z or +00:00).
func sameInstant(sa, sb string) bool {
	ta, err1 := time.Parse(time.RFC3339, sa)
	tb, err2 := time.Parse(time.RFC3339, sb)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

// normalize round-trips a value through JSON so numbers are float64 on
// both sides.
func normalize(v any) any {
	var out any
	if err := json.Unmarshal([]byte(jsonString(v)), &out); err != nil {
		return v
	}
	return out
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Stated reports whether a text states a fact in any of its forms.
func Stated(text string, f *speclang.Fact) bool {
	for _, form := range f.Forms() {
		if statesValue(text, form) {
			return true
		}
	}
	return false
}

func statesValue(text string, v any) bool {
	switch x := v.(type) {
	case float64:
		return statesNumber(text, x, decimals(strconv.FormatFloat(x, 'f', -1, 64)))
	case int64:
		return statesNumber(text, float64(x), 0)
	case int:
		return statesNumber(text, float64(x), 0)
	case string:
		w := words(x)
		return w != "" && strings.Contains(" "+words(text)+" ", " "+w+" ")
	default:
		return strings.Contains(text, fmt.Sprint(v))
	}
}

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
// with some.
func sameNumber(x float64, dx int, v float64, dv int) bool {
	if dv > 0 && dx == 0 {
		return false
	}
	return math.Abs(x-v) <= 0.5*math.Pow10(-min(dx, dv))+1e-9
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
	add := func(start, end int) {
		tok := norm[start:end]
		if afterGroup(norm[:start]) || !standsAlone(tok, norm[end:]) {
			return
		}
		x, err := strconv.ParseFloat(strings.ReplaceAll(tok, ",", ""), 64)
		if err == nil {
			out = append(out, numberTok{span{start, end}, tok, x, decimals(tok), strings.HasPrefix(norm[end:], "%")})
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
		if grouped := groupedEnd(norm, digits, plain); grouped > plain && (i == 0 || prev != ',') {
			add(i, fractionEnd(norm, grouped))
		}
		end := fractionEnd(norm, plain)
		add(i, end)
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

// fractionEnd is where a number ending at i ends with its decimals, if a
// point and a digit follow.
func fractionEnd(s string, i int) int {
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		return digitsEnd(s, i+1)
	}
	return i
}

// groupedEnd is where a number with thousands separators from i ends: one
// to three digits, then groups of a comma and three digits; i when it has
// none.
func groupedEnd(s string, i, run int) int {
	if run-i > 3 {
		return i
	}
	end := i
	for j := run; j+3 < len(s) && s[j] == ',' && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]); j += 4 {
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
