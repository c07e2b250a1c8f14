package report

import (
	"math"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
)

// TestBestLevelRule pins the rule that picks each model's best level:
// the highest TC over the trials every level played, then TC strict, then
// wall time, then the finer level; and the table says which step decided.
func TestBestLevelRule(t *testing.T) {
	trial := func(l level.Level, scenario string, tc, tcs, wall float64) row {
		return row{model: "m", domain: "d", scenario: scenario, level: l, rep: 1, tc: tc, tcs: tcs, wall: wall, energy: math.NaN()}
	}
	for _, c := range []struct {
		name       string
		rows       []row
		want, rule string
	}{
		{"higher TC", []row{trial(level.L4, "a", 0, 0, 1), trial(level.L3, "a", 1, 0, 9)}, "L3", "tc"},
		{"a TC tie goes to TC strict", []row{trial(level.L4, "a", 1, 0, 1), trial(level.L3, "a", 1, 1, 9)}, "L3", "tc_strict"},
		{"then to the lower wall time", []row{trial(level.L4, "a", 1, 1, 5), trial(level.L3, "a", 1, 1, 9), trial(level.L2, "a", 1, 1, 2)}, "L2", "wall time"},
		{"then to the finer level", []row{trial(level.L3, "a", 1, 1, 2), trial(level.L4, "a", 1, 1, 2)}, "L4", "level order"},
		// Over all its trials L3 (1.0) beats L4 (0.5); over the trial
		// both played they tie, and the finer level wins.
		{"over the same trials", []row{trial(level.L4, "a", 1, 1, 2), trial(level.L4, "b", 0, 0, 2), trial(level.L3, "a", 1, 1, 2)}, "L4", "level order"},
		{"one level", []row{trial(level.L2, "a", 0, 0, 2)}, "L2", "only level"},
	} {
		r := &Report{Models: []string{"m"}, Levels: level.Levels, rows: c.rows}
		tab := r.bestLevel()
		if len(tab.Rows) != 1 {
			t.Fatalf("%s: rows %v", c.name, tab.Rows)
		}
		got := tab.Rows[0]
		if got[1] != c.want || got[8] != c.rule {
			t.Errorf("%s: best %v by %q, want %s by %q", c.name, got[1], got[8], c.want, c.rule)
		}
	}
}
