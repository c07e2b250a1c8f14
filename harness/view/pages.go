package view

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
)

// countLink is a count of trials and the list of them.
type countLink struct {
	Name string
	N    int
	Link string
}

// listRow is one trial of a list.
type listRow struct {
	Run                                        int
	ID, Link, Across                           string
	Model, Domain, Level, Scenario, Difficulty string
	Stop, ErrorClass                           string
	Scored, Pass, HasEnergy                    bool
	TC, WallS, EnergyJ                         float64
	Calls                                      int
}

func toRow(run int, e *entry) listRow {
	r := listRow{Run: run, ID: e.id, Link: trialLink(run, e.id), Model: e.model, Domain: e.domain, Level: e.level, Scenario: e.scenario,
		Difficulty: e.difficulty, Stop: e.stop, ErrorClass: e.errClass, Scored: e.scored, Pass: e.passed(), HasEnergy: e.hasEnergy,
		TC: e.tc, WallS: e.wallS, EnergyJ: e.energyJ, Calls: e.calls}
	if !e.artifact {
		r.Across = acrossLink(run, e)
	}
	return r
}

// folderSummary is one folder on the run page.
type folderSummary struct {
	Run      int
	Dir      string
	Manifest *results.Manifest
	Models   []string
	Done     int
	Planned  int
	Pass     int
	Artifact bool
	Heat     grid
	Tables   []grid
	Errors   []countLink
	Stops    []countLink
	Latest   []listRow
	Failed   string
	Notes    []string
}

func (s folderSummary) Progress() float64 {
	if s.Planned == 0 {
		return 0
	}
	return float64(s.Done) / float64(s.Planned)
}

// summarize computes a folder's run page from its index alone, and the
// intervals of its cells through cache.
func summarize(run int, s snapshot, cache *intervals) folderSummary {
	fs := folderSummary{Run: run, Dir: "", Manifest: s.manifest, Done: len(s.entries)}
	base := Filter{Run: run}
	link := func(f Filter) string { return "/trials?" + f.Values(0).Encode() }
	if s.manifest != nil {
		fs.Planned = s.manifest.Trials
		if s.manifest.Config != nil {
			fs.Models = s.manifest.Config.ModelNames()
			fs.Artifact = s.manifest.Config.Artifacts != ""
		}
	}
	fs.Planned = max(fs.Planned, fs.Done)
	grids := buildGrids(run, s, fs.Models, cache, heatGrid, domainGrid, difficultyGrid)
	fs.Heat, fs.Tables = grids[0], grids[1:]
	errs, stops := map[string]int{}, map[string]int{}
	for k := range s.entries {
		e := &s.entries[k]
		if e.passed() {
			fs.Pass++
		}
		name := e.errClass
		if name == "" {
			name = "none"
		}
		errs[name]++
		stops[e.stop]++
	}
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		f := base
		f.ErrorClass = name
		fs.Errors = append(fs.Errors, countLink{name, errs[name], link(f)})
	}
	for _, name := range slices.Sorted(maps.Keys(stops)) {
		f := base
		f.StopReason = name
		fs.Stops = append(fs.Stops, countLink{name, stops[name], link(f)})
	}
	failed := base
	failed.Outcome = "fail"
	fs.Failed = link(failed)
	for k := len(s.entries) - 1; k >= 0 && len(fs.Latest) < 10; k-- {
		fs.Latest = append(fs.Latest, toRow(run, &s.entries[k]))
	}
	fs.Notes = notes(s)
	return fs
}

