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
// must run for the same guarantee (Bechhofer's indifference-zone design).
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
// skills of builtin:sim and reports, over every generated domain's field
// (benchRaces seeded races each):
//
//   - right-%: the share of races whose pick is right (within Delta of the
//     best true mean), the mean over domains; 95 or more is required.
//     worst-right-% is the worst domain's, which the simulation's own
//     noise (±1.5 points over 200 races) puts a little lower.
//   - trial-share: advise's mean trials over the full grid's at the same
//     MaxRounds, the mean over domains; at most 0.333 is required.
//   - grid-trials: the full grid's trials, the mean over domains.
//   - lfc-right-%, lfc-trial-share, lfc-grid-trials: the same with
//     MaxRounds the least favourable field's grid (lfcRounds).
//
// The first figures' MaxRounds is the grid a user would run to get the
// same error rate on this field: the smallest number of rounds at which
// a full grid (every candidate every scenario every round, the highest
// mean picked) picks right in 95% of simulated grids (search over
// PlanGrid, as TrialsFor searches over Plan), raised to what the race
// needs for the same 95% where that is more. The figures are from races
// seeded apart from the search's, so they check its answer. This favours the grid: only
// the field's own success probabilities, which a user does not know
// before running it, size it so small. The lfc figures size the grid as a
// user must without that knowledge, for a 95% right pick in any field.
//
//	go test ./harness/advise -run '^$' -bench AdviseSimulated -benchtime 1x -v
func BenchmarkAdviseSimulated(b *testing.B) {
	for _, skill := range []float64{1.5, agent.SimDefaultSkill, 5} {
		b.Run(fmt.Sprintf("skill=%g", skill), func(b *testing.B) {
			fields := simFields(b, skill)
			race := Race{}.Normal()
			lfc := lfcRounds(race, len(fields[0].cands), len(fields[0].p[fields[0].cands[0].Name]), 1)
			for range b.N {
				var fig, lfcFig figures
				for i, fd := range fields {
					seed := uint64(i + 1)
					gridRounds, _ := search(race, 0.95, func(r Race) PlanResult { return PlanGrid(r, fd.cands, fd.p, PlanRuns, seed) })
					raceRounds, _ := TrialsFor(race, fd.cands, fd.p, 0.95, seed)
					r := race
					r.MaxRounds = max(gridRounds, raceRounds)
					res := Plan(r, fd.cands, fd.p, benchRaces, seed+1000)
					b.Logf("%s: grid %d rounds, race %d; at %d: right %.1f%%, trials %.0f (p90 %d) of %d, share %.3f, ended after %v",
						fd.domain, gridRounds, raceRounds, r.MaxRounds, 100*res.Right, res.TrialsMean, res.TrialsP90, res.GridTrials, res.Share, res.Rounds[1:])
					fig.add(res, len(fields))
					r.MaxRounds = lfc
					res = Plan(r, fd.cands, fd.p, benchRaces, seed+1000)
					b.Logf("%s: least favourable grid %d rounds: right %.1f%%, trials %.0f (p90 %d) of %d, share %.3f",
						fd.domain, lfc, 100*res.Right, res.TrialsMean, res.TrialsP90, res.GridTrials, res.Share)
					lfcFig.add(res, len(fields))
				}
				b.ReportMetric(100*fig.right, "right-%")
				b.ReportMetric(100*fig.worst, "worst-right-%")
				b.ReportMetric(fig.share, "trial-share")
				b.ReportMetric(fig.grid, "grid-trials")
				b.ReportMetric(100*lfcFig.right, "lfc-right-%")
				b.ReportMetric(100*lfcFig.worst, "lfc-worst-right-%")
				b.ReportMetric(lfcFig.share, "lfc-trial-share")
				b.ReportMetric(lfcFig.grid, "lfc-grid-trials")
			}
		})
	}
}

// figures are a benchmark's figures over fields: the mean and the worst
// right-pick share, the mean trial share and the mean grid trials.
type figures struct {
	right, worst, share, grid float64
	seen                      bool
}

func (f *figures) add(res PlanResult, fields int) {
	if !f.seen || res.Right < f.worst {
		f.worst = res.Right
	}
	f.seen = true
	f.right += res.Right / float64(fields)
	f.share += res.Share / float64(fields)
	f.grid += float64(res.GridTrials) / float64(fields)
}
