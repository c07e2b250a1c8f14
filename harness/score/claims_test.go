package score_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/score"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/spectest"
)

// TestClaims pins the claim rules on one scenario (testdata/claims.yaml
// says which, and why each answer is right or wrong).
func TestClaims(t *testing.T) {
	data, err := os.ReadFile("testdata/claims.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Scenario, Facts string
		Cases           []struct {
			Name, Answer, Why string
			Right             bool
		}
	}
	if err := yaml.Unmarshal(data, &file); err != nil || len(file.Cases) == 0 {
		t.Fatalf("testdata/claims.yaml: %v, %d cases", err, len(file.Cases))
	}
	spec, ctx := spectest.All(t), context.Background()
	name, _, _ := strings.Cut(file.Scenario, "-")
	d := spec.Domain(name)
	if d == nil {
		t.Fatalf("no domain for scenario %s", file.Scenario)
	}
	var g *score.Gold
	var final []byte
	for _, s := range d.Scenarios {
		if s.ID != file.Scenario {
			continue
		}
		dom, _ := gen.Lookup(d.Name)
		rights, err := gold.RightsOf(ctx, dom, s)
		if err != nil {
			t.Fatal(err)
		}
		g, final = score.NewGold(d, s, level.L4, dom, rights), rights.Finals[0]
	}
	if g == nil {
		t.Fatalf("no scenario %s", file.Scenario)
	}
	for _, c := range file.Cases {
		answer := c.Answer
		if strings.HasPrefix(answer, "+") {
			answer = file.Facts + answer[1:]
		}
		rec := &results.Record{StopReason: results.StopAnswer, FinalAnswer: answer, Calls: []results.Call{}}
		m, err := score.Score(rec, g, final)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Right && m.TC != 1:
			t.Errorf("%s: TC %v, want 1: %q", c.Name, m.TC, m.Why)
		case !c.Right && m.TC != 0:
			t.Errorf("%s: TC 1, want 0", c.Name)
		case !c.Right && !strings.Contains(strings.Join(m.Why, "; "), c.Why):
			t.Errorf("%s: why %q, want it to say %q", c.Name, m.Why, c.Why)
		}
	}
}
