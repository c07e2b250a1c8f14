package results

import (
	"strings"
	"testing"
)

// TestCommitText: granite version says what is known of a build that
// carries no commit, rather than that it was not built from a checkout.
func TestCommitText(t *testing.T) {
	for _, c := range []struct {
		b    Build
		want string
	}{
		{Build{Commit: "0123abc"}, "0123abc"},
		{Build{Commit: "0123abc", Modified: true}, "0123abc (modified)"},
		{Build{Module: "(devel)"}, "unknown: built from a source tree without a VCS stamp (go build -buildvcs=false"},
		{Build{Module: "v1.2.0"}, "unknown: installed as module version v1.2.0"},
		{Build{}, "unknown: the binary carries no build information"},
	} {
		if got := c.b.CommitText(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q; want it to start %q", c.b, got, c.want)
		}
	}
	if got := (Build{Module: "(devel)"}).CommitText(); !strings.Contains(got, "make build stamps it") {
		t.Errorf("%q does not say how to get a stamp", got)
	}
}
