package report

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// shownIface is one interface of the synthetic interface run: its name,
// its tools and description characters (what decides its outcomes), and
// whether it breaks the rule those set.
type shownIface struct {
	name    string
	tools   int
	desc    int
	outlier bool
}

// ifaceWorld is 16 interfaces over the four levels. TC succeeds with
// probability 0.9 when an interface has at most 5 tools (it has 2 to 4)
// and 0.1 when it has more (11 to 13), but for the outlier, which has
// few tools and fails anyway; of the interfaces without descriptions one
// in four has many tools, about as of the rest, so that the two do not
// alias. ArgAcc is 0.8 with descriptions and 0.2 without (desc 0). The other
// metrics follow the level or are drawn at random (see ifaceResults), so
// that only tools explains TC and only description characters explain
// ArgAcc.
var ifaceWorld = []shownIface{
	{"L4", 4, 1800, false}, {"L4-terse", 12, 700, false}, {"L4-camel", 4, 2100, false}, {"L4-nodesc", 12, 0, false},
	{"L3", 3, 1500, false}, {"L3-terse", 11, 600, false}, {"L3-nested", 2, 1900, false}, {"L3-nodesc", 4, 0, false},
	{"L2", 3, 1200, false}, {"L2-grouped", 13, 1300, false}, {"L2-oneof", 4, 1100, false}, {"L2-nodesc", 2, 0, false},
	{"L1", 13, 900, false}, {"L1-prefixed", 3, 1000, false}, {"L1-nodesc", 3, 0, false}, {"L1-opaque", 3, 950, true},
}

// succeeds is the rule of ifaceWorld's TC.
func (s shownIface) succeeds() bool { return s.tools <= 5 && !s.outlier }

// ifaceResults is a run of ifaceWorld: 2 models × 3 domains × 8
// scenarios × 3 repetitions of each interface, whose random metrics differ
// by domain (as an interface's do), so that the model has 48 measured
// interfaces of domains to fit, not 16 points for 11 terms. Trials that
// share model, domain, scenario and repetition share their random draws
// (a scenario is as hard through every interface), so that interfaces the
// rule treats alike have the same outcomes and only those it does not
// differ. measured says which interfaces run.json measures.
func ifaceResults(t testing.TB, measured func(shownIface) bool) *Results {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	models := []struct {
		name string
		size float64
	}{{"m:1b", 1e9}, {"m:8b", 8e9}}
	cfg := &results.Config{Name: "ifaces", Repetitions: 3, Granularities: level.Levels}
	man := &results.Manifest{Experiment: "ifaces", Shard: "0/1", Config: cfg, Models: map[string]results.ModelInfo{},
		Interfaces: map[string]results.InterfaceInfo{}}
	for _, m := range models {
		cfg.Models = append(cfg.Models, results.ModelEntry{Name: m.name})
		man.Models[m.name] = results.ModelInfo{Parameters: m.size, Quantization: "Q4_K_M"}
	}
	domains := []string{"d1", "d2", "d3", "d4", "d5"}
	for _, s := range ifaceWorld {
		spec, err := surface.Parse(s.name)
		if err != nil {
			t.Fatal(err)
		}
		if !spec.Plain() {
			cfg.Interfaces = append(cfg.Interfaces, spec)
		}
		// Actions, arguments, enums and depth grow as the level coarsens
		// (lv 1 at L4 to 4 at L1); schema tokens grow with the tools,
		// collinear with them as they are in a real catalogue.
		lv := 1 + slices.Index(level.Levels, spec.Level)
		for _, domain := range domains {
			if !measured(s) {
				continue
			}
			man.Interfaces[results.InterfaceKey(domain, s.name)] = results.InterfaceInfo{Domain: domain, Interface: s.name, Level: spec.Level,
				Transforms: spec.Transforms, Metrics: surface.Metrics{Tools: s.tools, SchemaTokens: 150*s.tools + rng.IntN(1500),
					ArgsMax: lv * (3 + rng.IntN(2)), ArgsMean: 1 + 4*rng.Float64(), ActionsMax: lv*lv + rng.IntN(2), EnumMax: lv*lv + rng.IntN(3),
					Depth: 1 + lv/3, DescriptionChars: s.desc, SchemaOnly: rng.Float64()}}
		}
	}
	var recs []results.Record
	for _, m := range models {
		for i := range 5 * 6 {
			domain, sc := domains[i/6], i%6+1
			for rep := 1; rep <= 3; rep++ {
				u, v := rng.Float64(), rng.Float64()
				for _, s := range ifaceWorld {
					spec, _ := surface.Parse(s.name)
					p := 0.1
					if s.succeeds() {
						p = 0.9
					}
					tc := b2f(u < p)
					arg := 0.8
					if s.desc == 0 {
						arg = 0.2
					}
					arg = math.Max(0, math.Min(1, arg+0.3*(v-0.5)))
					scen := fmt.Sprintf("%s-s%02d", domain, sc)
					rec := results.Record{TrialID: results.TrialID(m.name, scen, s.name, rep), Index: len(recs), Model: m.name, Domain: domain,
						Level: spec.Level, Scenario: scen, Difficulty: "easy", Repetition: rep, StopReason: "answer",
						Metrics: &results.Metrics{TC: tc, TCStrict: tc, ArgAcc: arg, ActionArgAcc: arg, WallS: 1}}
					if !spec.Plain() {
						rec.Interface = s.name
					}
					recs = append(recs, rec)
				}
			}
		}
	}
	man.Trials = len(recs)
	return &Results{Dir: t.TempDir(), Manifest: man, Records: recs}
}

