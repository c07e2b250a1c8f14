package report

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// partialReport is the report of a partial paper grid (a third of the
// trials), small enough to build in every plot test.
func partialReport(t *testing.T) *Report {
	t.Helper()
	res, err := Load(synthetic(t, func(i int) bool { return i%3 == 0 }))
	if err != nil {
		t.Fatal(err)
	}
	return Build(res, 0)
}

// render draws a figure as the PNG would be drawn, and returns the image
// and a function from a point of the canvas to its pixel.
func render(t *testing.T, fig figure) (image.Image, func(vg.Point) image.Point) {
	t.Helper()
	c := vgimg.NewWith(vgimg.UseWH(plotW, plotH), vgimg.UseDPI(96))
	fig.Draw(draw.New(c))
	img := c.Image()
	h := img.Bounds().Dy()
	return img, func(p vg.Point) image.Point {
		return image.Point{X: int(math.Round(p.X.Dots(96))), Y: h - 1 - int(math.Round(p.Y.Dots(96)))}
	}
}

// dataTransforms are the transforms of a plot drawn over the whole of a
// canvas the size of the PNG.
func dataTransforms(p *plot.Plot, width vg.Length) (x, y func(float64) vg.Length) {
	c := vgimg.NewWith(vgimg.UseWH(width, plotH), vgimg.UseDPI(96))
	da := p.DataCanvas(draw.New(c))
	return p.Transforms(&da)
}

func nearColor(c color.Color, want color.Color, tol int) bool {
	r1, g1, b1, _ := c.RGBA()
	r2, g2, b2, _ := want.RGBA()
	d := func(a, b uint32) int { return int(a>>8) - int(b>>8) }
	return abs(d(r1, r2)) <= tol && abs(d(g1, g2)) <= tol && abs(d(b1, b2)) <= tol
}

func abs(x int) int { return max(x, -x) }

// anyNear reports whether a pixel within r of p (antialiasing blends a
// thin line into its neighbours) has the colour want.
func anyNear(img image.Image, p image.Point, r int, want color.Color, tol int) bool {
	for dx := -r; dx <= r; dx++ {
		for dy := -r; dy <= r; dy++ {
			if nearColor(img.At(p.X+dx, p.Y+dy), want, tol) {
				return true
			}
		}
	}
	return false
}

// TestPlotsShowTheTablesIntervals: the TC bars are the model_level
// table's TC with its 95% interval as error bars, and the pooled metrics'
// bars carry their bootstrap intervals and say in the title that they
// pool every model.
func TestPlotsShowTheTablesIntervals(t *testing.T) {
	r := partialReport(t)
	fig, _, err := r.plotTCModelLevel()
	if err != nil {
		t.Fatal(err)
	}
	b := fig.(bars)
	ml := r.Table("model_level")
	checked := 0
	for _, row := range ml.Rows {
		x, s := -1, -1
		for i, m := range r.Models {
			if m == row[0] {
				x = i
			}
		}
		for i, l := range r.levelNames() {
			if l == row[1] {
				s = i
			}
		}
		got := b.marks[s].bars[x]
		if want := (bar{row[ml.column("tc")].(float64), row[ml.column("tc_lo")].(float64), row[ml.column("tc_hi")].(float64)}); got != want {
			t.Errorf("%s at %s: bar %+v, the table's %+v", row[0], row[1], got, want)
		}
		if !(got.lo < got.hi) {
			t.Errorf("%s at %s: an empty interval %+v", row[0], row[1], got)
		}
		checked++
	}
	if checked != len(r.Models)*len(r.Levels) {
		t.Errorf("checked %d bars", checked)
	}
	if strings.Contains(b.Title.Text, "pooled") {
		t.Errorf("a plot by model says it pools models: %q", b.Title.Text)
	}
	fig, _, err = r.plotMetricsByLevel()
	if err != nil {
		t.Fatal(err)
	}
	pooled := fig.(bars)
	if !strings.HasSuffix(pooled.Title.Text, "(all models pooled)") {
		t.Errorf("the metrics by level pool every model; the title says %q", pooled.Title.Text)
	}
	for _, m := range pooled.marks {
		for _, x := range m.bars {
			if !(x.lo <= x.v && x.v <= x.hi && x.lo < x.hi) {
				t.Errorf("metric bar %+v has no interval around it", x)
			}
		}
	}
}

