package toolsrc

import (
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`npx -y @modelcontextprotocol/server-filesystem /tmp`, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}},
		{`node "/home/me/My Servers/index.js" --root '/a b'`, []string{"node", "/home/me/My Servers/index.js", "--root", "/a b"}},
		{`server /path/with\ space "q\"uote" 'it''s' ""`, []string{"server", "/path/with space", `q"uote`, "its", ""}},
		{`a "$HOME" '*'`, []string{"a", "$HOME", "*"}},
	} {
		got, err := SplitCommand(c.in)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`a "b`, `a 'b`, `   `} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
