package advise

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/surface"
)

// TestPageShowsNoIntervalWithoutTrials: a pick without trials has no
// estimate and no interval, shown as the report shows an empty sample's:
// an en dash on the page, the fields left out of the JSON, never [0, 1].
func TestPageShowsNoIntervalWithoutTrials(t *testing.T) {
	nan := math.NaN()
	adv := &Advice{Out: t.TempDir(), Candidates: []Candidate{{Name: "a"}}, GridTrials: 4, Models: []ModelAdvice{{
		Model: "m", Pick: Recommendation{Pick: "a", Mean: nan, Low: nan, High: nan, Interval: "wilson"},
		SecondsPerTask: nan, JoulesPerTask: nan, Stopped: "no trials",
	}}}
	if err := Write(adv, map[string]surface.Spec{"a": {Name: "a"}}, nil, "test"); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(adv.Out, PageFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "- TC – (95% CI –, no trials)\n"; !strings.Contains(string(page), want) {
		t.Errorf("page lacks %q:\n%s", want, page)
	}
	data, err := os.ReadFile(filepath.Join(adv.Out, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"tc"`, `"tc_low"`, `"tc_high"`} {
		if strings.Contains(string(data), field) {
			t.Errorf("advise.json has %s without trials:\n%s", field, data)
		}
	}
	if !strings.Contains(string(data), `"trials": 0`) {
		t.Errorf("advise.json lacks the pick's 0 trials:\n%s", data)
	}
}