// notes says what is odd about a folder, for its reader.
func notes(s snapshot) []string {
	var out []string
	if s.readErr != nil {
		out = append(out, "trials.jsonl cannot be read: "+s.readErr.Error())
	}
	if s.manErr != nil {
		out = append(out, "run.json cannot be read: "+s.manErr.Error())
	} else if s.manifest == nil {
		out = append(out, "no run.json yet: the run has not started here, or this is not a results folder")
	}
	if len(s.entries) == 0 && s.readErr == nil {
		out = append(out, "no trials yet")
	}
	for _, l := range s.damaged {
		out = append(out, fmt.Sprintf("line %d of trials.jsonl is not a trial record and is left out (the remains of a killed write; granite run --resume drops it)", l))
	}
	if s.pending > 0 {
		out = append(out, fmt.Sprintf("the last %d bytes of trials.jsonl are a record still being written (or cut off by a kill): shown once whole", s.pending))
	}
	if s.dup > 0 {
		out = append(out, fmt.Sprintf("%d records repeat a trial id; the first of each is shown", s.dup))
	}
	return out
}

type runPage struct {
	page
	Folders []folderSummary
}

func (v *Viewer) run(w http.ResponseWriter, _ *http.Request) {
	snaps := v.snaps()
	p := runPage{page: page{Title: "Run", State: stateOf(snaps), PollMS: v.o.Poll.Milliseconds(), Nav: "run"}}
	for i, s := range snaps {
		fs := summarize(i, s, &v.intervals)
		fs.Dir = v.folders[i].Dir
		p.Folders = append(p.Folders, fs)
	}
	v.render(w, "run", p)
}

type trialsPage struct {
	page
	Filter                                                          Filter
	Runs                                                            []string
	Models, Domains, Levels, Scenarios, Difficulties, Errors, Stops []string
	Rows                                                            []listRow
	Total, Page, Pages, From                                        int
	Prev, Next                                                      string
	SortLinks                                                       map[string]string
}

func (v *Viewer) trials(w http.ResponseWriter, r *http.Request) {
	snaps := v.snaps()
	f := parseFilter(r.URL.Query())
	rows := selectRows(snaps, f)
	p := trialsPage{page: page{Title: "Trials", State: stateOf(snaps), PollMS: v.o.Poll.Milliseconds(), Nav: "trials"}, Filter: f, Total: len(rows)}
	for _, fo := range v.folders {
		p.Runs = append(p.Runs, fo.Dir)
	}
	p.Models = distinct(snaps, func(e *entry) string { return e.model })
	p.Domains = distinct(snaps, func(e *entry) string { return e.domain })
	p.Scenarios = distinct(snaps, func(e *entry) string { return e.scenario })
	p.Difficulties = byDifficulty(distinct(snaps, func(e *entry) string { return e.difficulty }))
	p.Stops = distinct(snaps, func(e *entry) string { return e.stop })
	p.Errors = distinct(snaps, func(e *entry) string { return e.errClass })
	for _, l := range levels {
		if slices.Contains(distinct(snaps, func(e *entry) string { return e.level }), l) {
			p.Levels = append(p.Levels, cmpOr(l, "-"))
		}
	}
	p.Pages = max(1, (len(rows)+pageSize-1)/pageSize)
	p.Page = min(f.Page, p.Pages-1)
	p.From = p.Page * pageSize
	for _, rw := range rows[p.From:min(len(rows), p.From+pageSize)] {
		p.Rows = append(p.Rows, toRow(rw.run, rw.e))
	}
	if p.Page > 0 {
		p.Prev = "/trials?" + f.Values(p.Page).Encode()
	}
	if p.Page+1 < p.Pages {
		p.Next = "/trials?" + f.Values(p.Page+2).Encode()
	}
	p.SortLinks = map[string]string{}
	for _, k := range sortKeys {
		s := f
		s.Desc = f.Sort == k && !f.Desc
		s.Sort = k
		p.SortLinks[k] = "/trials?" + s.Values(0).Encode()
	}
	v.render(w, "trials", p)
}

func cmpOr(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}

// turn is one message of a transcript, with its tool calls and, for a
// tool reply, the call it answers.
type turn struct {
	results.Message
	Calls []callView
}

