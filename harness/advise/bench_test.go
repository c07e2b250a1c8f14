package advise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/spectest"
	"github.com/mcpgranite/granite/internal/surface"
)

// benchRaces is how many seeded races each field's figures are over.
const benchRaces = 200

// simField is a simulated field: candidates of one generated domain and
// builtin:sim's true success probability on each of its scenarios.
type simField struct {
	domain string
	cands  []Candidate
	p      map[string][]float64
}

// simFields builds, for every generated domain, a field of 12 candidates
// as a user would race them: the four levels as written (L4 published)
// and, at L4 and at L3, the first four of the catalogue's presets that
// change what builtin:sim's model sees (a name-only preset measures as
// its level does, so under the model it is the level again and only pads
// the field). Each candidate's success probability on a scenario is
// agent.SimTaskSuccess of its measured metrics (harness.MeasureInterface)
// at skill, for the scenario's gold calls at the candidate's level.
func simFields(b *testing.B, skill float64) []simField {
	b.Helper()
	spec := spectest.All(b)
	var fields []simField
	for _, dom := range gen.Domains {
		ifaces, err := serve.DomainInterfaces(dom)
		if err != nil {
			b.Fatal(err)
		}
		sd := spec.Domain(dom.Name)
		if sd == nil || len(sd.Scenarios) == 0 {
			b.Fatalf("domain %s: no scenarios in the spec: regenerate or load the specs", dom.Name)
		}
		plain := map[level.Level]float64{}
		for _, f := range ifaces {
			if f.Spec.Name == string(f.Spec.Level) {
				plain[f.Spec.Level] = agent.SimLoad(harness.MeasureInterface(f))
			}
		}
		var chosen []*surface.Interface
		taken := map[level.Level]int{}
		for _, f := range ifaces {
			lv, isPlain := f.Spec.Level, f.Spec.Name == string(f.Spec.Level)
			changes := math.Abs(agent.SimLoad(harness.MeasureInterface(f))-plain[lv]) > 0.01
			if isPlain || (lv == level.L4 || lv == level.L3) && changes && taken[lv] < 4 {
				chosen = append(chosen, f)
				if !isPlain {
					taken[lv]++
				}
			}
		}
		if len(chosen) != 12 {
			b.Fatalf("domain %s: %d candidates, want 12: the catalogue changed; revisit the field", dom.Name, len(chosen))
		}
		fd := simField{domain: dom.Name, p: map[string][]float64{}}
		for _, f := range chosen {
			m := harness.MeasureInterface(f)
			fd.cands = append(fd.cands, Candidate{Name: f.Spec.Name, Published: f.Spec.Name == string(level.L4)})
			for _, sc := range sd.Scenarios {
				fd.p[f.Spec.Name] = append(fd.p[f.Spec.Name], agent.SimTaskSuccess(m, skill, len(sc.Gold[f.Spec.Level])))
			}
		}
		fields = append(fields, fd)
	}
	return fields
}

