package harness

import "testing"

// TestPseudoVersionCommit: a go install …@commit build knows its
// revision only from the pseudo-version, which names its prefix.
func TestPseudoVersionCommit(t *testing.T) {
	for v, want := range map[string]string{
		"v0.0.0-20261202054200-0123456789ab":              "0123456789ab",
		"v1.2.4-0.20261202054200-abcdefabcdef":            "abcdefabcdef",
		"v2.0.0-20261202054200-abcdefabcdef+incompatible": "abcdefabcdef",
		"v1.2.3":      "",
		"(devel)":     "",
		"v1.2.3-rc.1": "",
	} {
		got := ""
		if m := pseudoRev.FindStringSubmatch(v); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%s: commit %q; want %q", v, got, want)
		}
	}
	if b := BuildInfo(); b.Module == "" {
		t.Errorf("a test binary's build info has no module version: %+v", b)
	}
}
