package reference

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgranite/granite/harness/paper"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
)

// This file reads a reference run folder: results.jsonl, one condition a
// line, and traces/<key>.json, one trace a condition.

// The names of a reference run folder's parts.
const (
	ResultsFile = "results.jsonl"
	TracesDir   = "traces"
)

// Bounds on what a run folder may make granite read: a results line and a
// trace are a few kilobytes; a trace keeps every call and response of a
// condition, still far under these.
const (
	maxResultLine = 1 << 20
	maxTraceBytes = 64 << 20
	// maxLineErrors is how many broken lines are reported before reading
	// stops: a file with more is likely no results.jsonl at all.
	maxLineErrors = 20
)

// Condition is one line of results.jsonl: a condition and what the
// reference recorded of it.
type Condition struct {
	Model       string
	Domain      string
	Granularity string
	Level       level.Level
	Scenario    string
	FaultRate   float64
	// Repetition counts from 0, as the reference counts.
	Repetition int
	Seed       uint64
	// Recorded are the metrics as written (nil when the line has none);
	// Summary its trace_summary; Error its error.
	Recorded *results.PaperMetrics
	Summary  TraceSummary
	Error    *string
	// Line is the line of results.jsonl it was read from.
	Line int
}

// TraceSummary is a condition's trace_summary.
type TraceSummary struct {
	ToolCalls   int     `json:"num_tool_calls"`
	LLMTurns    int     `json:"num_llm_turns"`
	WallSeconds float64 `json:"wall_time_seconds"`
	TimedOut    bool    `json:"timed_out"`
	TotalTokens int     `json:"total_tokens"`
	StartedAt   *string `json:"started_at"`
	EndedAt     *string `json:"ended_at"`
}

// line is one line of results.jsonl as it decodes.
type line struct {
	Condition *struct {
		Model       string  `json:"model"`
		Domain      string  `json:"domain"`
		Granularity string  `json:"granularity"`
		Interface   string  `json:"interface_level"` // some versions' name of granularity
		Scenario    string  `json:"scenario_id"`
		FaultRate   float64 `json:"fault_rate"`
		Repetition  *int    `json:"repetition"`
		Seed        *uint64 `json:"seed"`
	} `json:"condition"`
	Metrics      *results.PaperMetrics `json:"metrics"`
	TraceSummary TraceSummary          `json:"trace_summary"`
	Error        *string               `json:"error"`
}

// TraceName is the file name of a condition's trace in traces/, as the
// reference names it: the model with "/" written "--", then domain,
// granularity, scenario, fault rate (as Python prints a float) and
// repetition, joined by "__".
func (c *Condition) TraceName() string {
	return fmt.Sprintf("%s__%s__%s__%s__fr%s__rep%d.json", strings.ReplaceAll(c.Model, "/", "--"), c.Domain, c.Granularity, c.Scenario,
		paper.FloatText(c.FaultRate), c.Repetition)
}

