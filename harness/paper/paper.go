// Package paper computes the metric family of the paper's reference
// implementation (the Python package mcp_granite, earlier edgetoolbench),
// by its definitions, so that granite's trials and the reference's runs
// compare column by column (results.PaperMetrics). The definitions are
// the reference's, read from its documentation and code and written here
// afresh; where they differ from granite's own metrics of the same names
// (tool F1 over sets of names rather than multisets of calls, argument
// accuracy by greedy best match, completion by strings in the answer),
// granite keeps both and docs/paper.md says what changes a number.
//
// Like package score, it is pure: functions of a trial's calls and answer
// and of a gold, with no I/O.
package paper

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Call is one tool call of a trial, in the order it was made.
type Call struct {
	Tool string
	// Arguments is a JSON object; anything else reads as no arguments.
	Arguments json.RawMessage
}

// GoldCall is one call of a scenario's gold at a level. Optional is a
// call the reference's gold marks required: false, which every metric
// leaves out.
type GoldCall struct {
	Tool      string
	Arguments map[string]any
	Optional  bool
}

// Trial is what the metrics read of a finished trial.
type Trial struct {
	Calls []Call
	// Errors are whether each tool response was an error, in order. The
	// reference keeps responses apart from calls, and an agent framework
	// may report fewer responses than calls; granite's are its calls'.
	Errors []bool
	// Answer is the final answer; "" is none.
	Answer string
	// Tokens are prompt and completion tokens together.
	Tokens int
}

// Gold is what a trial is scored against: the level's gold calls and the
// strings the answer must contain.
type Gold struct {
	Calls    []GoldCall
	Contains []string
}

// GoldOf is the gold of granite's calls as the reference reads them: the
// arguments each call writes, optional ones included (the reference has
// no optional arguments: a call that leaves one out loses its share, and a
// gold call reduced to no arguments would fail every call that sends
// one), their first values; with the strings the answer must contain.
func GoldOf(calls []*speclang.Call, contains []string) *Gold {
	g := &Gold{Contains: contains}
	for _, c := range calls {
		g.Calls = append(g.Calls, GoldCall{Tool: c.Tool, Arguments: c.Args})
	}
	return g
}

// FromRecord reads a granite trial as the reference's metrics do: its
// calls as the agent made them, each call's error, the final answer and
// the tokens of every request.
func FromRecord(rec *results.Record) *Trial {
	t := &Trial{Answer: rec.FinalAnswer, Tokens: rec.PromptTokens + rec.CompletionTokens}
	for _, c := range rec.Calls {
		t.Calls = append(t.Calls, Call{Tool: c.Tool, Arguments: results.CutArguments(c.Arguments)})
		t.Errors = append(t.Errors, c.IsError)
	}
	return t
}

// Score computes the reference's metrics of a trial:
//
//   - tool_selection_precision, _recall, _f1: over the sets of tool names
//     called and named by the required gold calls. Both empty: 1, 1, 1;
//     one empty: 0, 0, 0. Sets, not calls: at L1 any call gives 1.
//   - argument_accuracy: the calls in order, each taking the unused
//     required gold call of its tool that its arguments match best (the
//     first of equals), the share of that gold call's keys it gives a
//     matching value; the sum over the number of required gold calls (1
//     when there are none). See argSimilarity and valuesMatch.
//   - sequence_edit_distance: Levenshtein distance between the called and
//     the required gold tool-name sequences over the longer length; 0
//     when both are empty, 1 when one is.
//   - sequence_kendall_tau: Kendall's τ between the order in which the
//     agent first called each gold tool and that tool's first position in
//     the gold; 0 with fewer than two such tools.
//   - task_completion: 1 when the answer is not empty and contains every
//     Contains string, ignoring case. No state is read.
//   - error_recovery_rate: of the error responses, the share after whose
//     position in the call list any call follows; nil without errors.
//   - token_efficiency: the trial's tokens.
//   - redundant_call_rate: calls repeating an earlier call's tool and
//     arguments / calls.
func Score(t *Trial, g *Gold) *results.PaperMetrics {
	var required []GoldCall
	for _, c := range g.Calls {
		if !c.Optional {
			required = append(required, c)
		}
	}
	got := make([]string, len(t.Calls))
	for i, c := range t.Calls {
		got[i] = c.Tool
	}
	want := make([]string, len(required))
	for i, c := range required {
		want[i] = c.Tool
	}
	m := &results.PaperMetrics{Tokens: t.Tokens}
	m.ToolPrecision, m.ToolRecall, m.ToolF1 = setF1(got, want)
	m.ArgAcc = argumentAccuracy(t.Calls, required)
	m.EditDistance = editDistance(got, want)
	m.KendallTau = kendallTau(got, want)
	m.TaskCompletion = completion(t.Answer, g.Contains)
	m.ErrorRecovery = recovery(t.Errors, len(t.Calls))
	m.RedundantRate = redundantRate(t.Calls)
	return m
}

