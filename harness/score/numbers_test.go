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

// TestNumberTokens pins how numbers are read: each place a number is
// written, with every reading of it, as people write numbers.
func TestNumberTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"1,180.9 kWh", []string{"0-1=1", "0-7=1180.9"}},
		{"1,180", []string{"0-1=1", "0-5=1180", "0-5=1.18"}}, // thousands, a list, or a decimal comma
		{"142,8 kW", []string{"0-3=142", "0-5=142.8"}},       // a decimal comma
		{"1.180,9 kWh", []string{"0-5=1.18", "0-7=1180.9"}},  // thousands dots and a decimal comma
		{"3,45%", []string{"0-1=3", "0-4=3.45"}},
		{"1,2,3", []string{"0-1=1"}},        // a list: the later ones follow a comma
		{"−23.5 °C", []string{"2-7=-23.5"}}, // the minus sign is three bytes
		{"SN005 5G2 2nd 2.5th", []string{"14-17=2.5"}},
		{"Cola 330 ml, 24-pack: 12", []string{"5-8=330", "22-24=12"}}, // 24-pack is a word
		{"78% of 0.78", []string{"0-2=78", "7-11=0.78"}},
		{"3.5.2", []string{"0-3=3.5"}},
		{"1.180 kWh", []string{"0-5=1.18", "0-5=1180"}}, // points that group thousands, or a decimal point
		{"0.125", []string{"0-5=0.125"}},
		{"x-1,000", []string{"2-3=1", "2-7=1000", "2-7=1"}}, // a hyphen after a word is no minus
	} {
		if got := tokenKeys(numberTokens(c.text)); !slices.Equal(got, sorted(c.want)) {
			t.Errorf("%q: read %v, want %v", c.text, got, sorted(c.want))
		}
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestIDSpansReadAsTheRegex compares the scan for IDs with the regular
// expression it replaced on every corpus answer and the edges of the
// grammar.
func TestIDSpansReadAsTheRegex(t *testing.T) {
	texts := []string{"", "SN005 5G2 2nd", "SS003 ss003b ABCDEFGHI12 ab12cd34 TR0005, SN0051234567890 _A1 A1_ 5G2"}
	files, _ := filepath.Glob("testdata/corpus/*/*.answer.txt")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	for _, text := range texts {
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

// FuzzNumberTokens holds the scan to its invariants on any text: every
// number lies inside the text, starts where a number may start, and its
// reading parses from its digits.
func FuzzNumberTokens(f *testing.F) {
	for _, s := range []string{"1,180.9", "−2.5%", "SN005 12", "142,8 kW", "1.180,9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, n := range numberTokens(text) {
			if n.start < 0 || n.end > len(text) || n.start >= n.end {
				t.Fatalf("%q: a number at %d..%d", text, n.start, n.end)
			}
			if !strings.ContainsAny(text[n.start:n.end], "0123456789") {
				t.Errorf("%q: %q read as %v has no digit", text, text[n.start:n.end], n.x)
			}
		}
		if g, w := idSpans(text), regexIDSpans(text); !slices.Equal(g, w) {
			t.Errorf("%q: IDs %v, regexes %v", text, g, w)
		}
	})
}
