package advise

import (
	"fmt"
	"math"
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
// must run for the same guarantee (Bechhofer's indifference-zone design,
// found by simulation).
func lfcRounds(race Race, k, tasks int, seed uint64) int {
	ps := make([]float64, k)
	for i := range ps {
		ps[i] = 0.5 - race.Delta/2
	}
	ps[0] = 0.5 + race.Delta/2 + 1e-9
	cands, p := field(tasks, ps...)
	n, _ := search(race, 0.95, func(r Race) PlanResult { return PlanGrid(r, cands, p, PlanRuns, seed) })
	return n
}

// BenchmarkAdviseSimulated races simulated fields (simFields) at a few
// skills of builtin:sim, with each procedure, and reports over every
// generated domain's field (benchRaces seeded races each):
//
//   - right-%: the share of races whose pick is right (within Delta of the
//     best true mean), the mean over domains; 95 or more is required.
//     worst-right-% is the worst domain's, which the simulation's own
//     noise (±1.5 points over 200 races) puts a little lower.
//   - trial-share: the race's mean trials over the trials of the full
//     grid that guarantees the same error rate without knowing the field
//     (lfc-grid-trials: every candidate on every task for the rounds of
//     lfcRounds, 95% right in the least favourable field), the mean over
//     domains; at most 0.333 is required. This is the grid a user runs
//     instead of racing.
//   - field-trial-share: the race's mean trials over field-grid-trials,
//     the grid sized to this field's own success probabilities (the
//     fewest rounds at which a full grid picks right in 95% of simulated
//     grids, a search over PlanGrid). Only a user who already knew the
//     field could size a grid so small, so this is a floor no real grid
//     reaches; it says how much of racing's saving is the field being
//     easy.
//   - capped-%: the share of races that reached MaxRounds before the
//     procedure ended by itself (KN's cap is DefaultKNMaxRounds; sign's
//     MaxRounds is the lfc grid's rounds, the repetitions a user would
//     configure).
//
//	go test ./harness/advise -run '^$' -bench AdviseSimulated -benchtime 1x -v
func BenchmarkAdviseSimulated(b *testing.B) {
	for _, skill := range []float64{1.5, agent.SimDefaultSkill, 5} {
		fields := simFields(b, skill)
		for _, proc := range []string{ProcedureKN, ProcedureSign} {
			b.Run(fmt.Sprintf("skill=%g/procedure=%s", skill, proc), func(b *testing.B) {
				race := Race{Procedure: proc}.Normal()
				k, tasks := len(fields[0].cands), len(fields[0].p[fields[0].cands[0].Name])
				lfc := lfcRounds(race, k, tasks, 1)
				if proc == ProcedureSign {
					race.MaxRounds = lfc
				}
				for range b.N {
					var fig figures
					for i, fd := range fields {
						seed := uint64(i + 1)
						gridRounds, _ := search(race, 0.95, func(r Race) PlanResult { return PlanGrid(r, fd.cands, fd.p, PlanRuns, seed) })
						res := Plan(race, fd.cands, fd.p, benchRaces, seed+1000)
						lfcGrid := len(fd.cands) * len(fd.p[fd.cands[0].Name]) * lfc
						fieldGrid := len(fd.cands) * len(fd.p[fd.cands[0].Name]) * gridRounds
						b.Logf("%s: right %.1f%%, trials %.0f (p90 %d); lfc grid %d rounds, %d trials, share %.3f; field grid %d rounds, %d trials, share %.3f; capped %d",
							fd.domain, 100*res.Right, res.TrialsMean, res.TrialsP90, lfc, lfcGrid, res.TrialsMean/float64(lfcGrid),
							gridRounds, fieldGrid, res.TrialsMean/float64(fieldGrid), res.Rounds[race.MaxRounds])
						fig.add(res, lfcGrid, fieldGrid, race.MaxRounds, len(fields))
					}
					b.ReportMetric(100*fig.right, "right-%")
					b.ReportMetric(100*fig.worst, "worst-right-%")
					b.ReportMetric(fig.share, "trial-share")
					b.ReportMetric(fig.lfcGrid, "lfc-grid-trials")
					b.ReportMetric(fig.fieldShare, "field-trial-share")
					b.ReportMetric(fig.fieldGrid, "field-grid-trials")
					b.ReportMetric(100*fig.capped, "capped-%")
				}
			})
		}
	}
}

// figures are a benchmark's figures over fields: the mean and the worst
// right-pick share, the mean trial shares of the two grids, the grids'
// mean trials and the mean share of races capped.
type figures struct {
	right, worst, share, lfcGrid, fieldShare, fieldGrid, capped float64
	seen                                                        bool
}

func (f *figures) add(res PlanResult, lfcGrid, fieldGrid, maxRounds, fields int) {
	if !f.seen || res.Right < f.worst {
		f.worst = res.Right
	}
	f.seen = true
	n := float64(fields)
	f.right += res.Right / n
	f.share += res.TrialsMean / float64(lfcGrid) / n
	f.lfcGrid += float64(lfcGrid) / n
	f.fieldShare += res.TrialsMean / float64(fieldGrid) / n
	f.fieldGrid += float64(fieldGrid) / n
	f.capped += float64(res.Rounds[maxRounds]) / float64(max(1, res.Runs)) / n
}