func setF1(got, want []string) (precision, recall, f1 float64) {
	gs, ws := set(got), set(want)
	switch {
	case len(gs) == 0 && len(ws) == 0:
		return 1, 1, 1
	case len(gs) == 0 || len(ws) == 0:
		return 0, 0, 0
	}
	tp := 0
	for name := range gs {
		if ws[name] {
			tp++
		}
	}
	precision, recall = float64(tp)/float64(len(gs)), float64(tp)/float64(len(ws))
	if precision+recall > 0 {
		f1 = 2 * precision * recall / (precision + recall)
	}
	return precision, recall, f1
}

func set(names []string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// argumentAccuracy matches greedily: a call takes the best gold call left
// even when a later call would have matched it better, as the reference
// does.
func argumentAccuracy(calls []Call, gold []GoldCall) float64 {
	if len(gold) == 0 {
		return 1
	}
	used := make([]bool, len(gold))
	sum := 0.0
	for _, c := range calls {
		args := objectOf(c.Arguments)
		best, bestScore := -1, -1.0
		for i, gc := range gold {
			if used[i] || gc.Tool != c.Tool {
				continue
			}
			if s := argSimilarity(args, gc.Arguments); s > bestScore {
				best, bestScore = i, s
			}
		}
		if best >= 0 {
			used[best] = true
			sum += bestScore
		}
	}
	return sum / float64(len(gold))
}

// objectOf decodes a call's arguments; anything but an object is none.
func objectOf(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// argSimilarity is the share of the gold's keys the call gives a matching
// value; a gold call without arguments matches a call without any.
func argSimilarity(got, gold map[string]any) float64 {
	if len(gold) == 0 {
		if len(got) == 0 {
			return 1
		}
		return 0
	}
	n := 0
	for k, want := range gold {
		if v, ok := got[k]; ok && valuesMatch(v, want) {
			n++
		}
	}
	return float64(n) / float64(len(gold))
}

// valuesMatch compares a value with the gold's: two strings trimmed and
// case-folded, an object by every key of the gold's recursively (extra
// keys allowed), anything else by equality as Python compares decoded
// JSON (1 equals 1.0 and true; lists element by element, exactly).
func valuesMatch(got, want any) bool {
	switch w := want.(type) {
	case string:
		if g, ok := got.(string); ok {
			return strings.ToLower(strings.TrimSpace(g)) == strings.ToLower(strings.TrimSpace(w))
		}
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			for k, wv := range w {
				if gv, ok := g[k]; !ok || !valuesMatch(gv, wv) {
					return false
				}
			}
			return true
		}
	}
	return pyEqual(got, want)
}

// pyEqual is Python's == on values decoded from JSON.
func pyEqual(a, b any) bool {
	if x, ok := pyNumber(a); ok {
		y, ok := pyNumber(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		s, ok := b.(string)
		return ok && a == s
	case []any:
		l, ok := b.([]any)
		if !ok || len(l) != len(a) {
			return false
		}
		for i := range a {
			if !pyEqual(a[i], l[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		m, ok := b.(map[string]any)
		if !ok || len(m) != len(a) {
			return false
		}
		for k, v := range a {
			if w, ok := m[k]; !ok || !pyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// pyNumber reads a number as Python compares it: booleans are 0 and 1;
// a spec's integers (int64) equal the same value decoded from JSON.
func pyNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func editDistance(got, want []string) float64 {
	n, m := len(got), len(want)
	switch {
	case n == 0 && m == 0:
		return 0
	case n == 0 || m == 0:
		return 1
	}
	prev, cur := make([]int, m+1), make([]int, m+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if got[i-1] == want[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return float64(prev[m]) / float64(max(n, m))
}

// kendallTau ranks the gold tools the agent called by when it first
// called them against their first positions in the gold. Neither side has
// ties (the first are positions in the call list, the second distinct
// positions of distinct names), so τ-b is (concordant − discordant) over
// the pairs.
func kendallTau(got, want []string) float64 {
	first := map[string]int{}
	for i, name := range want {
		if _, ok := first[name]; !ok {
			first[name] = i
		}
	}
	var ranks []int
	seen := map[string]bool{}
	for _, name := range got {
		if pos, ok := first[name]; ok && !seen[name] {
			seen[name] = true
			ranks = append(ranks, pos)
		}
	}
	n := len(ranks)
	if n < 2 {
		return 0
	}
	s := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if ranks[i] < ranks[j] {
				s++
			} else {
				s--
			}
		}
	}
	return float64(s) / float64(n*(n-1)/2)
}

func completion(answer string, contains []string) float64 {
	if answer == "" {
		return 0
	}
	lower := strings.ToLower(answer)
	for _, s := range contains {
		if !strings.Contains(lower, strings.ToLower(s)) {
			return 0
		}
	}
	return 1
}

// recovery counts an error response at position i as recovered when the
// trial made a call after position i: a retry or anything else.
func recovery(errors []bool, calls int) *float64 {
	failed, recovered := 0, 0
	for i, e := range errors {
		if !e {
			continue
		}
		failed++
		if calls > i+1 {
			recovered++
		}
	}
	if failed == 0 {
		return nil
	}
	r := float64(recovered) / float64(failed)
	return &r
}

func redundantRate(calls []Call) float64 {
	if len(calls) == 0 {
		return 0
	}
	seen := map[string]bool{}
	repeats := 0
	for _, c := range calls {
		key := c.Tool + "\x00" + argumentsKey(c.Arguments)
		if seen[key] {
			repeats++
		}
		seen[key] = true
	}
	return float64(repeats) / float64(len(calls))
}

// Seed is the reference's seed of a condition: the first 8 hex digits of
// the SHA-256 of "<model>__<scenario>__<granularity>__fr<fault
// rate>__rep<repetition>", the fault rate written as Python writes a
// float.
func Seed(model, scenario, granularity string, faultRate float64, rep int) uint64 {
	key := fmt.Sprintf("%s__%s__%s__fr%s__rep%d", model, scenario, granularity, FloatText(faultRate), rep)
	sum := sha256.Sum256([]byte(key))
	return uint64(binary.BigEndian.Uint32(sum[:4]))
}

// FloatText writes a float as Python's str does: the shortest digits
// that read back, with ".0" on a whole number, and an exponent of at least
// two digits outside 1e-4 <= |f| < 1e16 (0.0, 0.2, 1e-05, 1e+16).
func FloatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// granularities are the reference's level keys, by granite level.
var granularities = map[level.Level]string{
	level.L4: "primitive",
	level.L3: "composite_4",
	level.L2: "composite_2",
	level.L1: "composite_1",
}

// Granularity is the reference's key of a level: primitive (L4),
// composite_4 (L3), composite_2 (L2) or composite_1 (L1).
func Granularity(lv level.Level) string { return granularities[lv] }

// LevelOf is the level of one of the reference's level keys.
func LevelOf(granularity string) (level.Level, bool) {
	for lv, g := range granularities {
		if g == granularity {
			return lv, true
		}
	}
	return "", false
}