// ReadConditions reads a run folder's results.jsonl. Every broken line is
// reported at once, each as results.jsonl:line:col: what was found and
// expected; blank lines are skipped.
func ReadConditions(path string) ([]Condition, error) {
	conds, errs, err := readConditions(path)
	if err != nil {
		return nil, err
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return conds, nil
}

// readConditions reads the whole conditions of results.jsonl, and every
// broken line's error; err is a failure to read it at all.
func readConditions(path string) ([]Condition, speclang.ErrorList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var out []Condition
	var errs speclang.ErrorList
	at := func(n, col int, jpath, format string, a ...any) {
		errs = append(errs, &speclang.Error{Pos: speclang.Pos{File: path, Line: n, Col: col}, Path: jpath, Msg: fmt.Sprintf(format, a...)})
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxResultLine)
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if len(errs) >= maxLineErrors {
			at(n, 1, "", "stopped after %d broken lines; is this a results.jsonl the reference wrote?", maxLineErrors)
			break
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&l); err != nil {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			switch {
			case errors.Is(err, io.ErrUnexpectedEOF):
				at(n, len(text)+1, "", "found a line that ends inside its JSON object (cut off?); expected one whole condition object per line")
			case errors.As(err, &syn):
				at(n, int(syn.Offset), "", "found a line that is not JSON (%v); expected one condition object per line", syn)
			case errors.As(err, &typ):
				at(n, int(typ.Offset), "$."+typ.Field, "found %s; expected %s", typ.Value, jsonType(typ.Type.Kind().String()))
			default:
				at(n, 1, "", "found a line that is not a condition (%v); expected one JSON object per line", err)
			}
			continue
		}
		if dec.More() {
			at(n, int(dec.InputOffset())+1, "", "found more after the condition's object; expected one object per line")
			continue
		}
		c, why, where := condition(&l)
		if why != "" {
			at(n, 1, where, "%s", why)
			continue
		}
		c.Line = n
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("%s: a line is over %d bytes; no condition of the reference is", path, maxResultLine)
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 && len(errs) == 0 {
		return nil, nil, fmt.Errorf("%s holds no condition; expected one JSON object per line, as the reference writes", path)
	}
	return out, errs, nil
}

// jsonType names a Go kind as JSON does.
func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "true or false"
	case kind == "struct", kind == "map":
		return "an object"
	case kind == "slice":
		return "an array"
	}
	return kind
}

// condition checks a decoded line; why says what is missing or wrong, at
// the JSON path where.
func condition(l *line) (c Condition, why, where string) {
	lc := l.Condition
	if lc == nil {
		return c, "missing key \"condition\"", "$"
	}
	gran := lc.Granularity
	if gran == "" {
		gran = lc.Interface
	}
	for _, f := range []struct{ key, val string }{{"model", lc.Model}, {"domain", lc.Domain}, {"granularity", gran}, {"scenario_id", lc.Scenario}} {
		if f.val == "" {
			return c, fmt.Sprintf("missing key %q (or it is empty)", f.key), "$.condition"
		}
	}
	lv, ok := paper.LevelOf(gran)
	if !ok {
		return c, fmt.Sprintf("found granularity %q; expected one of primitive, composite_4, composite_2, composite_1", gran), "$.condition.granularity"
	}
	if lc.Repetition == nil {
		return c, "missing key \"repetition\"", "$.condition"
	}
	if *lc.Repetition < 0 {
		return c, fmt.Sprintf("found repetition %d; expected 0 or more", *lc.Repetition), "$.condition.repetition"
	}
	if !(lc.FaultRate >= 0 && lc.FaultRate <= 1) {
		return c, fmt.Sprintf("found fault_rate %v; expected a rate from 0 to 1", lc.FaultRate), "$.condition.fault_rate"
	}
	if why, where := checkRecorded(l.Metrics); why != "" {
		return c, why, where
	}
	for _, f := range []struct {
		key string
		at  *string
	}{{"started_at", l.TraceSummary.StartedAt}, {"ended_at", l.TraceSummary.EndedAt}} {
		if _, _, ok := isoTime(f.at); !ok && f.at != nil && *f.at != "" {
			return c, fmt.Sprintf("found %q; expected an ISO 8601 time, or null", *f.at), "$.trace_summary." + f.key
		}
	}
	c = Condition{Model: lc.Model, Domain: lc.Domain, Granularity: gran, Level: lv, Scenario: lc.Scenario, FaultRate: lc.FaultRate,
		Repetition: *lc.Repetition, Recorded: l.Metrics, Summary: l.TraceSummary, Error: l.Error}
	if lc.Seed != nil {
		c.Seed = *lc.Seed
	} else {
		c.Seed = paper.Seed(c.Model, c.Scenario, c.Granularity, c.FaultRate, c.Repetition)
	}
	return c, "", ""
}