func all(shownIface) bool { return true }

// cell is a table's value in the row whose first column is key.
func cell(t *testing.T, tb *Table, key, column string) any {
	t.Helper()
	j := slices.Index(tb.Header, column)
	if j < 0 {
		t.Fatalf("%s has no column %s: %v", tb.Name, column, tb.Header)
	}
	for _, r := range tb.Rows {
		if r[0] == key {
			return r[j]
		}
	}
	t.Fatalf("%s has no row %s", tb.Name, key)
	return nil
}

// TestByInterfaceListsEveryInterface: one row per interface, by level
// then the config's order, every trial counted once, the baseline L4.
func TestByInterfaceListsEveryInterface(t *testing.T) {
	r := Build(ifaceResults(t, all), 0)
	if r.Covered != 16*180 {
		t.Fatalf("covered %d trials, want %d (notes %q)", r.Covered, 16*180, r.Notes)
	}
	tb := r.Table("by_interface")
	if tb == nil {
		t.Fatal("no by_interface table")
	}
	var got []string
	for _, row := range tb.Rows {
		got = append(got, row[0].(string))
		if row[2] != 180 {
			t.Errorf("%s: %v trials, want 180", row[0], row[2])
		}
	}
	var want []string
	for _, s := range ifaceWorld {
		want = append(want, s.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("interfaces %v, want %v", got, want)
	}
	if r.Baseline != "L4" || cell(t, tb, "L4", "sig") != "ref" {
		t.Errorf("baseline %q (sig %v), want L4 as ref", r.Baseline, cell(t, tb, "L4", "sig"))
	}
	if got := cell(t, tb, "L2-grouped", "tools"); got != 13.0 {
		t.Errorf("L2-grouped shows %v tools, want 13", got)
	}
}

// TestByInterfaceFlagsWhatDiffers: the paired tests flag exactly the
// interfaces whose rule differs from the baseline's: on TC the many-tool
// ones and the outlier, on ArgAcc the ones without descriptions.
func TestByInterfaceFlagsWhatDiffers(t *testing.T) {
	r := Build(ifaceResults(t, all), 0)
	tb := r.Table("by_interface")
	for _, s := range ifaceWorld {
		if s.name == "L4" {
			continue
		}
		for _, c := range []struct {
			metric  string
			differs bool
		}{{"tc", !s.succeeds()}, {"arg_acc", s.desc == 0}} {
			p := cell(t, tb, s.name, "p_"+c.metric).(float64)
			if (p < 0.05) != c.differs {
				t.Errorf("%s %s: adjusted p %.4f, want it below 0.05 %v", s.name, c.metric, p, c.differs)
			}
		}
		if sig := cell(t, tb, s.name, "sig").(string); (sig != "") != !s.succeeds() {
			t.Errorf("%s: sig %q, want stars %v", s.name, sig, !s.succeeds())
		}
	}
}

// TestComplexityRanksTheCause: the complexity model of TC ranks tools
// first, with a negative effect and an interval that excludes 0; that of
// ArgAcc ranks description characters first, with a positive one; the
// metric that never varies is left out with a note.
func TestComplexityRanksTheCause(t *testing.T) {
	r := Build(ifaceResults(t, all), 0)
	for _, c := range []struct {
		table, term string
		sign        float64
	}{{"complexity", "tools", -1}, {"complexity_argacc", "description_chars", 1}} {
		tb := r.Table(c.table)
		if tb == nil || len(tb.Rows) == 0 {
			t.Fatalf("%s: no rows (%v)", c.table, tb)
		}
		first := tb.Rows[0]
		if first[0] != c.term || first[1] != 1 {
			t.Errorf("%s: rank 1 is %v (%v), want %s:\n%v", c.table, first[0], first[1], c.term, tb.Rows)
		}
		beta, lo, hi := cell(t, tb, c.term, "beta").(float64), cell(t, tb, c.term, "beta_lo").(float64), cell(t, tb, c.term, "beta_hi").(float64)
		if beta*c.sign <= 0 || lo*c.sign <= 0 || hi*c.sign <= 0 {
			t.Errorf("%s: %s beta %.3f [%.3f, %.3f], want sign %v and an interval excluding 0", c.table, c.term, beta, lo, hi, c.sign)
		}
		if or := cell(t, tb, c.term, "odds_ratio").(float64); math.Abs(or-math.Exp(beta)) > 1e-12 {
			t.Errorf("%s: odds ratio %v, want e^beta %v", c.table, or, math.Exp(beta))
		}
		for i, row := range tb.Rows[:len(tb.Rows)-1] {
			if row[1] != i+1 || i > 0 && math.Abs(row[3].(float64)) > math.Abs(tb.Rows[i-1][3].(float64)) {
				t.Errorf("%s: row %d (%v) out of rank order", c.table, i, row)
			}
		}
		if last := tb.Rows[len(tb.Rows)-1]; last[0] != "intercept" {
			t.Errorf("%s: last row %v, want the intercept", c.table, last)
		}
		if !strings.Contains(tb.Note, "dropped_keywords") {
			t.Errorf("%s: note %q does not say dropped_keywords was left out", c.table, tb.Note)
		}
		if slices.ContainsFunc(tb.Rows, func(row []any) bool { return row[0] == "dropped_keywords" }) {
			t.Errorf("%s: dropped_keywords, constant, is a term", c.table)
		}
		if !slices.ContainsFunc(tb.Rows, func(row []any) bool { return row[0] == sizeTerm }) {
			t.Errorf("%s: no %s term, though every model has a size", c.table, sizeTerm)
		}
	}
}

// without is res without an interface's trials and measurements.
func without(res *Results, name string) *Results {
	out := *res
	man := *res.Manifest
	cfg := *man.Config
	cfg.Interfaces = slices.DeleteFunc(slices.Clone(cfg.Interfaces), func(s surface.Spec) bool { return s.Name == name })
	man.Config = &cfg
	man.Interfaces = maps.Clone(man.Interfaces)
	maps.DeleteFunc(man.Interfaces, func(_ string, info results.InterfaceInfo) bool { return info.Interface == name })
	out.Manifest = &man
	out.Records = slices.DeleteFunc(slices.Clone(res.Records), func(rec results.Record) bool { return rec.InterfaceName() == name })
	man.Trials = len(out.Records)
	return &out
}

// TestInterfaceFitHoldsOut: with an interface held out, the model still
// predicts the TC of interfaces that follow the rule; the outlier's it
// misses, which is the error the table is there to show. The rule's
// interfaces are checked in a world without the outlier: with it, the
// model blames the outlier's failure on what it shares with the other
// interfaces of its level, and errs on them too.
func TestInterfaceFitHoldsOut(t *testing.T) {
	res := ifaceResults(t, all)
	var outlier string
	for _, s := range ifaceWorld {
		if s.outlier {
			outlier = s.name
		}
	}
	check := func(r *Report, s shownIface) {
		t.Helper()
		tb := r.Table("interface_fit")
		obs, fit := cell(t, tb, s.name, "tc").(float64), cell(t, tb, s.name, "predicted_tc").(float64)
		ho, e := cell(t, tb, s.name, "heldout_tc").(float64), cell(t, tb, s.name, "heldout_error").(float64)
		if math.Abs(e-(ho-obs)) > 1e-12 {
			t.Errorf("%s: error %v is not held-out %v minus observed %v", s.name, e, ho, obs)
		}
		switch {
		case s.outlier && math.Abs(e) < 0.4:
			t.Errorf("%s breaks the rule, yet its held-out error is only %.3f", s.name, e)
		case !s.outlier && math.Abs(e) > 0.2:
			t.Errorf("%s follows the rule, yet its held-out TC %.3f is %.3f from the observed %.3f", s.name, ho, e, obs)
		case !s.outlier && math.Abs(fit-obs) > 0.15:
			t.Errorf("%s: fitted TC %.3f, observed %.3f", s.name, fit, obs)
		}
	}
	r := Build(res, 0)
	if n := len(r.Table("interface_fit").Rows); n != len(ifaceWorld) {
		t.Fatalf("interface_fit has %d rows, want %d (note %q)", n, len(ifaceWorld), r.Table("interface_fit").Note)
	}
	check(r, ifaceWorld[slices.IndexFunc(ifaceWorld, func(s shownIface) bool { return s.outlier })])
	r = Build(without(res, outlier), 0)
	if n := len(r.Table("interface_fit").Rows); n != len(ifaceWorld)-1 {
		t.Fatalf("interface_fit without %s has %d rows, want %d", outlier, n, len(ifaceWorld)-1)
	}
	for _, s := range ifaceWorld {
		if !s.outlier {
			check(r, s)
		}
	}
}

// TestInterfaceTablesReproduce: the same seed gives the same tables; the
// seed reaches the bootstrap.
func TestInterfaceTablesReproduce(t *testing.T) {
	res := ifaceResults(t, all)
	a, b, c := Build(res, 5), Build(res, 5), Build(res, 6)
	for _, name := range []string{"by_interface", "complexity", "complexity_argacc", "interface_fit"} {
		ta, tb, tc := a.Table(name), b.Table(name), c.Table(name)
		if fmt.Sprint(ta.Rows) != fmt.Sprint(tb.Rows) || ta.Note != tb.Note {
			t.Errorf("%s differs between two reports of one seed", name)
		}
		if name != "interface_fit" && fmt.Sprint(ta.Rows) == fmt.Sprint(tc.Rows) {
			t.Errorf("%s is the same under another seed: the seed does not reach its bootstrap", name)
		}
	}
}

// TestInterfaceTablesSkipped: without interfaces there are no interface
// tables; with too few measured ones the model tables say why they are
// empty.
func TestInterfaceTablesSkipped(t *testing.T) {
	one := func(s shownIface) bool { return s.name == "L4-terse" }
	two := func(s shownIface) bool { return s.name == "L4-terse" || s.name == "L3" }
	cases := []struct {
		name     string
		measured func(shownIface) bool
		empty    map[string]string // table: what its note says
	}{
		{"none measured", func(shownIface) bool { return false }, map[string]string{
			"complexity": "measures no interface", "complexity_argacc": "measures no interface", "interface_fit": "measures no interface"}},
		{"one measured", one, map[string]string{
			"complexity": "at least 2 interfaces", "complexity_argacc": "at least 2 interfaces", "interface_fit": "at least 2 interfaces"}},
		// Two measured interfaces leave the model estimable, but not 3
		// to hold one out.
		{"two measured", two, map[string]string{"interface_fit": "at least 3 interfaces"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Build(ifaceResults(t, c.measured), 0)
			if tb := r.Table("by_interface"); tb == nil || len(tb.Rows) != len(ifaceWorld) {
				t.Fatalf("by_interface: %v, want a row per interface", tb)
			}
			for name, why := range c.empty {
				tb := r.Table(name)
				if len(tb.Rows) != 0 || !strings.Contains(tb.Note, why) {
					t.Errorf("%s: %d rows, note %q; want none and a note saying %q", name, len(tb.Rows), tb.Note, why)
				}
				if !slices.Contains(r.Notes, tb.Title+": "+tb.Note) {
					t.Errorf("%s's note is not among the report's notes %q", name, r.Notes)
				}
			}
		})
	}
	plain := ifaceResults(t, func(shownIface) bool { return false })
	plain.Manifest.Config.Interfaces = nil
	plain.Records = slices.DeleteFunc(plain.Records, func(rec results.Record) bool { return rec.Interface != "" })
	r := BuildWith(plain, Options{Baseline: "L3"})
	for _, name := range []string{"by_interface", "complexity", "complexity_argacc", "interface_fit"} {
		if r.Table(name) != nil {
			t.Errorf("%s made for a run of levels as written", name)
		}
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "baseline L3 not used") }) {
		t.Errorf("notes %q do not say the baseline went unused", r.Notes)
	}
}

