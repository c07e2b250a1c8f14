package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot sizes.
const (
	plotW = 7 * vg.Inch
	plotH = 4 * vg.Inch
	// PNGWidth and PNGHeight are the pixel sizes of the PNGs (at the
	// default 96 dpi of vgimg).
	PNGWidth  = 672
	PNGHeight = 384
)

// figure is what a plot function draws: a plot, a plot of bars with
// their marks, or a heat map beside its colour bar.
type figure interface{ Draw(draw.Canvas) }

// plots draws every figure as SVG and PNG. It returns the files and notes
// on figures that could not be drawn.
func (r *Report) plots(out string) (files, notes []string, err error) {
	figs := []struct {
		name string
		draw func() (figure, string, error)
	}{
		{"tc_model_level", r.plotTCModelLevel},
		{"pareto_tc_wall", r.plotPareto},
		{"power_model_level", r.plotPower},
		{"gpu_util_model_level", r.plotUtil},
		{"tc_model_domain", r.plotHeatmap},
		{"metrics_by_level", r.plotMetricsByLevel},
	}
	// A run under fault settings adds its figures; one without has none
	// to draw, and no note of them.
	if r.Table(FaultsTable) != nil {
		figs = append(figs, []struct {
			name string
			draw func() (figure, string, error)
		}{{"tc_faults", r.plotTCFaults}, {"recovery_faults", r.plotRecoveryFaults}}...)
	}
	for _, f := range figs {
		saved, note, err := drawFigure(out, f.name, f.draw)
		if err != nil {
			return nil, nil, fmt.Errorf("plot %s: %w", f.name, err)
		}
		files = append(files, saved...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return files, notes, nil
}

// drawFigure draws one figure and saves it as SVG and PNG. gonum/plot
// panics on data it cannot place (a log axis reaching zero, say); a
// figure that does becomes a note, so that one bad figure never costs the
// tables. The figures guard their data, and FuzzReport looks for the note.
func drawFigure(out, name string, draw func() (figure, string, error)) (files []string, note string, err error) {
	defer func() {
		if e := recover(); e != nil {
			files, note, err = nil, fmt.Sprintf("%s could not be drawn: %v", name, e), nil
		}
	}()
	fig, note, err := draw()
	if err != nil || fig == nil {
		return nil, note, err
	}
	for _, ext := range []string{".svg", ".png"} {
		file := filepath.Join(out, name+ext)
		if err := save(fig, file); err != nil {
			return nil, "", err
		}
		files = append(files, file)
	}
	return files, "", nil
}

// save writes a figure in the format its file name ends with.
func save(fig figure, file string) error {
	c, err := draw.NewFormattedCanvas(plotW, plotH, strings.TrimPrefix(filepath.Ext(file), "."))
	if err != nil {
		return err
	}
	fig.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	return results.WriteFile(filepath.Dir(file), filepath.Base(file), b.Bytes())
}

// bar is one bar of a grouped chart: its value (NaN: not available, no
// bar) and its 95% interval (NaN where none is computed).
type bar struct{ v, lo, hi float64 }

// noCI is a bar without an interval.
func noCI(v float64) bar { return bar{v, math.NaN(), math.NaN()} }

// bars is a grouped bar chart and, per series, the marks drawn over its
// bars.
type bars struct {
	*plot.Plot
	marks  []*barMarks
	charts []*plotter.BarChart
}

// colorSeries gives series si colour c, its bars and its marks alike.
func (b bars) colorSeries(si int, c color.Color) {
	b.charts[si].Color = c
	b.marks[si].color = c
}

// groupedBars draws one bar group per x name with one bar per series,
// each with its interval as an error bar and a bar of 0 as a stub.
func groupedBars(title, ylabel string, xs []string, series []string, value func(x, s int) bar) (bars, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	out := bars{Plot: p}
	w := vg.Points(math.Max(4, 40/float64(len(series))))
	for si, s := range series {
		vals := make(plotter.Values, len(xs))
		m := &barMarks{bars: make([]bar, len(xs)), width: w, color: plotutil.Color(si)}
		for xi := range xs {
			b := value(xi, si)
			m.bars[xi] = b
			if !finite(b.v) {
				b.v = 0 // not available: no bar (gonum refuses NaN and ±Inf), and no stub
				m.bars[xi] = bar{math.NaN(), math.NaN(), math.NaN()}
			}
			vals[xi] = b.v
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return bars{}, err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = m.color
		b.Offset = w * vg.Length(float64(si)-float64(len(series)-1)/2)
		m.offset = b.Offset
		p.Add(b, m)
		p.Legend.Add(s, b)
		out.marks = append(out.marks, m)
		out.charts = append(out.charts, b)
	}
	p.Legend.Top = true
	p.NominalX(xs...)
	return out, nil
}

// stubHeight is how tall a bar of 0 is drawn: enough to see, too little
// to read as a value.
const stubHeight = vg.Length(4)

// barMarks draws over one series of bars what a bar cannot show: its 95%
// interval as an error bar with caps, and a bar of 0 as a stub outlined
// above the axis, so that a measured zero is told from a value that is
// not available (no bar, no stub).
type barMarks struct {
	bars          []bar
	offset, width vg.Length
	color         color.Color
}

// errorBarStyle draws the intervals.
var errorBarStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}

// Plot implements plot.Plotter.
func (m *barMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, b := range m.bars {
		x := trX(float64(i)) + m.offset
		if b.v == 0 {
			y := trY(0)
			stub := []vg.Point{{X: x - m.width/2, Y: y}, {X: x + m.width/2, Y: y}, {X: x + m.width/2, Y: y + stubHeight}, {X: x - m.width/2, Y: y + stubHeight}}
			c.FillPolygon(m.color, stub)
			c.StrokeLines(errorBarStyle, append(stub, stub[0]))
		}
		if finite(b.lo) && finite(b.hi) {
			lo, hi, cap := trY(b.lo), trY(b.hi), m.width/4
			c.StrokeLine2(errorBarStyle, x, lo, x, hi)
			c.StrokeLine2(errorBarStyle, x-cap, lo, x+cap, lo)
			c.StrokeLine2(errorBarStyle, x-cap, hi, x+cap, hi)
		}
	}
}

// DataRange implements plot.DataRanger: the intervals stay on the axis.
func (m *barMarks) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = float64(len(m.bars) - 1)
	for _, b := range m.bars {
		for _, y := range []float64{b.v, b.lo, b.hi} {
			if finite(y) {
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	return 0, xmax, ymin, ymax
}

// interval is the report's interval of a metric over rows, as a bar.
func (r *Report) interval(label string, rows []row, get func(row) float64) bar {
	ci := Interval(r.seed, label, col(rows, get))
	return bar{ci.Mean, ci.Lo, ci.Hi}
}

// noLevels says why a plot by level cannot be drawn, or "".
func (r *Report) noLevels() string {
	switch {
	case len(r.rows) == 0:
		return "no trials to plot"
	case len(r.Levels) == 0:
		return noLevelNote
	}
	return ""
}

// noLevelNote says why trials have no level.
const noLevelNote = "no trial has a level (artifacts of tools from outside the benchmark)"

func (r *Report) levelNames() []string {
	var out []string
	for _, l := range r.Levels {
		out = append(out, string(l))
	}
	return out
}

func (r *Report) cell(model, level string, f func([]row) float64) float64 {
	rows := r.where(func(x row) bool { return x.model == model && string(x.level) == level })
	if len(rows) == 0 {
		return math.NaN()
	}
	return f(rows)
}

// plotTCModelLevel draws the model_level table's TC with its intervals.
func (r *Report) plotTCModelLevel() (figure, string, error) {
	if note := r.noLevels(); note != "" {
		return nil, note, nil
	}
	levels := r.levelNames()
	t := r.Table("model_level")
	at := map[[2]string][]any{}
	for _, row := range t.Rows {
		at[[2]string{row[0].(string), row[1].(string)}] = row
	}
	tc, lo, hi := t.column("tc"), t.column("tc_lo"), t.column("tc_hi")
	p, err := groupedBars("Task completion by model and level (95% intervals)", "TC", r.Models, levels, func(x, s int) bar {
		row, ok := at[[2]string{r.Models[x], levels[s]}]
		if !ok {
			return noCI(math.NaN())
		}
		return bar{row[tc].(float64), row[lo].(float64), row[hi].(float64)}
	})
	if err != nil {
		return nil, "", err
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p, "", nil
}

// column is the index of a column of t by its header.
func (t *Table) column(name string) int { return slices.Index(t.Header, name) }

// faultBars draws a column of the by_faults table as bars grouped by its
// interface (or level), a bar per setting of settings, with the interval
// columns lo and hi when given ("": none). first is the place of the
// first setting among them all, the trials without faults first, so that
// a setting has its colour in every figure.
func (r *Report) faultBars(title, ylabel string, settings []string, first int, value, lo, hi string) (figure, string, error) {
	t := r.Table(FaultsTable)
	var groups []string
	at := map[[2]string][]any{}
	for _, row := range t.Rows {
		g := row[1].(string)
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		at[[2]string{row[0].(string), g}] = row
	}
	if len(groups) == 0 {
		return nil, "no trials to plot", nil
	}
	v, l, h := t.column(value), t.column(lo), t.column(hi)
	p, err := groupedBars(title+pooledNote, ylabel, groups, settings, func(x, s int) bar {
		row, ok := at[[2]string{settings[s], groups[x]}]
		switch {
		case !ok:
			return noCI(math.NaN())
		case l < 0:
			return noCI(row[v].(float64))
		}
		return bar{row[v].(float64), row[l].(float64), row[h].(float64)}
	})
	if err != nil {
		return nil, "", err
	}
	for si := range settings {
		p.colorSeries(si, plotutil.Color(first+si))
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Label.Text = t.Header[1]
	return p, "", nil
}

// plotTCFaults draws by_faults' TC, with its intervals, per interface (or
// level) and fault setting, the trials without faults first.
func (r *Report) plotTCFaults() (figure, string, error) {
	return r.faultBars("Task completion by fault setting and "+r.Table(FaultsTable).Header[1]+" (95% intervals)", "TC",
		append([]string{r.noFaults()}, r.faultSettings()...), 0, "tc", "tc_lo", "tc_hi")
}

// plotRecoveryFaults draws by_faults' recovery rate per interface (or
// level) and setting that injects faults: a ratio of sums, it has no
// interval.
func (r *Report) plotRecoveryFaults() (figure, string, error) {
	if !slices.ContainsFunc(r.faulted, func(x row) bool { return x.injected > 0 }) {
		return nil, "faults recovered by fault setting: no fault was injected", nil
	}
	return r.faultBars("Faults recovered by fault setting and "+r.Table(FaultsTable).Header[1], "recovered / injected",
		r.faultSettings(), 1, "recovery_rate", "", "")
}

// pooledNote ends the title of a figure whose bars pool every model's
// trials: a reader must not take them for one model's.
const pooledNote = " (all models pooled)"

func (r *Report) plotMetricsByLevel() (figure, string, error) {
	if note := r.noLevels(); note != "" {
		return nil, note, nil
	}
	levels := r.levelNames()
	metrics := []func(row) float64{getF1, getAF1, getArg, getAArg}
	names := []string{"F1", "action F1", "ArgAcc", "action ArgAcc"}
	p, err := groupedBars("Tool selection and arguments by level"+pooledNote, "score", levels, names, func(x, s int) bar {
		rows := r.where(func(y row) bool { return string(y.level) == levels[x] })
		return r.interval("plot/level/"+levels[x]+"/"+names[s], rows, metrics[s])
	})
	if err != nil {
		return nil, "", err
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p, "", nil
}

// plotPareto puts each model at its best level: TC against mean wall time,
// with the Pareto front drawn through the models no other beats on both.
func (r *Report) plotPareto() (figure, string, error) {
	if note := r.noLevels(); note != "" {
		return nil, note, nil
	}
	t := r.Table("best_level")
	var pts, front plotter.XYs
	var labels []string
	skipped := 0
	for _, row := range t.Rows {
		pt := plotter.XY{X: row[3].(float64), Y: row[2].(float64)}
		if !finite(pt.X) || !finite(pt.Y) {
			skipped++ // sums past float64's range; the table still shows them
			continue
		}
		pts = append(pts, pt)
		labels = append(labels, row[0].(string)+" "+row[1].(string))
		if row[6].(bool) {
			front = append(front, pt)
		}
	}
	if len(pts) == 0 {
		return nil, "no trials to plot", nil
	}
	p := plot.New()
	p.Title.Text = "Best-level task completion against latency (Pareto front)"
	p.Y.Label.Text = "TC at the model's best level"
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, "", err
	}
	slices.SortFunc(front, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
	l, err := plotter.NewLine(front)
	if err != nil {
		return nil, "", err
	}
	l.Color = color.RGBA{R: 200, A: 255}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return nil, "", err
	}
	p.Add(s, l, lb)
	p.Legend.Add("Pareto front", l)
	xs := make([]float64, len(pts))
	for i, pt := range pts {
		xs[i] = pt.X
	}
	p.X.Label.Text = wallAxis(&p.X, xs)
	if skipped > 0 {
		p.X.Label.Text += fmt.Sprintf("; %d models with no finite wall time or TC left out", skipped)
	}
	p.Y.Min, p.Y.Max = 0, 1.05
	return p, "", nil
}

// wallAxis scales an axis of mean wall times and returns its label. The
// axis is logarithmic when every time is positive and they span a decade,
// where a log axis shows what a linear one squashes; otherwise it is
// linear from zero. A log axis cannot hold zero, and gonum widens a range
// of one value by ±1, below zero for any time under a second: the built-in
// agents, whose trials take milliseconds, made that panic.
func wallAxis(ax *plot.Axis, walls []float64) string {
	lo, hi := slices.Min(walls), slices.Max(walls)
	if lo > 0 && hi >= 10*lo {
		ax.Scale = plot.LogScale{}
		ax.Tick.Marker = plot.LogTicks{Prec: -1}
		ax.Min, ax.Max = lo/1.5, hi*1.5
		return "mean wall time per trial (s, log scale)"
	}
	ax.Min, ax.Max = math.Min(0, lo), hi*1.1
	if !(ax.Max > ax.Min) || !finite(ax.Max-ax.Min) {
		ax.Max = ax.Min + 1 // every time zero, or a range past float64's
	}
	return "mean wall time per trial (s)"
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// plotPower shows mean GPU power (energy / wall time) by model and level;
// a ratio of sums, it has no bootstrap interval.
func (r *Report) plotPower() (figure, string, error) {
	if !slices.ContainsFunc(r.rows, func(x row) bool { return !math.IsNaN(x.energy) }) {
		return nil, "GPU power by model and level: no trial has energy (no meter ran); run with meter: auto on a GPU node", nil
	}
	levels := r.levelNames()
	p, err := groupedBars("Mean GPU power by model and level", "W", r.Models, levels, func(x, s int) bar {
		return noCI(r.cell(r.Models[x], levels[s], func(rows []row) float64 { return efficiency(rows)[2].(float64) }))
	})
	if err != nil {
		return nil, "", err
	}
	return p, "", nil
}

// plotUtil shows mean GPU utilisation by model and level, with intervals.
func (r *Report) plotUtil() (figure, string, error) {
	if !slices.ContainsFunc(r.rows, func(x row) bool { return !math.IsNaN(x.util) }) {
		return nil, "GPU utilisation by model and level: no trial has GPU telemetry (no NVML meter ran)", nil
	}
	levels := r.levelNames()
	util := func(y row) float64 { return y.util }
	p, err := groupedBars("Mean GPU utilisation by model and level (95% intervals)", "%", r.Models, levels, func(x, s int) bar {
		rows := r.where(func(y row) bool { return y.model == r.Models[x] && string(y.level) == levels[s] })
		if len(col(rows, util)) == 0 {
			return noCI(math.NaN())
		}
		return r.interval("plot/util/"+r.Models[x]+"/"+levels[s], rows, util)
	})
	if err != nil {
		return nil, "", err
	}
	p.Y.Min, p.Y.Max = 0, 100
	return p, "", nil
}

// grid is a model × domain TC matrix for the heat map.
type grid struct {
	z      [][]float64 // [domain][model]
	nx, ny int
}

func (g grid) Dims() (int, int)   { return g.nx, g.ny }
func (g grid) Z(c, r int) float64 { return g.z[r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() float64       { return 0 }
func (g grid) Max() float64       { return 1 }

// heatPalette colours TC from red (0) through a light middle to green
// (1), as granite view's tables do; heatmaps and their colour bars share
// it.
func heatPalette() palette.ColorMap {
	pal := palette.Reverse(moreland.SmoothGreenRed())
	pal.SetMin(0)
	pal.SetMax(1)
	return pal
}

// colorBarW is the width of a heat map's colour bar, with its axis and
// a margin right of it.
const (
	colorBarW      = 1.0 * vg.Inch
	colorBarMargin = 0.2 * vg.Inch
)

// heatFigure is a heat map with its colour bar to its right.
type heatFigure struct {
	main, bar *plot.Plot
	borders   cellBorders
	pal       palette.ColorMap
}

// Draw implements figure: the map takes the width the colour bar leaves,
// and the bar spans the height of the map's cells.
func (f heatFigure) Draw(c draw.Canvas) {
	left := c
	left.Max.X -= colorBarW
	f.main.Draw(left)
	cells := f.main.DataCanvas(left)
	right := c
	right.Min.X, right.Max.X = left.Max.X, c.Max.X-colorBarMargin
	right.Min.Y, right.Max.Y = cells.Min.Y-f.bar.X.Padding, cells.Max.Y+f.bar.Y.Padding
	f.bar.Draw(right)
}

// cellBorders outlines the cells of an nx × ny heat map, so that
// neighbours of close colours stay apart.
type cellBorders struct {
	nx, ny int
	style  draw.LineStyle
}

// Plot implements plot.Plotter.
func (b cellBorders) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1, y0, y1 := trX(-0.5), trX(float64(b.nx)-0.5), trY(-0.5), trY(float64(b.ny)-0.5)
	for i := 0; i <= b.nx; i++ {
		x := trX(float64(i) - 0.5)
		c.StrokeLine2(b.style, x, y0, x, y1)
	}
	for j := 0; j <= b.ny; j++ {
		y := trY(float64(j) - 0.5)
		c.StrokeLine2(b.style, x0, y, x1, y)
	}
}

func (r *Report) plotHeatmap() (figure, string, error) {
	ds := r.domains()
	if len(ds) == 0 || len(r.Models) == 0 {
		return nil, "no trials to plot", nil
	}
	g := grid{nx: len(r.Models), ny: len(ds)}
	for _, d := range ds {
		line := make([]float64, len(r.Models))
		for i, m := range r.Models {
			line[i] = stats.Mean(col(r.where(func(x row) bool { return x.model == m && x.domain == d }), getTC))
		}
		g.z = append(g.z, line)
	}
	pal := heatPalette()
	h := plotter.NewHeatMap(g, pal.Palette(64))
	h.NaN = color.Gray{Y: 235}
	p := plot.New()
	p.Title.Text = "Task completion by model and domain (levels pooled)"
	borders := cellBorders{nx: g.nx, ny: g.ny, style: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(0.6)}}
	p.Add(h, borders)
	p.NominalX(r.Models...)
	p.NominalY(ds...)
	var lbl plotter.XYLabels
	for y, d := range g.z {
		for x, v := range d {
			lbl.XYs = append(lbl.XYs, plotter.XY{X: float64(x), Y: float64(y)})
			lbl.Labels = append(lbl.Labels, mdCell(v))
		}
	}
	labels, err := plotter.NewLabels(lbl)
	if err != nil {
		return nil, "", err
	}
	for i := range labels.TextStyle {
		// Black reads on every colour of the palette, its saturated ends
		// included.
		labels.TextStyle[i].Color = color.Black
		labels.TextStyle[i].XAlign = -0.5
		labels.TextStyle[i].YAlign = -0.5
	}
	p.Add(labels)
	bar := plot.New()
	bar.HideX()
	bar.Y.Label.Text = "TC"
	bar.Add(&plotter.ColorBar{ColorMap: pal, Vertical: true})
	return heatFigure{main: p, bar: bar, borders: borders, pal: pal}, "", nil
}
