package speclang

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/oneline"
)

// TestMarshalYAMLReadsBack attacks the writer with strings YAML reads
// otherwise than as themselves, as values and as keys: what the reader
// (parseYAML) makes of the output is what was written, and no control or
// bidirectional character is in the output raw.
func TestMarshalYAMLReadsBack(t *testing.T) {
	hostile := []string{
		"plain", "read#file", "x #y", "a: b", "ends:", "- dash", "? key", "* star", "&a", "!t", "%p", "@a", "`b",
		"'s'", `"d"`, `b\s`, "{b", "[b", "|p", ">f", ", c", "<<", " lead", "trail ", "null", "~", "true", "no",
		"123", "0o17", "1_000", ".inf", "-.inf", ".nan", "12:30:00", "2001-12-14", "line\nbreak", "two\n\nblank",
		"end\n", "\nstart", "in\n  dented", "cr\rx", "tab\tx", "a\x1b[2Jb", "del\x7f", "\u0085nel", "ls\u2028x",
		"\u202eevil", "é 日本", "",
	}
	for _, s := range hostile {
		v := map[string]any{"value": s, "list": []string{s, "x"}}
		if s != "" {
			v[s] = 1
		}
		out, err := MarshalYAML(v)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if strings.ContainsFunc(strings.ReplaceAll(string(out), "\n", ""), oneline.Unsafe) {
			t.Errorf("%q: written raw:\n%q", s, out)
		}
		root, errs := parseYAML("w.yaml", out)
		if len(errs) > 0 {
			t.Errorf("%q: does not read back: %v\n%s", s, errs, out)
			continue
		}
		want, _ := json.Marshal(v)
		got, _ := json.Marshal(root.toAny())
		if string(got) != string(want) {
			t.Errorf("%q: read back otherwise:\nwrote %s\nread  %s\n%s", s, want, got, out)
		}
	}
}
