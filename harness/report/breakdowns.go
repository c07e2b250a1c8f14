package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// This file is the tables that break the trials down: model time,
// assertions, domains, difficulties, size classes, each model's best
// level, pass^k and error classes.

// modelTime is the model server's seconds per trial, by model and level,
// split into prompt evaluation and generation, with the load and the
// whole wait beside them; and the prompt evaluation of the first trial of
// each (domain, level) against the later ones: the trials of a (domain,
// level) run back to back, so the later ones find the system prompt and
// tool list in the server's prefix cache. Their time shows it; Ollama's
// prompt_eval_count does not, as it counts the cached prefix too.
func (r *Report) modelTime() *Table {
	t := &Table{Name: "model_time", Title: "Model time per trial: prompt evaluation and generation (s)",
		Header: []string{"model", "level", "trials", "prompt_eval_s", "generation_s", "load_s", "model_wait_s",
			"prompt_tokens", "tokens_generated", "first_prompt_eval_s", "later_prompt_eval_s"}}
	first := map[string]int{} // model/domain/level -> the lowest plan index
	for _, x := range r.rows {
		k := x.model + "/" + x.domain + "/" + string(x.level)
		if i, ok := first[k]; !ok || x.index < i {
			first[k] = x.index
		}
	}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			rows := r.where(func(x row) bool { return x.model == m && x.level == l })
			if len(rows) == 0 || !slices.ContainsFunc(rows, func(x row) bool { return x.promptS+x.genS > 0 }) {
				continue
			}
			var firsts, laters []float64
			for _, x := range rows {
				if first[x.model+"/"+x.domain+"/"+string(x.level)] == x.index {
					firsts = append(firsts, x.promptS)
				} else {
					laters = append(laters, x.promptS)
				}
			}
			t.Rows = append(t.Rows, []any{m, string(l), len(rows),
				stats.Mean(col(rows, func(x row) float64 { return x.promptS })), stats.Mean(col(rows, func(x row) float64 { return x.genS })),
				stats.Mean(col(rows, func(x row) float64 { return x.loadS })), stats.Mean(col(rows, func(x row) float64 { return x.waitS })),
				stats.Mean(col(rows, func(x row) float64 { return x.ptok })), stats.Mean(col(rows, func(x row) float64 { return x.ctok })),
				stats.Mean(firsts), stats.Mean(laters)})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no trial has model-server durations (built-in agents, agent commands and OpenAI-compatible endpoints report none)"
	}
	return t
}

// efficiency is TC per second of wall time, GPU joules per completed
// task, and mean power (NaN without energy).
func efficiency(rows []row) []any {
	var tc, wall, e float64
	metered := true
	for _, x := range rows {
		tc += x.tc
		wall += x.wall
		if math.IsNaN(x.energy) {
			metered = false
		}
		e += x.energy
	}
	jps, power := math.NaN(), math.NaN()
	if metered && len(rows) > 0 {
		if tc > 0 {
			jps = e / tc
		}
		if wall > 0 {
			power = e / wall
		}
	}
	tps := math.NaN()
	if wall > 0 {
		tps = tc / wall
	}
	return []any{tps, jps, power}
}

// assertions is the pass rate of artifact assertions by model, kind and
// severity.
func (r *Report) assertions() *Table {
	t := &Table{Name: "assertions", Title: "Artifact assertions passed, by model, kind and severity",
		Header: []string{"model", "kind", "severity", "assertions", "passed"}}
	for _, m := range r.Models {
		type key struct{ kind, severity string }
		n, ok := map[key]int{}, map[key]int{}
		var keys []key
		for _, x := range r.where(func(x row) bool { return x.model == m }) {
			for _, v := range x.verdicts {
				k := key{v.Kind, v.Severity}
				if n[k] == 0 {
					keys = append(keys, k)
				}
				n[k]++
				if v.Passed {
					ok[k]++
				}
			}
		}
		slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.kind+a.severity, b.kind+b.severity) })
		for _, k := range keys {
			t.Rows = append(t.Rows, []any{m, k.kind, k.severity, n[k], float64(ok[k]) / float64(n[k])})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no artifact trial has assertions"
	}
	return t
}