// callView is a call of the record with what came of it.
type callView struct {
	N int // 1-based
	results.Call
}

type trialPage struct {
	page
	Run      int
	Dir      string
	Rec      *results.Record
	Across   string
	Calls    []callView
	Explain  *results.Explanation
	Aligned  []alignedView
	Extra    []callView
	Messages []results.Message
	// Judged is set for an artifact trial: its assertions' outcomes by
	// severity, what its TC is decided by in place of state, facts and
	// changes, which an artifact has none of.
	Judged []severityTally
}

// severityTally counts the assertions of one severity and those passed.
type severityTally struct {
	Severity  string
	Passed, N int
}

// tallyAssertions counts verdicts by severity, blockers (which decide TC)
// first, then warnings, then any other severity in name order.
func tallyAssertions(vs []results.Verdict) []severityTally {
	var out []severityTally
	for _, v := range vs {
		i := slices.IndexFunc(out, func(t severityTally) bool { return t.Severity == v.Severity })
		if i < 0 {
			out = append(out, severityTally{Severity: v.Severity})
			i = len(out) - 1
		}
		out[i].N++
		if v.Passed {
			out[i].Passed++
		}
	}
	rank := func(s string) int { return cmp.Or(slices.Index([]string{"blocker", "warning"}, s)+1, 3) }
	slices.SortFunc(out, func(a, b severityTally) int {
		return cmp.Or(cmp.Compare(rank(a.Severity), rank(b.Severity)), strings.Compare(a.Severity, b.Severity))
	})
	return out
}

// alignedView is a gold call and the calls paired with it.
type alignedView struct {
	results.GoldMatch
	Made, ByAction *callView
}

