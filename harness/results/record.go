package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/internal/mcpdomain"
)

// Record is one finished trial: one line of trials.jsonl. Its keys are a
// stable contract, described by specs/trial.schema.json; add keys, never
// rename or remove them.
type Record struct {
	TrialID    string `json:"trial_id"`
	Index      int    `json:"index"`
	Experiment string `json:"experiment"`
	Model      string `json:"model"`
	// Agent is "ollama" for a model, "builtin" for oracle and silent.
	Agent string `json:"agent"`
	// Domain is the benchmark domain, or an artifact's source.
	Domain string `json:"domain"`
	// Level is empty for an artifact of tools from outside the benchmark.
	Level mcpdomain.Level `json:"level,omitempty"`
	// Scenario is the scenario id, or the artifact id; Difficulty the
	// tier (easy, medium, hard; an artifact's simple or complex).
	Scenario   string `json:"scenario"`
	Difficulty string `json:"difficulty"`
	// Artifacts is the artifacts file an artifact trial was played from;
	// Assertions are its assertions' verdicts.
	Artifacts  string    `json:"artifacts,omitempty"`
	Assertions []Verdict `json:"assertions,omitempty"`
	Repetition int       `json:"repetition"`
	Host       string    `json:"host,omitempty"`
	StartedAt  string    `json:"started_at"`
	EndedAt    string    `json:"ended_at"`
	// Messages is the whole conversation as sent to and received from
	// the model, the tools' replies included.
	Messages    []Message `json:"messages"`
	Calls       []Call    `json:"calls"`
	FinalAnswer string    `json:"final_answer"`
	Turns       int       `json:"turns"`
	// StopReason is answer, max_turns, timeout or error.
	StopReason       string    `json:"stop_reason"`
	DoneReason       string    `json:"done_reason,omitempty"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	Durations        Durations `json:"durations"`
	// ErrorClass is empty, or the trial's first failure in time: one of
	// the ErrorClass constants. Error is the message of the failure that
	// stopped the trial, or of a tool call written as text.
	ErrorClass string `json:"error_class"`
	Error      string `json:"error,omitempty"`
	// Options are the effective Ollama options of every request.
	Options map[string]any `json:"options,omitempty"`
	// Energy is what the meter measured over the trial's agent run, and
	// which meter measured it.
	Energy  *meter.Reading `json:"energy,omitempty"`
	Metrics *Metrics       `json:"metrics,omitempty"`
}

// classify records a failure's class unless an earlier failure was
// recorded: a trial's class is its first failure in time.
func (r *Record) classify(class string) {
	if r.ErrorClass == "" {
		r.ErrorClass = class
	}
}

// Message is one chat message.
type Message struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	Thinking  string         `json:"thinking,omitempty"`
	ToolCalls []MessageCall  `json:"tool_calls,omitempty"`
	ToolName  string         `json:"tool_name,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// MessageCall is a tool call as the model wrote it.
type MessageCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Call is one tool call the agent made and what came of it.
type Call struct {
	Turn      int             `json:"turn"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	// ErrorClass is unknown_tool, schema_violation or tool_error when
	// the call failed.
	ErrorClass string  `json:"error_class,omitempty"`
	LatencyMS  float64 `json:"latency_ms"`
}

// Durations are Ollama's timings summed over the trial's requests, in
// nanoseconds, plus the wall time spent waiting for the model.
type Durations struct {
	TotalNS      int64 `json:"total_ns"`
	LoadNS       int64 `json:"load_ns"`
	PromptEvalNS int64 `json:"prompt_eval_ns"`
	EvalNS       int64 `json:"eval_ns"`
	ModelWaitNS  int64 `json:"model_wait_ns"`
}

// Metrics are the trial's scores.
type Metrics struct {
	// TC is task completion judged by the task (see Score); TCStrict the
	// byte-equal final store verdict of τ-bench, kept beside it.
	TC       float64 `json:"tc"`
	TCStrict float64 `json:"tc_strict"`
	F1       float64 `json:"f1"`
	ActionF1 float64 `json:"action_f1"`
	// ArgAcc is the paper's argument accuracy (k-th gold call of a tool
	// against its k-th call); ActionArgAcc pairs calls within the same
	// (tool, action) by the best assignment, so that order does not count.
	ArgAcc       float64  `json:"arg_acc"`
	ActionArgAcc float64  `json:"action_arg_acc"`
	ZeroToolCall bool     `json:"zero_tool_call"`
	Timeout      bool     `json:"timeout"`
	WallS        float64  `json:"wall_s"`
	EnergyJ      *float64 `json:"energy_j"`
	ToolCalls    int      `json:"tool_calls"`
	// Redundant counts repeated identical calls; RedundantRate is their
	// share of the calls.
	Redundant     int     `json:"redundant_calls"`
	RedundantRate float64 `json:"redundant_rate"`
	// StateOK, FactsOK and ChangesOK are TC's parts beside the answer: the
	// state conditions hold, the answer states every fact, and the store
	// changed nothing the task did not ask for. SnapshotOK is tc_strict's:
	// the final store equals a right final store byte for byte.
	SnapshotOK bool `json:"snapshot_ok"`
	FactsOK    bool `json:"facts_ok"`
	StateOK    bool `json:"state_ok"`
	ChangesOK  bool `json:"changes_ok"`
	// Why says, when TC is 0, every reason, in words.
	Why []string `json:"why,omitempty"`
	// BlockersFailed and WarningsFailed count an artifact trial's failed
	// assertions by severity (see ArtifactSet.Score).
	BlockersFailed int `json:"blockers_failed,omitempty"`
	WarningsFailed int `json:"warnings_failed,omitempty"`
}

// Error classes of calls and trials.
const (
	ErrMalformed = "malformed_tool_call"
	ErrUnknown   = "unknown_tool"
	ErrSchema    = "schema_violation"
	ErrTool      = "tool_error"
	ErrTransport = "transport_error"
	ErrTimeout   = "timeout"
)

// Why a trial stopped.
const (
	stopAnswer   = "answer"
	stopMaxTurns = "max_turns"
	stopTimeout  = "timeout"
	stopError    = "error"
)

const (
	// TrialsFile is the journal's name in the output folder.
	TrialsFile    = "trials.jsonl"
	agentOllama   = "ollama"
	agentBuiltin  = "builtin"
	journalBuffer = 256
)

// Journal appends records to trials.jsonl. Each record is one write of one
// whole line, and the file is synced before a record counts as recorded,
// so a run killed at any moment leaves only whole records (and at worst
// one partial last line, which ReadJournal drops).
//
// Appends are queued for a writer goroutine. Its first failed write or
// sync (a full disk) ends the journal: later appends return that error at
// once, and failed is closed, so that a runner can stop feeding trials
// whose records could not be kept.
type Journal struct {
	path   string
	f      journalFile
	in     chan []byte
	done   chan error
	failed chan struct{}
	err    error // the failure; set before failed is closed, never after
	once   sync.Once
	closed error // what Close returns
}

// journalFile is what a Journal writes to: the journal's *os.File, or in
// tests a disk that fills up.
type journalFile interface {
	io.Writer
	Sync() error
	Close() error
}

// OpenJournal opens path for appending after dropping a partial last line.
// It returns the records already there. The caller holds the folder's
// lock (lockOut), as Run and Merge do: nothing else may write the file
// between the drop and the appends.
func OpenJournal(path string) (*Journal, []Record, error) {
	return openJournal(path, nil)
}

// openJournal is OpenJournal with the file passed through disk when that
// is not nil.
func openJournal(path string, disk func(*os.File) journalFile) (*Journal, []Record, error) {
	recs, good, err := ReadJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		st, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if st.Size() > good {
			if err := os.Truncate(path, good); err != nil {
				return nil, nil, fmt.Errorf("drop the partial last line of %s: %w", path, err)
			}
		}
	}
	// O_APPEND: every write lands at the end of the file as it is then,
	// never at an offset this process remembers, so even a writer that
	// bypassed the lock could not overwrite records.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	var jf journalFile = f
	if disk != nil {
		jf = disk(f)
	}
	j := &Journal{path: path, f: jf, in: make(chan []byte, journalBuffer), done: make(chan error, 1), failed: make(chan struct{})}
	go j.loop()
	return j, recs, nil
}

// loop writes queued lines, syncing once per batch (group commit). After a
// failure it writes nothing more, only drains the queue: a failed write
// may leave part of a line, harmless as the last line (ReadJournal drops
// it) but damage if whole lines followed it.
func (j *Journal) loop() {
	failed := false
	for line := range j.in {
		if failed {
			continue
		}
		err := j.write(line)
		for more := true; more && err == nil; {
			select {
			case l, ok := <-j.in:
				if !ok {
					more = false
					break
				}
				err = j.write(l)
			default:
				more = false
			}
		}
		if err != nil { // told before the sync, which may take a while
			j.fail(err)
			failed = true
		}
		// Synced even after a failed write, which keeps the whole lines
		// before it (a partial one is dropped when the journal reopens).
		if err := j.f.Sync(); err != nil && !failed {
			j.fail(j.pathError("sync", err))
			failed = true
		}
	}
	cerr := j.f.Close()
	switch {
	case failed:
		j.done <- j.err
	case cerr != nil:
		j.done <- j.pathError("close", cerr)
	default:
		j.done <- nil
	}
}

// fail ends the journal with err, for Append and for runners watching
// failed.
func (j *Journal) fail(err error) {
	j.err = err
	close(j.failed)
}

func (j *Journal) write(line []byte) error {
	if _, err := j.f.Write(line); err != nil {
		return j.pathError("write", err)
	}
	return nil
}

// pathError names the journal's file whatever wrote it, unwrapping the
// *fs.PathError of an *os.File so that the path is not said twice.
func (j *Journal) pathError(op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: j.path, Err: err}
}

// Append queues a record; it is on disk once Close returns nil. Once a
// write has failed, Append returns that error and queues nothing.
func (j *Journal) Append(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("trial %s: %w", r.TrialID, err)
	}
	select {
	case <-j.failed: // checked first: a free queue would otherwise hide it
		return j.err
	default:
	}
	select {
	case j.in <- append(b, '\n'):
		return nil
	case <-j.failed:
		return j.err
	}
}

// Close flushes, syncs and closes the journal. It returns the first failed
// write or sync, if any, and returns the same again when called again.
func (j *Journal) Close() error {
	j.once.Do(func() {
		close(j.in)
		j.closed = <-j.done
	})
	return j.closed
}

// ReadJournal reads the whole records of a trials.jsonl and the byte
// length they span. A last line without its newline, or one that is not a
// JSON object, is the remains of a killed write and is not counted;
// damage anywhere else is an error. The first record of a trial id wins.
func ReadJournal(path string) ([]Record, int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var out []Record
	seen := map[string]bool{}
	var good int64
	for lineNo := 1; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // partial last line
		}
		line := data[:i]
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.TrialID == "" {
			if len(data) == i+1 {
				break // a damaged last line, also the remains of a kill
			}
			return nil, 0, fmt.Errorf("%s:%d: not a trial record: %v", path, lineNo, err)
		}
		if !seen[r.TrialID] {
			seen[r.TrialID] = true
			out = append(out, r)
		}
		good += int64(i + 1)
		data = data[i+1:]
	}
	return out, good, nil
}