// TestZeroBarsShow: a bar of 0 is drawn as a stub of its series' colour
// just above the axis, a bar not available is not drawn at all, and an
// interval is a dark line above its bar.
func TestZeroBarsShow(t *testing.T) {
	b, err := groupedBars("zero", "TC", []string{"zero", "missing", "half"}, []string{"s"}, func(x, _ int) bar {
		return []bar{{0, 0, 0.2}, noCI(math.NaN()), {0.5, 0.3, 0.7}}[x]
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Y.Min, b.Y.Max = 0, 1
	img, px := render(t, b)
	trX, trY := dataTransforms(b.Plot, plotW)
	m := b.marks[0]
	at := func(x int, y vg.Length) image.Point { return px(vg.Point{X: trX(float64(x)) + m.offset, Y: y}) }
	stub := trY(0) + stubHeight/2
	if !anyNear(img, at(0, stub), 1, plotutil.Color(0), 30) {
		t.Errorf("the bar of 0 has no stub of the series colour %v at its place", plotutil.Color(0))
	}
	if anyNear(img, at(1, stub), 2, color.Black, 200) {
		t.Error("a bar not available is drawn")
	}
	if !anyNear(img, at(2, trY(0.65)), 1, color.Black, 90) {
		t.Error("no error bar above the bar of 0.5")
	}
	if anyNear(img, at(2, trY(0.8)), 2, color.Black, 200) {
		t.Error("the error bar reaches past its interval")
	}
}

// TestHeatMapInColour: the model × domain heat map runs from red (TC 0)
// to green (1), draws a border around each cell and a colour bar beside
// the map.
func TestHeatMapInColour(t *testing.T) {
	r := partialReport(t)
	fig, _, err := r.plotHeatmap()
	if err != nil {
		t.Fatal(err)
	}
	h := fig.(heatFigure)
	red, _ := h.pal.At(0)
	green, _ := h.pal.At(1)
	if r, g, _, _ := red.RGBA(); r>>8 < g>>8+60 {
		t.Errorf("TC 0 is not red: %v", red)
	}
	if r, g, _, _ := green.RGBA(); g>>8 < r>>8+60 {
		t.Errorf("TC 1 is not green: %v", green)
	}
	if h.borders.nx != len(r.Models) || h.borders.ny != len(r.domains()) {
		t.Errorf("borders around %d × %d cells, the map has %d × %d", h.borders.nx, h.borders.ny, len(r.Models), len(r.domains()))
	}
	if !strings.Contains(h.main.Title.Text, "levels pooled") {
		t.Errorf("the heat map pools levels; its title says %q", h.main.Title.Text)
	}
	img, px := render(t, h)
	trX, trY := dataTransforms(h.main, plotW-colorBarW)
	// Between the first two cells of the first row, off the labels: the
	// border.
	if !anyNear(img, px(vg.Point{X: trX(0.5), Y: trY(0.3)}), 2, h.borders.style.Color, 50) {
		t.Error("no border between the first two cells")
	}
	if anyNear(img, px(vg.Point{X: trX(0.25), Y: trY(0.3)}), 2, h.borders.style.Color, 50) {
		t.Error("a border inside a cell")
	}
	// The colour bar: the strip right of the map holds red and green.
	var reds, greens int
	for x := img.Bounds().Dx() - int(colorBarW.Dots(96)); x < img.Bounds().Dx(); x++ {
		for y := range img.Bounds().Dy() {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r > g+60 && r > b+60 {
				reds++
			}
			if g > r+60 && g > b+30 {
				greens++
			}
		}
	}
	if reds < 20 || greens < 20 {
		t.Errorf("no colour bar from red to green right of the map (%d red, %d green pixels)", reds, greens)
	}
}