// TestByInterfaceBaseline: another baseline is tested against; one no
// trial played is said, and leaves the tests empty.
func TestByInterfaceBaseline(t *testing.T) {
	res := ifaceResults(t, all)
	r := BuildWith(res, Options{Baseline: "L1"})
	tb := r.Table("by_interface")
	if cell(t, tb, "L1", "sig") != "ref" || !math.IsNaN(cell(t, tb, "L1", "p_tc").(float64)) {
		t.Errorf("L1 as baseline: sig %v, p %v", cell(t, tb, "L1", "sig"), cell(t, tb, "L1", "p_tc"))
	}
	// L1 has many tools: every interface the rule passes differs from it.
	if p := cell(t, tb, "L4", "p_tc").(float64); !(p < 0.05) {
		t.Errorf("L4 against L1: p %v, want below 0.05", p)
	}
	r = BuildWith(res, Options{Baseline: "L9-none"})
	tb = r.Table("by_interface")
	if !math.IsNaN(cell(t, tb, "L4", "p_tc").(float64)) {
		t.Errorf("tests against a baseline no trial played: p %v", cell(t, tb, "L4", "p_tc"))
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "baseline L9-none has no trials") }) {
		t.Errorf("notes %q do not say the baseline has no trials", r.Notes)
	}
}