func (r *Report) modelDomain() *Table {
	t := &Table{Name: "model_domain", Title: "TC by model and domain", Header: []string{"model", "domain", "trials", "tc", "tc_strict"}}
	for _, m := range r.Models {
		for _, d := range r.domains() {
			rows := r.where(func(x row) bool { return x.model == m && x.domain == d })
			if len(rows) > 0 {
				t.Rows = append(t.Rows, []any{m, d, len(rows), stats.Mean(col(rows, getTC)), stats.Mean(col(rows, getTCS))})
			}
		}
	}
	return t
}

func (r *Report) domains() []string { return domainsOf(r.rows) }

// domainsOf lists the domains rows played, sorted.
func domainsOf(rows []row) []string {
	var out []string
	for _, x := range rows {
		if !slices.Contains(out, x.domain) {
			out = append(out, x.domain)
		}
	}
	slices.Sort(out)
	return out
}

func (r *Report) byDomain() *Table {
	t := &Table{Name: "by_domain", Title: "By domain", Header: append([]string{"domain"}, summaryHeader...)}
	for _, d := range r.domains() {
		t.Rows = append(t.Rows, append([]any{d}, r.summary("domain/"+d, r.where(func(x row) bool { return x.domain == d }))...))
	}
	return t
}

func (r *Report) byDifficulty() *Table {
	t := &Table{Name: "by_difficulty", Title: "By difficulty", Header: append([]string{"difficulty"}, summaryHeader...)}
	for _, d := range r.difficulties() {
		rows := r.where(func(x row) bool { return x.difficulty == d })
		t.Rows = append(t.Rows, append([]any{d}, r.summary("difficulty/"+d, rows)...))
	}
	return t
}

// Difficulties are the difficulty tiers in the order tables list them:
// the benchmark's, easiest first, then synthesized artifacts'.
var Difficulties = []string{"easy", "medium", "hard", "simple", "complex"}

// difficulties lists the difficulties the trials have, in Difficulties'
// order.
func (r *Report) difficulties() []string { return difficultiesOf(r.rows) }

// difficultiesOf lists the difficulties rows have, in Difficulties' order.
func difficultiesOf(rows []row) []string {
	var out []string
	for _, d := range Difficulties {
		if slices.ContainsFunc(rows, func(x row) bool { return x.difficulty == d }) {
			out = append(out, d)
		}
	}
	return out
}