// Trace is a condition's trace file.
type Trace struct {
	ToolCalls []struct {
		Tool      string          `json:"tool_name"`
		Arguments json.RawMessage `json:"arguments"`
		Timestamp float64         `json:"timestamp"`
	} `json:"tool_calls"`
	ToolResponses []struct {
		Tool      string          `json:"tool_name"`
		Response  json.RawMessage `json:"response"`
		IsError   bool            `json:"is_error"`
		Timestamp float64         `json:"timestamp"`
	} `json:"tool_responses"`
	FinalAnswer *string `json:"final_answer"`
	TokensIn    int     `json:"total_tokens_in"`
	TokensOut   int     `json:"total_tokens_out"`
	WallSeconds float64 `json:"wall_time_seconds"`
	LLMTurns    int     `json:"num_llm_turns"`
	TimedOut    bool    `json:"timed_out"`
	Error       *string `json:"error"`
	StartedAt   *string `json:"started_at"`
	EndedAt     *string `json:"ended_at"`
}

// ReadTrace reads a trace file, bounded; a missing file is an error
// fs.ErrNotExist matches, one that is not a trace a speclang.ErrorList
// positioned in it.
func ReadTrace(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTraceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxTraceBytes {
		return nil, fmt.Errorf("%s: over %d MiB; no trace of the reference is", path, maxTraceBytes>>20)
	}
	t := &Trace{}
	if err := json.Unmarshal(data, t); err != nil {
		e := &speclang.Error{Pos: speclang.Pos{File: path, Line: 1, Col: 1}}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			e.Pos.Line, e.Pos.Col = lineCol(data, syn.Offset)
			e.Msg = fmt.Sprintf("found no JSON here (%v); expected the trace object the reference's runner writes", syn)
		case errors.As(err, &typ):
			e.Pos.Line, e.Pos.Col = lineCol(data, typ.Offset)
			e.Path, e.Msg = "$."+typ.Field, fmt.Sprintf("found %s; expected %s", typ.Value, jsonType(typ.Type.Kind().String()))
		default:
			e.Msg = fmt.Sprintf("found no trace (%v); expected the trace object the reference's runner writes", err)
		}
		return nil, speclang.ErrorList{e}
	}
	for _, f := range []struct {
		key string
		at  *string
	}{{"started_at", t.StartedAt}, {"ended_at", t.EndedAt}} {
		if _, _, ok := isoTime(f.at); !ok && f.at != nil && *f.at != "" {
			return nil, speclang.ErrorList{{Pos: speclang.Pos{File: path, Line: 1, Col: 1}, Path: "$." + f.key,
				Msg: fmt.Sprintf("found %q; expected an ISO 8601 time, or null", *f.at)}}
		}
	}
	return t, nil
}

// lineCol is where byte offset off of data is, counting from 1.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// traceFile is where a condition's trace is in a run folder.
func traceFile(runDir string, c *Condition) string {
	return filepath.Join(runDir, TracesDir, c.TraceName())
}

// checkRecorded refuses recorded metrics no condition can have, which a
// reader of the imported records would otherwise trust (and granite's
// journal reader refuses): a share outside 0 to 1, a τ outside -1 to 1,
// tokens below 0.
func checkRecorded(m *results.PaperMetrics) (why, where string) {
	if m == nil {
		return "", ""
	}
	rate := 0.0 // null: no error to recover from
	if m.ErrorRecovery != nil {
		rate = *m.ErrorRecovery
	}
	for _, v := range []struct {
		key    string
		x, low float64
	}{{"tool_selection_precision", m.ToolPrecision, 0}, {"tool_selection_recall", m.ToolRecall, 0}, {"tool_selection_f1", m.ToolF1, 0},
		{"argument_accuracy", m.ArgAcc, 0}, {"sequence_edit_distance", m.EditDistance, 0}, {"sequence_kendall_tau", m.KendallTau, -1},
		{"task_completion", m.TaskCompletion, 0}, {"error_recovery_rate", rate, 0}, {"redundant_call_rate", m.RedundantRate, 0}} {
		if !(v.x >= v.low && v.x <= 1) {
			return fmt.Sprintf("found %v; expected a number from %v to 1", v.x, v.low), "$.metrics." + v.key
		}
	}
	if m.Tokens < 0 {
		return fmt.Sprintf("found %d; expected 0 or more tokens", m.Tokens), "$.metrics.token_efficiency"
	}
	return "", ""
}
