package mcpdomain

import (
	"math"
	"sort"
)

// ListResult is the result of a list operation.
type ListResult[T any] struct {
	Entity string `json:"entity"`
	// Count is the number of items returned, Total the number that matched
	// before the limit was applied.
	Count int `json:"count"`
	Total int `json:"total"`
	Items []T `json:"items"`
}

// BulkResult is the result of an update_where or preset operation.
type BulkResult struct {
	Entity  string   `json:"entity"`
	Preset  string   `json:"preset,omitempty"`
	Matched int      `json:"matched"`
	Updated []string `json:"updated"`
}

// NewBulkResult sorts and de-duplicates ids, which a preset may collect
// from several of its bundles.
func NewBulkResult(entity, preset string, ids []string) BulkResult {
	sort.Strings(ids)
	out := []string{}
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return BulkResult{Entity: entity, Preset: preset, Matched: len(out), Updated: out}
}

// DeleteResult is the result of a delete operation.
type DeleteResult struct {
	Entity  string `json:"entity"`
	Deleted string `json:"deleted"`
}

// AggregateResult is the result of an aggregate operation. Value is null
// when no row matched (except for count, which is then 0). Rows with no
// value for the aggregated field are left out, as SQL leaves out NULL;
// rows with no value for the group-by field form the group UnsetKey.
type AggregateResult struct {
	Entity   string           `json:"entity"`
	Function string           `json:"function"`
	Field    string           `json:"field,omitempty"`
	GroupBy  string           `json:"group_by,omitempty"`
	Count    int              `json:"count"`
	Value    *float64         `json:"value"`
	Groups   []AggregateGroup `json:"groups,omitempty"`
}

// UnsetKey is the group of rows that have no value for the group-by field.
const UnsetKey = "(unset)"

// AggregateGroup is one group of a grouped aggregate.
type AggregateGroup struct {
	Key   string   `json:"key"`
	Count int      `json:"count"`
	Value *float64 `json:"value"`
}

// Aggregator accumulates values for an aggregate operation.
type Aggregator struct {
	res    AggregateResult
	all    acc
	groups map[string]*acc
}

type acc struct {
	n             int
	sum, min, max float64
}

func (a *acc) add(v float64) {
	if a.n == 0 || v < a.min {
		a.min = v
	}
	if a.n == 0 || v > a.max {
		a.max = v
	}
	a.n++
	a.sum += v
}

// aggregateDecimals is how many decimals an aggregate value keeps, so that
// an average reads as 21.267 rather than 21.266666666666666.
const aggregateDecimals = 3

func (a *acc) value(fn string) *float64 {
	var v float64
	switch {
	case fn == "count":
		v = float64(a.n)
	case a.n == 0:
		return nil
	case fn == "sum":
		v = a.sum
	case fn == "avg":
		v = a.sum / float64(a.n)
	case fn == "min":
		v = a.min
	case fn == "max":
		v = a.max
	}
	p := math.Pow(10, aggregateDecimals)
	v = math.Round(v*p) / p
	return &v
}

// NewAggregator starts an aggregate of fn over field, grouped by groupBy
// when it is not empty.
func NewAggregator(entity, fn, field, groupBy string) *Aggregator {
	a := &Aggregator{res: AggregateResult{Entity: entity, Function: fn, Field: field, GroupBy: groupBy}}
	if groupBy != "" {
		a.groups = map[string]*acc{}
	}
	return a
}

// Add records value v of a row in group key.
func (a *Aggregator) Add(key string, v float64) {
	a.all.add(v)
	if a.groups == nil {
		return
	}
	g := a.groups[key]
	if g == nil {
		g = &acc{}
		a.groups[key] = g
	}
	g.add(v)
}

// Result returns the aggregate, groups sorted by key.
func (a *Aggregator) Result() AggregateResult {
	r := a.res
	r.Count = a.all.n
	r.Value = a.all.value(r.Function)
	if a.groups != nil {
		keys := make([]string, 0, len(a.groups))
		for k := range a.groups {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r.Groups = make([]AggregateGroup, len(keys))
		for i, k := range keys {
			g := a.groups[k]
			r.Groups[i] = AggregateGroup{Key: k, Count: g.n, Value: g.value(r.Function)}
		}
	}
	return r
}

// Field returns the field being aggregated.
func (a *Aggregator) Field() string { return a.res.Field }

// GroupBy returns the grouping field, or "".
func (a *Aggregator) GroupBy() string { return a.res.GroupBy }