func (r *Report) sizeClass() *Table {
	t := &Table{Name: "size_class", Title: "Small (< 8B) and large models", Header: append([]string{"class"}, summaryHeader...)}
	for _, c := range []struct {
		name string
		keep func(row) bool
	}{
		{"small (<8B)", func(x row) bool { return x.params > 0 && x.params < SmallModel }},
		{"large (>=8B)", func(x row) bool { return x.params >= SmallModel }},
	} {
		if rows := r.where(c.keep); len(rows) > 0 {
			t.Rows = append(t.Rows, append([]any{c.name}, r.summary("size/"+c.name, rows)...))
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no model sizes in run.json (built-in agents have none)"
	}
	return t
}

// BestLevelRule is how each model's best level is chosen, in words for
// the report.
const BestLevelRule = "over the trials (domain, scenario, repetition) the model played at every one of its levels: " +
	"the highest TC; on a tie the highest TC strict, then the lower mean wall time, then the finer level (L4 first)"

// bestLevel is each model at its best level (BestLevelRule), with its wall
// time, energy per completed task and TC per second; rule says which step
// of the rule decided, and pareto marks models no other model beats on
// both TC and wall time.
func (r *Report) bestLevel() *Table {
	t := &Table{Name: "best_level", Title: "Each model at its best level (Pareto front: no model is both faster and better)",
		Header: []string{"model", "best_level", "tc", "wall_s", "tc_per_s", "j_per_success", "pareto", "trials", "rule"}}
	type pt struct {
		m       string
		l       level.Level
		tc, tcs float64
		wall    float64
		eff     []any
		n       int
		rule    string
	}
	var pts []pt
	for _, m := range r.Models {
		byLevel := map[level.Level][]row{}
		for _, l := range r.Levels {
			if rows := r.where(func(x row) bool { return x.model == m && x.level == l }); len(rows) > 0 {
				byLevel[l] = rows
			}
		}
		shared, common := sharedTrials(byLevel)
		var cands []pt
		for _, l := range r.Levels { // L4 first: the last step of the rule
			rows := slices.DeleteFunc(slices.Clone(byLevel[l]), func(x row) bool { return !shared[trialKey(x)] })
			if len(rows) > 0 {
				cands = append(cands, pt{m: m, l: l, tc: stats.Mean(col(rows, getTC)), tcs: stats.Mean(col(rows, func(x row) float64 { return x.tcs })),
					wall: stats.Mean(col(rows, getWall)), eff: efficiency(rows), n: len(rows)})
			}
		}
		if len(cands) == 0 {
			continue
		}
		steps := []struct {
			name string
			cmp  func(a, b pt) int
		}{
			{"tc", func(a, b pt) int { return cmp.Compare(b.tc, a.tc) }},
			{"tc_strict", func(a, b pt) int { return cmp.Compare(b.tcs, a.tcs) }},
			{"wall time", func(a, b pt) int { return cmp.Compare(a.wall, b.wall) }},
		}
		slices.SortStableFunc(cands, func(a, b pt) int {
			for _, s := range steps {
				if c := s.cmp(a, b); c != 0 {
					return c
				}
			}
			return 0
		})
		best := cands[0]
		best.rule = "only level"
		if len(cands) > 1 {
			best.rule = "level order"
			for _, s := range steps {
				if s.cmp(best, cands[1]) != 0 {
					best.rule = s.name
					break
				}
			}
		}
		if !common {
			best.rule += " (no trial ran at every level: each level over its own)"
		}
		pts = append(pts, best)
	}
	for _, p := range pts {
		front := !slices.ContainsFunc(pts, func(q pt) bool {
			return q.m != p.m && q.tc >= p.tc && q.wall <= p.wall && (q.tc > p.tc || q.wall < p.wall)
		})
		t.Rows = append(t.Rows, []any{p.m, string(p.l), p.tc, p.wall, p.eff[0], p.eff[1], front, p.n, p.rule})
	}
	return t
}

// trialKey names a trial across levels: its domain, scenario and
// repetition.
func trialKey(x row) string { return fmt.Sprintf("%s/%s/%d", x.domain, x.scenario, x.rep) }

// sharedTrials lists the trials played at every level given (common);
// when no trial is, it lists every trial, so that a model whose levels ran
// apart still has a best level.
func sharedTrials(byLevel map[level.Level][]row) (trials map[string]bool, common bool) {
	count := map[string]int{}
	for _, rows := range byLevel {
		seen := map[string]bool{}
		for _, x := range rows {
			if k := trialKey(x); !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	out := map[string]bool{}
	for k, n := range count {
		if n == len(byLevel) {
			out[k] = true
		}
	}
	if len(out) > 0 {
		return out, true
	}
	for k := range count {
		out[k] = true
	}
	return out, false
}

func (r *Report) passK() *Table {
	t := &Table{Name: "pass_k", Title: "pass^k: the chance that all k repetitions of a scenario succeed", Header: []string{"model", "level", "k", "pass_k"}}
	for _, m := range r.Models {
		for _, l := range r.Levels {
			succ := map[string]int{}
			reps := map[string]int{}
			var keys []string
			for _, x := range r.where(func(x row) bool { return x.model == m && x.level == l }) {
				k := x.domain + "/" + x.scenario
				if _, ok := reps[k]; !ok {
					keys = append(keys, k)
				}
				reps[k]++
				succ[k] += int(x.tc)
			}
			if len(keys) == 0 {
				continue
			}
			var c, n []int
			for _, k := range keys {
				c, n = append(c, succ[k]), append(n, reps[k])
			}
			for k, v := range PassK(c, n) {
				t.Rows = append(t.Rows, []any{m, string(l), k + 1, v})
			}
		}
	}
	return t
}

func (r *Report) errorClasses() *Table {
	t := &Table{Name: "errors", Title: "Error classes by model", Header: []string{"model", "error_class", "trials", "share"}}
	classes := map[string]map[string]int{}
	for _, x := range r.rows {
		if x.errClass == "" {
			continue
		}
		if classes[x.model] == nil {
			classes[x.model] = map[string]int{}
		}
		classes[x.model][x.errClass]++
	}
	for _, m := range r.Models {
		n := len(r.where(func(x row) bool { return x.model == m }))
		cs := classes[m]
		keys := make([]string, 0, len(cs))
		for k := range cs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, []any{m, k, cs[k], float64(cs[k]) / float64(n)})
		}
	}
	if len(t.Rows) == 0 {
		t.Note = "no trial has an error class"
	}
	return t
}
