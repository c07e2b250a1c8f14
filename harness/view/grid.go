package view

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"html/template"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/stats"
)

// cell is one cell of a TC table: the share of passed trials among N,
// with its 95% interval from the report's bootstrap (report.Interval), so
// that a cell the report also has shows the report's interval.
type cell struct {
	N, Pass int
	CI      stats.CI
	Link    string
	Style   template.CSS
	// tcs are the cell's trials' TCs in the journal's order, the sample
	// the interval is drawn from.
	tcs []float64
}

// TC is the cell's mean task completion.
func (c cell) TC() float64 {
	if c.N == 0 {
		return math.NaN()
	}
	return float64(c.Pass) / float64(c.N)
}

// grid is a table of TC with a column per level and one for all levels,
// and a row per value of some column of the trials (By), or, PerModel,
// per model and value: pooling models would average a model that always
// completes with one that never does into a 50% that describes neither.
type grid struct {
	Title    string
	By       string
	PerModel bool
	Cols     []string
	Rows     []gridRow
}

// gridRow is one row of a grid; Span, on a PerModel grid's first row of a
// model, is how many rows that model has (0 on its other rows).
type gridRow struct {
	Model string
	Span  int
	Name  string
	Link  string
	Cells []cell
	All   cell
}

// gridSpec says what a grid tabulates.
type gridSpec struct {
	title, by string
	perModel  bool
	col       func(*entry) string
	set       func(*Filter, string)
	// order sorts the rows' values; label names a cell's interval (lv
	// "all" for the all-levels column).
	order func([]string) []string
	label func(model, name, lv string) string
}

var (
	heatGrid = gridSpec{title: "Task completion by model and level", by: "model",
		col: func(e *entry) string { return e.model }, set: func(f *Filter, v string) { f.Model = v },
		// The report's labels: the heat map shows the intervals of its
		// model_level and overall tables.
		label: func(_, model, lv string) string {
			if lv == "all" {
				return report.ModelLabel(model)
			}
			return report.CellLabel(model, level.Level(lv))
		}}
	domainGrid = gridSpec{title: "By domain, per model", by: "domain", perModel: true,
		col: func(e *entry) string { return e.domain }, set: func(f *Filter, v string) { f.Domain = v }, order: sorted}
	difficultyGrid = gridSpec{title: "By difficulty, per model", by: "difficulty", perModel: true,
		col: func(e *entry) string { return e.difficulty }, set: func(f *Filter, v string) { f.Difficulty = v }, order: byDifficulty}
)

func sorted(vs []string) []string { return slices.Sorted(slices.Values(vs)) }

// byDifficulty puts difficulties in the report's order (easy, medium,
// hard, then artifacts' tiers) and any others after them by name.
func byDifficulty(vs []string) []string {
	rank := func(d string) int {
		if i := slices.Index(report.Difficulties, d); i >= 0 {
			return i
		}
		return len(report.Difficulties)
	}
	out := sorted(vs)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// inOrder lists the models of the trials: those of the config in its
// order, then any others by name.
func inOrder(config []string, seen map[string]bool) []string {
	var out []string
	for _, m := range config {
		if seen[m] && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(seen)) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// intervals keeps the cells' bootstrap intervals between pages: a live
// Run page is drawn again whenever a trial arrives, and most cells'
// trials are the same as the last time. A cell is known by its label and
// its sample, exactly.
type intervals struct {
	mu sync.Mutex
	m  map[intervalKey]stats.CI
}

type intervalKey struct {
	label string
	n     int
	hash  uint64
}

// maxIntervals bounds the cache; past it, it starts again empty.
const maxIntervals = 1 << 16

// of returns the interval of a sample under a label.
func (c *intervals) of(label string, xs []float64) stats.CI {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	k := intervalKey{label, len(xs), h.Sum64()}
	c.mu.Lock()
	ci, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return ci
	}
	ci = report.Interval(0, label, xs)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxIntervals {
		c.m = map[intervalKey]stats.CI{}
	}
	c.m[k] = ci
	c.mu.Unlock()
	return ci
}

// buildGrids tabulates a folder's trials as each spec says, the grids
// side by side (their intervals are most of a Run page's work).
func buildGrids(run int, s snapshot, models []string, cache *intervals, specs ...gridSpec) []grid {
	out := make([]grid, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { out[i] = buildGrid(run, s, models, cache, spec) })
	}
	wg.Wait()
	return out
}

// buildGrid tabulates a folder's trials as spec says; models is the
// config's order of them.
func buildGrid(run int, s snapshot, models []string, cache *intervals, spec gridSpec) grid {
	g := grid{Title: spec.title, By: spec.by, PerModel: spec.perModel}
	type key struct{ model, name, lv string }
	cells := map[key]*cell{}
	add := func(k key, e *entry) {
		c := cells[k]
		if c == nil {
			c = &cell{}
			cells[k] = c
		}
		c.N++
		c.tcs = append(c.tcs, e.tc)
		if e.passed() {
			c.Pass++
		}
	}
	usedLv, seenModel := map[string]bool{}, map[string]bool{}
	names := map[string]map[string]bool{} // model ("" unless PerModel) -> row values
	for k := range s.entries {
		e := &s.entries[k]
		model := ""
		if spec.perModel {
			model = e.model
		}
		name := spec.col(e)
		if names[model] == nil {
			names[model] = map[string]bool{}
		}
		names[model][name] = true
		usedLv[e.level], seenModel[e.model] = true, true
		add(key{model, name, e.level}, e)
		add(key{model, name, "all"}, e)
	}
	for _, l := range levels {
		if usedLv[l] {
			g.Cols = append(g.Cols, l)
		}
	}
	groups := []string{""}
	if spec.perModel {
		groups = inOrder(models, seenModel)
	}
	link := func(f Filter) string { return "/trials?" + f.Values(0).Encode() }
	for _, model := range groups {
		rowNames := slices.Collect(maps.Keys(names[model]))
		if spec.order != nil {
			rowNames = spec.order(rowNames)
		} else {
			rowNames = inOrder(models, names[model])
		}
		for i, name := range rowNames {
			rf := Filter{Run: run, Model: model}
			spec.set(&rf, name)
			r := gridRow{Model: model, Name: name, Link: link(rf)}
			if spec.perModel && i == 0 {
				r.Span = len(rowNames)
			}
			finish := func(lv string) cell {
				c := cell{}
				if p := cells[key{model, name, lv}]; p != nil {
					c = *p
				}
				c.Style = heat(c.TC())
				if c.N > 0 {
					c.CI = cache.of(spec.labelOf(model, name, lv), c.tcs)
				}
				return c
			}
			for _, l := range g.Cols {
				c := finish(l)
				cf := rf
				cf.Level = cmpOr(l, "-")
				c.Link = link(cf)
				r.Cells = append(r.Cells, c)
			}
			r.All = finish("all")
			r.All.Link = r.Link
			g.Rows = append(g.Rows, r)
		}
	}
	return g
}

// labelOf is the label of a cell's interval: the spec's, or one naming
// the grid, the row and the level.
func (spec gridSpec) labelOf(model, name, lv string) string {
	if spec.label != nil {
		return spec.label(model, name, lv)
	}
	return fmt.Sprintf("view/%s/%s/%s/%s", spec.by, model, name, lv)
}
