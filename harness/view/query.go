package view

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// levels are the columns of the level tables, coarsest last as in the
// paper; "" holds artifact trials of tools from outside the benchmark.
var levels = []string{"L4", "L3", "L2", "L1", ""}

// Filter selects and orders trials; its fields are the query parameters
// of the trials page.
type Filter struct {
	Run        int // -1: every folder
	Model      string
	Domain     string
	Level      string
	Scenario   string
	Difficulty string
	// Outcome is pass (tc 1), fail (tc 0 or not scored) or empty.
	Outcome    string
	ErrorClass string
	StopReason string
	// Sort is one of sortKeys (the record keys: trial_id, tc, tool_calls,
	// wall_s, energy_j) or empty (the order of the journal); Desc reverses
	// it.
	Sort string
	Desc bool
	Page int
}

// pageSize is the trials shown per page of the list.
const pageSize = 100

// parseFilter reads a filter from a query; unknown values select nothing
// rather than everything.
func parseFilter(q url.Values) Filter {
	f := Filter{Run: -1, Model: q.Get("model"), Domain: q.Get("domain"), Level: q.Get("level"), Scenario: q.Get("scenario"),
		Difficulty: q.Get("difficulty"), Outcome: q.Get("outcome"), ErrorClass: q.Get("error_class"), StopReason: q.Get("stop_reason"),
		Sort: q.Get("sort"), Desc: q.Get("order") == "desc"}
	if r, err := strconv.Atoi(q.Get("run")); err == nil {
		f.Run = r
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 0 {
		f.Page = p - 1
	}
	return f
}

// Values is the filter as a query, for links; page is 1-based, 0 leaves
// it out.
func (f Filter) Values(page int) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Run >= 0 {
		q.Set("run", strconv.Itoa(f.Run))
	}
	set("model", f.Model)
	set("domain", f.Domain)
	set("level", f.Level)
	set("scenario", f.Scenario)
	set("difficulty", f.Difficulty)
	set("outcome", f.Outcome)
	set("error_class", f.ErrorClass)
	set("stop_reason", f.StopReason)
	set("sort", f.Sort)
	if f.Desc {
		q.Set("order", "desc")
	}
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	return q
}

// match reports whether a trial passes the filter. The level "-" selects
// trials without a level (artifacts of outside tools).
func (f *Filter) match(e *entry) bool {
	lv := f.Level
	if lv == "-" {
		lv = ""
	}
	return (f.Model == "" || e.model == f.Model) && (f.Domain == "" || e.domain == f.Domain) &&
		(f.Level == "" || e.level == lv) && (f.Scenario == "" || e.scenario == f.Scenario) &&
		(f.Difficulty == "" || e.difficulty == f.Difficulty) && (f.ErrorClass == "" || e.errClass == f.ErrorClass || f.ErrorClass == "none" && e.errClass == "") &&
		(f.StopReason == "" || e.stop == f.StopReason) &&
		(f.Outcome == "" || f.Outcome == "pass" && e.passed() || f.Outcome == "fail" && !e.passed())
}

func (e *entry) passed() bool { return e.scored && e.tc == 1 }

// row is a trial of a list: its folder and its entry.
type row struct {
	run int
	e   *entry
}

// selectRows filters the folders' trials and sorts them; the order of the
// journal (folder by folder) breaks ties, so pages are stable.
func selectRows(snaps []snapshot, f Filter) []row {
	var out []row
	for i, s := range snaps {
		if f.Run >= 0 && f.Run != i {
			continue
		}
		for k := range s.entries {
			if e := &s.entries[k]; f.match(e) {
				out = append(out, row{i, e})
			}
		}
	}
	if f.Sort == "trial_id" {
		slices.SortStableFunc(out, func(a, b row) int {
			if f.Desc {
				a, b = b, a
			}
			return strings.Compare(a.e.id, b.e.id)
		})
		return out
	}
	key := map[string]func(e *entry) (float64, bool){
		"tc":         func(e *entry) (float64, bool) { return e.tc, e.scored },
		"wall_s":     func(e *entry) (float64, bool) { return e.wallS, e.scored },
		"energy_j":   func(e *entry) (float64, bool) { return e.energyJ, e.hasEnergy },
		"tool_calls": func(e *entry) (float64, bool) { return float64(e.calls), e.scored },
	}[f.Sort]
	if key == nil {
		return out
	}
	slices.SortStableFunc(out, func(a, b row) int {
		av, aok := key(a.e)
		bv, bok := key(b.e)
		if aok != bok { // trials without the value go last either way
			if aok {
				return -1
			}
			return 1
		}
		if f.Desc {
			return cmp.Compare(bv, av)
		}
		return cmp.Compare(av, bv)
	})
	return out
}

// sortKeys are the columns the trials page sorts by: the record keys.
var sortKeys = []string{"trial_id", "tc", "tool_calls", "wall_s", "energy_j"}
