package tokens

import "testing"

// TestCount pins cl100k_base counts that tiktoken gives for the same text.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{`{"type":"object","properties":{"room":{"type":"string"}}}`, 14},
	} {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}
