package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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

// plots draws every figure as SVG and PNG. It returns the files and notes
// on figures that could not be drawn.
func (r *Report) plots(out string) (files, notes []string, err error) {
	figs := []struct {
		name string
		draw func() (*plot.Plot, string, error)
	}{
		{"tc_model_level", r.plotTCModelLevel},
		{"pareto_tc_wall", r.plotPareto},
		{"power_model_level", r.plotPower},
		{"gpu_util_model_level", r.plotUtil},
		{"tc_model_domain", r.plotHeatmap},
		{"metrics_by_level", r.plotMetricsByLevel},
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
func drawFigure(out, name string, draw func() (*plot.Plot, string, error)) (files []string, note string, err error) {
	defer func() {
		if e := recover(); e != nil {
			files, note, err = nil, fmt.Sprintf("%s could not be drawn: %v", name, e), nil
		}
	}()
	p, note, err := draw()
	if err != nil || p == nil {
		return nil, note, err
	}
	for _, ext := range []string{".svg", ".png"} {
		file := filepath.Join(out, name+ext)
		if err := p.Save(plotW, plotH, file); err != nil {
			return nil, "", err
		}
		files = append(files, file)
	}
	return files, "", nil
}

// groupedBars draws one bar group per x name with one bar per series.
func groupedBars(title, ylabel string, xs []string, series []string, value func(x, s int) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	w := vg.Points(math.Max(4, 40/float64(len(series))))
	for si, s := range series {
		vals := make(plotter.Values, len(xs))
		for xi := range xs {
			v := value(xi, si)
			if !finite(v) {
				v = 0 // not available: no bar (gonum refuses NaN and ±Inf)
			}
			vals[xi] = v
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = plotutil.Color(si)
		b.Offset = w * vg.Length(float64(si)-float64(len(series)-1)/2)
		p.Add(b)
		p.Legend.Add(s, b)
	}
	p.Legend.Top = true
	p.NominalX(xs...)
	return p, nil
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

func (r *Report) plotTCModelLevel() (*plot.Plot, string, error) {
	if note := r.noLevels(); note != "" {
		return nil, note, nil
	}
	levels := r.levelNames()
	p, err := groupedBars("Task completion by model and level", "TC", r.Models, levels, func(x, s int) float64 {
		return r.cell(r.Models[x], levels[s], func(rows []row) float64 { return mean(col(rows, getTC)) })
	})
	if err == nil {
		p.Y.Min, p.Y.Max = 0, 1
	}
	return p, "", err
}

func (r *Report) plotMetricsByLevel() (*plot.Plot, string, error) {
	if note := r.noLevels(); note != "" {
		return nil, note, nil
	}
	levels := r.levelNames()
	metrics := []func(row) float64{getF1, getAF1, getArg, getAArg}
	p, err := groupedBars("Tool selection and arguments by level", "score", levels, []string{"F1", "action F1", "ArgAcc", "action ArgAcc"}, func(x, s int) float64 {
		return mean(col(r.where(func(y row) bool { return string(y.level) == levels[x] }), metrics[s]))
	})
	if err == nil {
		p.Y.Min, p.Y.Max = 0, 1
	}
	return p, "", err
}

// plotPareto puts each model at its best level: TC against mean wall time,
// with the Pareto front drawn through the models no other beats on both.
func (r *Report) plotPareto() (*plot.Plot, string, error) {
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

// plotPower shows mean GPU power (energy / wall time) by model and level.
func (r *Report) plotPower() (*plot.Plot, string, error) {
	if !slices.ContainsFunc(r.rows, func(x row) bool { return !math.IsNaN(x.energy) }) {
		return nil, "GPU power by model and level: no trial has energy (no meter ran); run with meter: auto on a GPU node", nil
	}
	levels := r.levelNames()
	p, err := groupedBars("Mean GPU power by model and level", "W", r.Models, levels, func(x, s int) float64 {
		return r.cell(r.Models[x], levels[s], func(rows []row) float64 { return efficiency(rows)[2].(float64) })
	})
	return p, "", err
}

// plotUtil shows mean GPU utilisation by model and level.
func (r *Report) plotUtil() (*plot.Plot, string, error) {
	if !slices.ContainsFunc(r.rows, func(x row) bool { return !math.IsNaN(x.util) }) {
		return nil, "GPU utilisation by model and level: no trial has GPU telemetry (no NVML meter ran)", nil
	}
	levels := r.levelNames()
	p, err := groupedBars("Mean GPU utilisation by model and level", "%", r.Models, levels, func(x, s int) float64 {
		return r.cell(r.Models[x], levels[s], func(rows []row) float64 { return mean(col(rows, func(y row) float64 { return y.util })) })
	})
	if err == nil {
		p.Y.Min, p.Y.Max = 0, 100
	}
	return p, "", err
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

func (r *Report) plotHeatmap() (*plot.Plot, string, error) {
	ds := r.domains()
	if len(ds) == 0 || len(r.Models) == 0 {
		return nil, "no trials to plot", nil
	}
	g := grid{nx: len(r.Models), ny: len(ds)}
	for _, d := range ds {
		line := make([]float64, len(r.Models))
		for i, m := range r.Models {
			line[i] = mean(col(r.where(func(x row) bool { return x.model == m && x.domain == d }), getTC))
		}
		g.z = append(g.z, line)
	}
	pal := moreland.Kindlmann()
	pal.SetMin(0)
	pal.SetMax(1)
	h := plotter.NewHeatMap(g, pal.Palette(64))
	h.NaN = color.Gray{Y: 220}
	p := plot.New()
	p.Title.Text = "Task completion by model and domain"
	p.Add(h)
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
	i := 0
	for _, d := range g.z {
		for _, v := range d {
			labels.TextStyle[i].Color = color.Black // readable on the light end of the palette
			if v < 0.55 {
				labels.TextStyle[i].Color = color.White
			}
			labels.TextStyle[i].XAlign = -0.5
			labels.TextStyle[i].YAlign = -0.5
			i++
		}
	}
	p.Add(labels)
	return p, "", nil
}