// lfcRounds is the rounds a full grid of k candidates on tasks tasks
// needs to pick right in 95% of grids in the least favourable field: one
// candidate Delta better than the k−1 others, all near ½ where a trial's
// variance is largest. It is the grid a user who does not know the field
// must run for the same guarantee (Bechhofer's indifference-zone design
// for binary trials). The probability is exact, not simulated: the best's
// successes X and each other's Y are binomial over the grid's n trials,
// and the grid picks the best when X beats the published other (ties go
// to the published candidate, as the race breaks them) and ties or beats
// the k − 2 others it precedes: Σ_x P(X = x)·P(Y < x)·P(Y ≤ x)^(k−2).
func lfcRounds(race Race, k, tasks int) int {
	hi, lo := 0.5+race.Delta/2, 0.5-race.Delta/2
	for rounds := 1; ; rounds++ {
		n := rounds * tasks
		pmf := func(p float64, x int) float64 {
			lg := func(v int) float64 { r, _ := math.Lgamma(float64(v) + 1); return r }
			return math.Exp(lg(n) - lg(x) - lg(n-x) + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
		}
		pcs, below := 0.0, 0.0 // below is P(Y < x)
		for x := 0; x <= n; x++ {
			at := pmf(lo, x)
			pcs += pmf(hi, x) * below * math.Pow(below+at, float64(k-2))
			below += at
		}
		if pcs >= 0.95 {
			return rounds
		}
	}
}

func TestLFCRounds(t *testing.T) {
	// Two candidates 0.05 apart near ½ on one task: the grid needs n with
	// P(X > Y) ≥ 0.95, about 2·(1.645·0.5/0.05)² = 541 trials each, a bit
	// more for the ties the published candidate takes.
	r := Race{}.Normal()
	if n := lfcRounds(r, 2, 1); n < 541 || n > 620 {
		t.Errorf("lfcRounds(2 candidates, 1 task) = %d, want a little over 541", n)
	}
	// Twelve candidates need more, and nine tasks a round need about a
	// ninth of the rounds.
	twelve := lfcRounds(r, 12, 1)
	if nine := lfcRounds(r, 12, 9); !(twelve > lfcRounds(r, 2, 1)) || math.Abs(float64(nine)-float64(twelve)/9) > 1 {
		t.Errorf("twelve candidates: %d rounds of 1 task, %d of 9", twelve, nine)
	}
}

// rinottH is Rinott's constant h for k candidates, a first stage of n0
// observations each and a probability pstar of a correct selection: the
// root of E_Y[(E_X Φ(h/√(ν(1/X + 1/Y))))^(k−1)] = pstar, X and Y
// independent χ² of ν = n0 − 1 degrees of freedom. The expectations are
// over a fixed sample of 1000 χ² draws (seeded), so h is reproducible and
// good to about a percent, which is enough to size a grid.
func rinottH(k, n0 int, pstar float64) float64 {
	const m = 1000
	rng := rand.New(rand.NewPCG(uint64(k), uint64(n0)))
	nu := n0 - 1
	chi := make([]float64, m)
	for i := range chi {
		for range nu {
			z := rng.NormFloat64()
			chi[i] += z * z
		}
	}
	pcs := func(h float64) float64 {
		total := 0.0
		for _, y := range chi {
			inner := 0.0
			for _, x := range chi {
				inner += 0.5 * math.Erfc(-h/math.Sqrt(float64(nu)*(1/x+1/y))/math.Sqrt2)
			}
			total += math.Pow(inner/m, float64(k-1))
		}
		return total / m
	}
	lo, hi := 0.0, 10.0
	for hi-lo > 2e-3 {
		if mid := (lo + hi) / 2; pcs(mid) < pstar {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// rinottTrials is the mean trials, over runs simulated first stages, of
// Rinott's two-stage grid for a field: each candidate plays every task
// for MinRounds rounds, its sample variance S² over those trials (floored
// as KN floors a pair's) sets its total of max(n0, ⌈(h·S/Delta)²⌉)
// trials, played as whole rounds of every task. It is the fixed grid that
// guarantees the same correct selection as KN without knowing the field
// (variances included); unlike KN it is not paired, so differences in
// the tasks' difficulty count in its variances.
func rinottTrials(race Race, fd simField, h float64, runs int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7121077))
	tasks := len(fd.p[fd.cands[0].Name])
	n0 := race.MinRounds * tasks
	total := 0
	for range runs {
		for _, c := range fd.cands {
			sum, sq := 0.0, 0.0
			for range race.MinRounds {
				for _, pt := range fd.p[c.Name] {
					if rng.Float64() < pt {
						sum++
						sq++
					}
				}
			}
			m := sum / float64(n0)
			s2 := max(knFloor(n0), (sq-float64(n0)*m*m)/float64(n0-1))
			n := max(n0, int(math.Ceil(h*h*s2/(race.Delta*race.Delta))))
			total += tasks * ((n + tasks - 1) / tasks)
		}
	}
	return float64(total) / float64(runs)
}

func TestRinottH(t *testing.T) {
	// With a long first stage the variance is known and h is the
	// equicoordinate point: for two candidates √2·z(0.95) = 2.326.
	if h := rinottH(2, 1000, 0.95); math.Abs(h-2.326) > 0.03 {
		t.Errorf("rinottH(2, 1000, 0.95) = %v, want about 2.326", h)
	}
	// Rinott's table: two candidates, a first stage of 20, 0.95: 2.47.
	if h := rinottH(2, 20, 0.95); math.Abs(h-2.47) > 0.03 {
		t.Errorf("rinottH(2, 20, 0.95) = %v, want about 2.47", h)
	}
	// A short first stage is uncertain of its variance, which costs h.
	if short, long := rinottH(4, 10, 0.95), rinottH(4, 100, 0.95); !(short > long) {
		t.Errorf("rinottH(4, ·, 0.95): %v after 10, %v after 100; want more for the shorter stage", short, long)
	}
}

// BenchmarkAdviseSimulated races simulated fields (simFields) at a few
// skills of builtin:sim, and the least favourable field of the same size
// (one candidate Delta ahead of eleven equal others near ½), with each
// procedure, and reports over every generated domain's field (benchRaces
// seeded races each):
//
//   - right-%: the share of races whose pick is right (within Delta of the
//     best true mean), the mean over domains; 95 or more is required.
//     worst-right-% is the worst domain's, which the simulation's own
//     noise (±1.5 points over 200 races) puts a little lower.
//
//   - trial-share: the race's mean trials over the trials of the full
//     grid that guarantees the same error rate without knowing the field
//     (lfc-grid-trials: every candidate on every task for the rounds of
//     lfcRounds, 95% right in the least favourable field), the mean over
//     domains; at most 0.333 is required. This is the grid a user runs
//     instead of racing.
//
//   - rinott-trial-share: the race's mean trials over rinott-grid-trials,
//     Rinott's two-stage grid (rinottTrials) for the same guarantee,
//     which spends less than the lfc grid where trials vary less than at
//     ½ because its first stage measures how much they vary.
//
//   - field-trial-share: the race's mean trials over field-grid-trials,
//     the grid sized to this field's own success probabilities (the
//     fewest rounds at which a full grid picks right in 95% of simulated
//     grids, a search over PlanGrid). Only a user who already knew the
//     field could size a grid so small, so this is a floor no real grid
//     reaches; it says how much of racing's saving is the field being
//     easy: a field whose best few are all within Delta of each other
//     needs few trials to pick one of them, but a race that guarantees
//     its pick in every field cannot know that it is such a field.
//
//   - capped-%: the share of races that reached MaxRounds before the
//     procedure ended by itself (KN's cap is DefaultKNMaxRounds; sign's
//     MaxRounds is the lfc grid's rounds, the repetitions a user would
//     configure).
//
//     go test ./harness/advise -run '^$' -bench AdviseSimulated -benchtime 1x -v
func BenchmarkAdviseSimulated(b *testing.B) {
	lfcs, hs := map[[2]int]int{}, map[[2]int]float64{}
	type set struct {
		name   string
		fields []simField
	}
	var sets []set
	for _, skill := range []float64{1.5, agent.SimDefaultSkill, 5} {
		sets = append(sets, set{fmt.Sprintf("skill=%g", skill), simFields(b, skill)})
	}
	// The least favourable field itself, of the simulated fields' size:
	// where racing saves least and a wrong pick is likeliest.
	k, tasks := len(sets[0].fields[0].cands), len(sets[0].fields[0].p[sets[0].fields[0].cands[0].Name])
	worst := simField{domain: "least favourable"}
	worst.cands, worst.p = field(tasks, append([]float64{0.5 + DefaultDelta/2 + 1e-9}, slices.Repeat([]float64{0.5 - DefaultDelta/2}, k-1)...)...)
	sets = append(sets, set{"least-favourable", []simField{worst}})
	for _, st := range sets {
		fields := st.fields
		for _, proc := range []string{ProcedureKN, ProcedureSign} {
			b.Run(fmt.Sprintf("%s/procedure=%s", st.name, proc), func(b *testing.B) {
				base := Race{Procedure: proc}.Normal()
				for range b.N {
					var fig figures
					for i, fd := range fields {
						seed := uint64(i + 1)
						k, tasks := len(fd.cands), len(fd.p[fd.cands[0].Name])
						lfc, ok := lfcs[[2]int{k, tasks}]
						if !ok {
							lfc = lfcRounds(base, k, tasks)
							lfcs[[2]int{k, tasks}] = lfc
						}
						race := base
						if proc == ProcedureSign {
							race.MaxRounds = lfc
						}
						gridRounds, _ := search(race, 0.95, func(r Race) PlanResult { return PlanGrid(r, fd.cands, fd.p, PlanRuns, seed) })
						res := Plan(race, fd.cands, fd.p, benchRaces, seed+1000)
						kn := Race{}.Normal()
						h, ok := hs[[2]int{k, tasks}]
						if !ok {
							h = rinottH(k, kn.MinRounds*tasks, 1-kn.Alpha)
							hs[[2]int{k, tasks}] = h
						}
						rinott := rinottTrials(kn, fd, h, benchRaces, seed+2000)
						lfcGrid, fieldGrid := k*tasks*lfc, k*tasks*gridRounds
						b.Logf("%s: right %.1f%%, trials %.0f (p90 %d); lfc grid %d rounds, %d trials, share %.3f; rinott grid %.0f trials, share %.3f; field grid %d rounds, %d trials, share %.3f; capped %d",
							fd.domain, 100*res.Right, res.TrialsMean, res.TrialsP90, lfc, lfcGrid, res.TrialsMean/float64(lfcGrid),
							rinott, res.TrialsMean/rinott, gridRounds, fieldGrid, res.TrialsMean/float64(fieldGrid), res.Rounds[race.MaxRounds])
						fig.add(res, float64(lfcGrid), rinott, float64(fieldGrid), race.MaxRounds, len(fields))
					}
					b.ReportMetric(100*fig.right, "right-%")
					b.ReportMetric(100*fig.worst, "worst-right-%")
					b.ReportMetric(fig.share, "trial-share")
					b.ReportMetric(fig.lfcGrid, "lfc-grid-trials")
					b.ReportMetric(fig.rinottShare, "rinott-trial-share")
					b.ReportMetric(fig.rinottGrid, "rinott-grid-trials")
					b.ReportMetric(fig.fieldShare, "field-trial-share")
					b.ReportMetric(fig.fieldGrid, "field-grid-trials")
					b.ReportMetric(100*fig.capped, "capped-%")
				}
			})
		}
	}
}

// figures are a benchmark's figures over fields: the mean and the worst
// right-pick share, the mean trial shares of the three grids, the grids'
// mean trials and the mean share of races capped.
type figures struct {
	right, worst                   float64
	share, rinottShare, fieldShare float64
	lfcGrid, rinottGrid, fieldGrid float64
	capped                         float64
	seen                           bool
}

func (f *figures) add(res PlanResult, lfcGrid, rinottGrid, fieldGrid float64, maxRounds, fields int) {
	if !f.seen || res.Right < f.worst {
		f.worst = res.Right
	}
	f.seen = true
	n := float64(fields)
	f.right += res.Right / n
	f.share += res.TrialsMean / lfcGrid / n
	f.lfcGrid += lfcGrid / n
	f.rinottShare += res.TrialsMean / rinottGrid / n
	f.rinottGrid += rinottGrid / n
	f.fieldShare += res.TrialsMean / fieldGrid / n
	f.fieldGrid += fieldGrid / n
	f.capped += float64(res.Rounds[maxRounds]) / float64(max(1, res.Runs)) / n
}
