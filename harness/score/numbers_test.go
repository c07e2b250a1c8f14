package score

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The regular expressions numbers and IDs were read with before
// numberTokens and idSpans scanned them by hand; the scans must read every
// text as they do.
var (
	numberToken   = regexp.MustCompile(`(?:^|[^\p{L}\p{N}._])(-?[0-9]+(?:\.[0-9]+)?)`)
	groupedNumber = regexp.MustCompile(`(?:^|[^\p{L}\p{N}._,])(-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?)`)
)

func regexNumberTokens(text string) []numberTok {
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
	seen := map[span]bool{}
	for _, re := range []*regexp.Regexp{groupedNumber, numberToken} {
		for _, m := range re.FindAllStringSubmatchIndex(norm, -1) {
			tok := norm[m[2]:m[3]]
			if seen[span{m[2], m[3]}] || afterGroup(norm[:m[2]]) || !standsAlone(tok, norm[m[3]:]) {
				continue
			}
			x, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimLeft(tok, " "), ",", ""), 64)
			if err != nil {
				continue
			}
			seen[span{m[2], m[3]}] = true
			out = append(out, numberTok{span{m[2], m[3]}, text[m[2]:m[3]], x, decimals(tok), strings.HasPrefix(norm[m[3]:], "%")})
		}
	}
	slices.SortFunc(out, func(a, b numberTok) int { return a.start - b.start })
	return out
}

var idToken = regexp.MustCompile(`[A-Za-z]{1,8}[0-9]{1,9}`)

// regexIDSpans is how IDs were found before idSpans scanned for them.
func regexIDSpans(text string) []span {
	var out []span
	for _, m := range idToken.FindAllStringIndex(text, -1) {
		if (m[0] > 0 && isAlnum(text[m[0]-1])) || (m[1] < len(text) && isAlnum(text[m[1]])) {
			continue
		}
		out = append(out, span{m[0], m[1]})
	}
	return out
}

// TestNumberTokensReadAsTheRegexes compares the scan with the regular
// expressions on every corpus answer and on the edges of the grammar.
func TestNumberTokensReadAsTheRegexes(t *testing.T) {
	texts := []string{"", "1,180.9 kWh", "1,180", "1,2345", "1234,567", "12,345,678.25%", "−23.5 °C", "A-5 and x -5", "1-2", "3.5.2", "3.", ".5",
		"SN005 5G2 2nd 2.5th", "78% of 0.78", "a,1,000 b", "(1,000)", "_5 5_", "١٢ 12", "-", "--5", "x-1,000", "1,000,00", "SS003 ss003b ABCDEFGHI12 ab12cd34 TR0005, SN0051234567890 _A1 A1_ 5G2"}
	files, _ := filepath.Glob("testdata/corpus/*/*.answer.txt")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	for _, text := range texts {
		if g, w := tokenKeys(numberTokens(text)), tokenKeys(regexNumberTokens(text)); !slices.Equal(g, w) {
			t.Errorf("%.60q: scan %v, regexes %v", text, g, w)
		}
		if g, w := idSpans(text), regexIDSpans(text); !slices.Equal(g, w) {
			t.Errorf("%.60q: IDs %v, regexes %v", text, g, w)
		}
	}
}

// tokenKeys names each number read by its place and value, sorted.
func tokenKeys(ns []numberTok) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n.start) + "-" + strconv.Itoa(n.end) + "=" + strconv.FormatFloat(n.x, 'g', -1, 64)
	}
	slices.Sort(out)
	return out
}

func FuzzNumberTokens(f *testing.F) {
	for _, s := range []string{"1,180.9", "−2.5%", "SN005 12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if g, w := tokenKeys(numberTokens(text)), tokenKeys(regexNumberTokens(text)); !slices.Equal(g, w) {
			t.Errorf("%q: scan %v, regexes %v", text, g, w)
		}
		if g, w := idSpans(text), regexIDSpans(text); !slices.Equal(g, w) {
			t.Errorf("%q: IDs %v, regexes %v", text, g, w)
		}
	})
}
