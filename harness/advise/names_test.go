package advise

import (
	"strings"
	"testing"
)

// TestCheckFileNames: models whose files would collide, or whose names are
// too long for a file name, are refused before a race is played (they
// failed only once it was over).
func TestCheckFileNames(t *testing.T) {
	cases := []struct {
		models []string
		want   string
	}{
		{[]string{"qwen3:4b", "llama3.2:3b"}, ""},
		{[]string{"m:1", "m_1"}, "would write the same files"},
		{[]string{strings.Repeat("x", 300)}, "bytes long as a file name"},
	}
	for _, c := range cases {
		err := CheckFileNames(c.models)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.models, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.60q: %v, want %q", c.models, err, c.want)
		}
	}
}