// TestInterfaceTablesWritten: the interface tables reach report.md and
// their CSVs through the report's one writer.
func TestInterfaceTablesWritten(t *testing.T) {
	r := Build(ifaceResults(t, all), 0)
	out := t.TempDir()
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"by_interface", "complexity", "complexity_argacc", "interface_fit"} {
		rows := readCSV(t, filepath.Join(out, name+".csv"))
		if len(rows) != len(r.Table(name).Rows) {
			t.Errorf("%s.csv has %d rows, want %d", name, len(rows), len(r.Table(name).Rows))
		}
		if !strings.Contains(string(md), "CSV: `"+name+".csv`") {
			t.Errorf("report.md lacks the %s table", name)
		}
	}
	if !strings.Contains(string(md), "are tested against L4 as levels are") {
		t.Error("report.md does not say how interfaces are tested")
	}
	if !strings.Contains(string(md), "Note: mean absolute held-out error") {
		t.Error("report.md lacks interface_fit's note")
	}
}

// TestRidgeLogisticRecovers: on cells drawn from a known model the fit
// comes back near its coefficients, and two copies of one predictor
// share its effect instead of failing.
func TestRidgeLogisticRecovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	truth := []float64{-0.5, 1.2, -0.7}
	var X, Xdup [][]float64
	var n, s []float64
	for range 400 {
		x := []float64{1, rng.NormFloat64(), rng.NormFloat64()}
		z := truth[0] + truth[1]*x[1] + truth[2]*x[2]
		X = append(X, x)
		Xdup = append(Xdup, []float64{1, x[1], x[1], x[2]})
		n = append(n, 50)
		s = append(s, 50*sigmoid(z))
	}
	beta, err := RidgeLogistic(X, n, s, RidgeLambda, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range truth {
		if math.Abs(beta[j]-truth[j]) > 0.02 {
			t.Errorf("beta[%d] = %.4f, want %.4f", j, beta[j], truth[j])
		}
	}
	dup, err := RidgeLogistic(Xdup, n, s, RidgeLambda, nil)
	if err != nil {
		t.Fatalf("collinear copies: %v", err)
	}
	if math.Abs(dup[1]-dup[2]) > 1e-6 || math.Abs(dup[1]+dup[2]-truth[1]) > 0.02 {
		t.Errorf("copies got %.4f and %.4f, want an even share of %.4f", dup[1], dup[2], truth[1])
	}
}

// TestInterfaceTrialsPlanned: a trial of an interface the config plays is
// planned; one of an interface it does not play, or whose id names
// another, is not.
func TestInterfaceTrialsPlanned(t *testing.T) {
	res := ifaceResults(t, all)
	good := res.Records[1]
	if good.Interface == "" {
		t.Fatalf("record %s plays no transformed interface", good.TrialID)
	}
	for _, c := range []struct {
		name string
		edit func(*results.Record)
		why  string
	}{
		{"as planned", func(*results.Record) {}, ""},
		{"interface not in the config", func(r *results.Record) {
			r.Interface = "L4-opaque"
			r.TrialID = results.TrialID(r.Model, r.Scenario, r.Interface, r.Repetition)
		}, "interface L4-opaque is not in the config"},
		{"id names the level", func(r *results.Record) {
			r.TrialID = results.TrialID(r.Model, r.Scenario, string(r.Level), r.Repetition)
		}, "its id does not name its model, scenario, interface (or level) and repetition"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := good
			c.edit(&rec)
			if got := notPlanned(res.Manifest, &rec); got != c.why {
				t.Errorf("notPlanned = %q, want %q", got, c.why)
			}
		})
	}
}