func (v *Viewer) trial(w http.ResponseWriter, r *http.Request) {
	run, f, err := v.folderOf(r.URL.Query())
	if err != nil {
		notFound(w, err.Error())
		return
	}
	f.Refresh()
	id := r.URL.Query().Get("id")
	rec, err := f.Record(id)
	if errors.Is(err, fs.ErrNotExist) {
		notFound(w, fmt.Sprintf("no trial %q in %s", id, f.Dir))
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p := trialPage{page: page{Title: rec.TrialID, Nav: "trial"}, Run: run, Dir: f.Dir, Rec: rec, Messages: rec.Messages}
	if rec.Artifacts == "" {
		p.Across = acrossLink(run, &entry{model: rec.Model, scenario: rec.Scenario, rep: rec.Repetition})
	} else {
		p.Judged = tallyAssertions(rec.Assertions)
	}
	for i, c := range rec.Calls {
		p.Calls = append(p.Calls, callView{i + 1, c})
	}
	if rec.Metrics != nil && rec.Metrics.Explain != nil {
		p.Explain = rec.Metrics.Explain
		p.Aligned, p.Extra = align(p.Calls, p.Explain.Alignment)
	}
	v.render(w, "trial", p)
}

// align attaches the calls to the gold calls they were paired with, and
// returns the calls paired with none.
func align(calls []callView, gm []results.GoldMatch) ([]alignedView, []callView) {
	used := map[int]bool{}
	var out []alignedView
	at := func(i int) *callView {
		if i < 0 || i >= len(calls) {
			return nil
		}
		used[i] = true
		return &calls[i]
	}
	for _, g := range gm {
		out = append(out, alignedView{GoldMatch: g, Made: at(g.Call), ByAction: at(g.ActionCall)})
	}
	var extra []callView
	for i, c := range calls {
		if !used[i] {
			extra = append(extra, c)
		}
	}
	return out, extra
}

// levelColumn is one level of a scenario across levels.
type levelColumn struct {
	Level   string
	Row     *listRow
	Rec     *results.Record
	Why     []string
	Explain bool
	Steps   []alignedView
	Extra   []callView
}

type scenarioPage struct {
	page
	Run             int
	Model, Scenario string
	Rep             int
	Reps            []int
	RepLinks        map[int]string
	Columns         []levelColumn
	Steps           []int
	Prompt          string
	// Folders are the results folders the columns come from: more than
	// one when the run's shards were given as several --results.
	Folders []string
}

// sameRun lists the folders holding trials of folder run's run: itself
// first, then every other whose run.json has its config hash, as the
// shards of one run do (granite run --shard i/n, each into its own
// folder), in the order given. A folder without run.json is its own run.
func sameRun(snaps []snapshot, run int) []int {
	out := []int{run}
	m := snaps[run].manifest
	if m == nil {
		return out
	}
	for i, s := range snaps {
		if i != run && s.manifest != nil && s.manifest.ConfigHash == m.ConfigHash {
			out = append(out, i)
		}
	}
	return out
}

// found is a trial of the across-levels page and the folder holding it.
type found struct {
	run int
	e   *entry
}

func (v *Viewer) scenario(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	run, f, err := v.folderOf(q)
	if err != nil {
		notFound(w, err.Error())
		return
	}
	snaps := v.snaps()
	p := scenarioPage{page: page{Title: q.Get("scenario") + " across levels", Nav: "scenario"}, Run: run, Model: q.Get("model"), Scenario: q.Get("scenario"), RepLinks: map[int]string{}}
	p.Rep, _ = strconv.Atoi(q.Get("rep"))
	byLevel := map[string]found{}
	for _, i := range sameRun(snaps, run) {
		used := false
		for k := range snaps[i].entries {
			e := &snaps[i].entries[k]
			if e.model != p.Model || e.scenario != p.Scenario || e.artifact {
				continue
			}
			used = true
			if !slices.Contains(p.Reps, e.rep) {
				p.Reps = append(p.Reps, e.rep)
				p.RepLinks[e.rep] = acrossLink(run, e)
			}
			if p.Rep == 0 || e.rep == p.Rep {
				// The first folder's trial wins a level, as the first
				// record of a trial id does in a journal.
				if old, ok := byLevel[e.level]; !ok || e.rep < old.e.rep {
					byLevel[e.level] = found{i, e}
				}
			}
		}
		if used {
			p.Folders = append(p.Folders, v.folders[i].Dir)
		}
	}
	slices.Sort(p.Reps)
	if len(byLevel) == 0 {
		notFound(w, fmt.Sprintf("no trial of model %q and scenario %q in %s", p.Model, p.Scenario, f.Dir))
		return
	}
	steps := 0
	for _, l := range levels[:4] {
		col := levelColumn{Level: l}
		if at, ok := byLevel[l]; ok {
			e := at.e
			row := toRow(at.run, e)
			col.Row = &row
			p.Rep = e.rep
			rec, err := v.folders[at.run].read(*e)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			col.Rec = rec
			if p.Prompt == "" {
				for _, m := range rec.Messages {
					if m.Role == "user" {
						p.Prompt = m.Content
						break
					}
				}
			}
			var calls []callView
			for i, c := range rec.Calls {
				calls = append(calls, callView{i + 1, c})
			}
			if rec.Metrics != nil {
				col.Why = rec.Metrics.Why
				if rec.Metrics.Explain != nil {
					col.Explain = true
					col.Steps, col.Extra = align(calls, rec.Metrics.Explain.Alignment)
				}
			}
			if !col.Explain {
				col.Extra = calls
			}
			steps = max(steps, len(col.Steps))
		}
		p.Columns = append(p.Columns, col)
	}
	for i := range steps {
		p.Steps = append(p.Steps, i)
	}
	v.render(w, "scenario", p)
}

// stepOf is the i-th aligned gold step of a column, or nil.
func stepOf(c levelColumn, i int) *alignedView {
	if i < len(c.Steps) {
		return &c.Steps[i]
	}
	return nil
}

func init() {
	funcs["step"] = stepOf
	funcs["join"] = strings.Join
}
