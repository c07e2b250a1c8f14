package results

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
)

// TrialID names a trial of a scenario (or artifact) played through an
// interface, the same across runs, shards and resumes of one config:
// <model>/<scenario>/<interface>/r<repetition>. A level as written is its
// identity interface, named for the level: <model>/<scenario>/L3/r1.
func TrialID(model, scenario, iface string, rep int) string {
	return fmt.Sprintf("%s/%s/%s/r%d", model, scenario, iface, rep)
}

// FaultTrialID names a trial played under a fault setting: TrialID for a
// setting of no faults (rate 0, or none at all), so that adding a
// setting of no faults to a config keeps its trials' ids, and
// <model>/<scenario>/<interface>/<setting>/r<repetition> otherwise.
func FaultTrialID(model, scenario, iface string, setting faults.Setting, rep int) string {
	if setting.None() {
		return TrialID(model, scenario, iface, rep)
	}
	return fmt.Sprintf("%s/%s/%s/%s/r%d", model, scenario, iface, setting.Name, rep)
}

// InterfaceName is the interface the trial played: Interface, or the level
// as written.
func (r *Record) InterfaceName() string {
	if r.Interface != "" {
		return r.Interface
	}
	return string(r.Level)
}

// ArtifactTrialID names a trial of a synthesized artifact:
// <model>/<artifact id>/r<repetition>.
func ArtifactTrialID(model, artifact string, rep int) string {
	return fmt.Sprintf("%s/%s/r%d", model, artifact, rep)
}

// Record is one finished trial: one line of trials.jsonl. Its keys are a
// stable contract, described by specs/trial.schema.json; add keys, never
// rename or remove them.
type Record struct {
	TrialID    string `json:"trial_id"`
	Index      int    `json:"index"`
	Experiment string `json:"experiment"`
	Model      string `json:"model"`
	// Agent is "ollama" or "openai" for a model (its backend), "builtin"
	// for oracle and silent, "command" for an agent command, "recorded"
	// for a recorded interactive session.
	Agent string `json:"agent"`
	// Domain is the benchmark domain, or an artifact's source.
	Domain string `json:"domain"`
	// Level is empty for an artifact of tools from outside the benchmark.
	Level level.Level `json:"level,omitempty"`
	// Interface names the interface the trial's tools were shown through
	// when it transforms its level (names, descriptions, action encoding,
	// schema shape; see package surface): "L3-terse". Empty is the level as
	// written; InterfaceName says which.
	Interface string `json:"interface,omitempty"`
	// Faults names the fault setting the trial was played under (see
	// package faults); empty is none, or a setting of rate 0.
	Faults string `json:"faults,omitempty"`
	// Scenario is the scenario id, or the artifact id; Difficulty the
	// tier (easy, medium, hard; an artifact's simple or complex).
	Scenario   string `json:"scenario"`
	Difficulty string `json:"difficulty"`
	// Artifacts is the artifacts file an artifact trial was played from;
	// Assertions are its assertions' verdicts.
	Artifacts  string    `json:"artifacts,omitempty"`
	Assertions []Verdict `json:"assertions,omitempty"`
	Repetition int       `json:"repetition"`
	// Host is the Ollama host or the OpenAI-compatible base URL.
	Host string `json:"host,omitempty"`
	// Parallel is how many trials of the model could run at once; above
	// 1 the trial's latency and energy are not comparable with a
	// sequential run's (Energy.Shared says how its energy was split).
	Parallel  int    `json:"parallel,omitempty"`
	StartedAt string `json:"started_at"`
	EndedAt   string `json:"ended_at"`
	// Messages is the whole conversation as sent to and received from
	// the model, the tools' replies included.
	Messages    []Message `json:"messages"`
	Calls       []Call    `json:"calls"`
	FinalAnswer string    `json:"final_answer"`
	Turns       int       `json:"turns"`
	// StopReason is answer, max_turns, call_limit, timeout or error.
	StopReason       StopReason `json:"stop_reason"`
	DoneReason       string     `json:"done_reason,omitempty"`
	PromptTokens     int        `json:"prompt_tokens"`
	CompletionTokens int        `json:"completion_tokens"`
	Durations        Durations  `json:"durations"`
	// ErrorClass is empty, or the trial's first failure in time: one of
	// the ErrorClass constants. Error is the message of the failure that
	// stopped the trial, or of a tool call written as text.
	ErrorClass ErrorClass `json:"error_class"`
	Error      string     `json:"error,omitempty"`
	// Options are the effective options of every request (Ollama's
	// options, or an OpenAI-compatible request's sampling fields).
	Options map[string]any `json:"options,omitempty"`
	// Energy is what the meter measured over the trial's agent run, and
	// which meter measured it.
	Energy  *Reading `json:"energy,omitempty"`
	Metrics *Metrics `json:"metrics,omitempty"`
	// Command is how an agent command's process ended, for agent
	// "command".
	Command *CommandRun `json:"command,omitempty"`
	// Reference is, for a trial imported from the paper's reference
	// implementation (granite import runs), its condition and metrics as
	// its results.jsonl wrote them.
	Reference *ReferenceCondition `json:"reference,omitempty"`
}

// AgentImported is Record.Agent of a trial imported from the paper's
// reference implementation.
const AgentImported = "imported"

// ReferenceCondition is what the reference implementation wrote of one
// condition that granite does not otherwise keep.
type ReferenceCondition struct {
	// Granularity is its level key: primitive, composite_4, composite_2
	// or composite_1.
	Granularity string  `json:"granularity"`
	FaultRate   float64 `json:"fault_rate"`
	Seed        uint64  `json:"seed"`
	// Trace is the trace file the calls were read from, in traces/.
	Trace string `json:"trace,omitempty"`
	// Recorded are the metrics it wrote; Error its condition's error.
	Recorded *PaperMetrics `json:"recorded,omitempty"`
	Error    *string       `json:"error,omitempty"`
}

// AgentRecorded is Record.Agent of a session of an interactive client
// recorded by granite serve --record; every other agent is labelled by
// its backend (see agent.Backend).
const AgentRecorded = "recorded"

// CommandRun is how an agent command's process ran and ended.
type CommandRun struct {
	// ExitCode is the exit status (-1 when a signal ended it, named by
	// Signal); Killed is set when granite killed its process group at
	// the timeout.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	Killed   bool   `json:"killed,omitempty"`
	// StdoutBytes is what it printed; past the capture bound the rest
	// was counted and dropped (StdoutTruncated).
	StdoutBytes     int64 `json:"stdout_bytes"`
	StdoutTruncated bool  `json:"stdout_truncated,omitempty"`
	// StderrTail is the end of what it wrote to stderr.
	StderrTail string `json:"stderr_tail,omitempty"`
	// Sessions counts the MCP sessions that called tools.
	Sessions int `json:"sessions"`
	// Connection says how the agent reached its server (nil in records
	// made before it was kept).
	Connection *Connection `json:"connection,omitempty"`
	// MCPConfig is the client configuration format it was given.
	MCPConfig string `json:"mcp_config"`
	// Isolation is how its process was contained: "namespaces" (PID,
	// mount and user namespaces of its own) or "none" (a process group).
	Isolation string `json:"isolation,omitempty"`
	// OverLimit says which limit of its trial it went over, and by how
	// much, when granite ended it for that (see ModelEntry.Limits).
	OverLimit string `json:"over_limit,omitempty"`
	// OverheadMS is granite's own time around the agent: serving the
	// trial, writing its configuration, starting the process, and the
	// teardown after it exited.
	OverheadMS float64 `json:"overhead_ms"`
}

// Connection counts the requests an agent command sent its trial's
// server that show whether it connected at all: a client that never did
// (a wrong configuration, a disabled server, a wrong token) otherwise
// looks like an agent that chose to call nothing.
type Connection struct {
	// Initialize counts initialize requests: the sessions it opened.
	Initialize int `json:"initialize"`
	// ToolsList counts tools/list requests: how often it read the tools.
	ToolsList int `json:"tools_list"`
	// BadToken counts requests refused for a wrong token, NoToken those
	// refused for coming without one (mcp-go's client, for one, ends a
	// session with a DELETE that carries no header it was given).
	BadToken int `json:"bad_token"`
	NoToken  int `json:"no_token"`
}

// Classify records a failure's class unless an earlier failure was
// recorded: a trial's class is its first failure in time.
func (r *Record) Classify(class ErrorClass) {
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
	ErrorClass ErrorClass `json:"error_class,omitempty"`
	// Fault is the fault the server injected into the call under the
	// trial's fault setting (transient, rate_limit, timeout, partial,
	// offline; see docs/faults.md); empty for none.
	Fault     faults.Kind `json:"fault,omitempty"`
	LatencyMS float64     `json:"latency_ms"`
	// Session numbers the MCP session a recorded call came in (1 for the
	// first to call a tool), and AtMS is when it came, from the trial's
	// start: calls of agents granite serves over HTTP.
	Session int     `json:"session,omitempty"`
	AtMS    float64 `json:"at_ms,omitempty"`
	// ArgumentsBytes and ResultBytes are the lengths of the arguments and
	// the result as they came, when the record keeps them cut (see
	// CutArguments and CutText); 0 when they are kept whole.
	ArgumentsBytes int `json:"arguments_bytes,omitempty"`
	ResultBytes    int `json:"result_bytes,omitempty"`
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
	// TC is task completion judged by the task (see score.Score); TCStrict the
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
	// GoldCalls are the calls of the gold the trial was scored against:
	// its level's, as its interface's composition makes it (an atomic
	// interface's expanded). 0 in records written before granite kept it.
	GoldCalls int `json:"gold_calls,omitempty"`
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
	// FaultsInjected counts the calls the trial's fault setting faulted;
	// FaultsRecovered those of them whose operation's intended effect is
	// in the final store (docs/faults.md says how each is judged). Both
	// absent from trials without faults.
	FaultsInjected  int `json:"faults_injected,omitempty"`
	FaultsRecovered int `json:"faults_recovered,omitempty"`
	// FalseClaims counts what the final answer says is done, or holds,
	// that the final store does not hold (score.Score says how it is
	// read); Explain.Unheld lists each.
	FalseClaims int `json:"false_claims,omitempty"`
	// BlockersFailed and WarningsFailed count an artifact trial's failed
	// assertions by severity (see harness.ArtifactSet.Score).
	BlockersFailed int `json:"blockers_failed,omitempty"`
	WarningsFailed int `json:"warnings_failed,omitempty"`
	// Explain holds the verdict's reasons as data, for granite view and
	// jq (see Explanation).
	Explain *Explanation `json:"explain,omitempty"`
	// Paper holds the reference implementation's metrics, by its own
	// definitions (package harness/paper), beside granite's stronger ones
	// of the same names. Absent from records written before granite kept
	// them.
	Paper *PaperMetrics `json:"paper,omitempty"`
}

// PaperMetrics are the metric columns of the paper's reference
// implementation, under its own keys, so that its results.jsonl and
// granite's records compare column by column. Their definitions are the
// reference's (see package harness/paper), not granite's: tool F1 over
// sets of names, argument accuracy by greedy best match, completion by
// strings in the answer, no state read.
type PaperMetrics struct {
	ToolPrecision float64 `json:"tool_selection_precision"`
	ToolRecall    float64 `json:"tool_selection_recall"`
	ToolF1        float64 `json:"tool_selection_f1"`
	ArgAcc        float64 `json:"argument_accuracy"`
	// EditDistance is 0 for the gold's sequence of tool names, 1 for the
	// worst; KendallTau 1 for the gold's order, 0 with fewer than two
	// matched tools.
	EditDistance float64 `json:"sequence_edit_distance"`
	KendallTau   float64 `json:"sequence_kendall_tau"`
	// TaskCompletion is 1 when the answer contains every expected string,
	// ignoring case.
	TaskCompletion float64 `json:"task_completion"`
	// ErrorRecovery is the share of failed calls followed by any call;
	// nil when no call failed.
	ErrorRecovery *float64 `json:"error_recovery_rate"`
	// Tokens are the trial's prompt and completion tokens together.
	Tokens        int     `json:"token_efficiency"`
	RedundantRate float64 `json:"redundant_call_rate"`
}

// ErrorClass names the kind of a failed call or trial; the empty class is
// no failure.
type ErrorClass string

// Error classes of calls and trials.
const (
	ErrMalformed ErrorClass = "malformed_tool_call"
	ErrUnknown   ErrorClass = "unknown_tool"
	ErrSchema    ErrorClass = "schema_violation"
	ErrTool      ErrorClass = "tool_error"
	ErrTransport ErrorClass = "transport_error"
	ErrTimeout   ErrorClass = "timeout"
	// ErrContext is a request the model server refused as longer than the
	// model's context (an OpenAI-compatible endpoint's 400).
	ErrContext ErrorClass = "context_length_exceeded"
	// ErrAgent is an agent command that failed of itself: it exited with
	// an error or a signal, or printed no answer where it was told to.
	ErrAgent ErrorClass = "agent_error"
	// ErrNotConnected is an agent command that never listed its trial's
	// tools nor called one: its client was not configured to reach the
	// server, or left it disabled.
	ErrNotConnected ErrorClass = "agent_not_connected"
	// ErrBadToken is an agent command that never listed its trial's tools
	// nor called one, and whose requests came without the trial's token or
	// with a wrong one.
	ErrBadToken ErrorClass = "agent_bad_token"
	// ErrMalformedReply is a model reply the client cut off at its bound
	// in bytes (from max_tokens): an endpoint that streams without end.
	ErrMalformedReply ErrorClass = "malformed_reply"
	// ErrRepeatLimit is a reply the model server ended because the model
	// repeated one token over and over (Ollama's token repeat limit): the
	// reply has no final chunk, and greedy decoding repeats it if asked
	// again.
	ErrRepeatLimit ErrorClass = "repeat_limit"
	// ErrDroppedCall is a reply the model server emptied: tokens were
	// generated, and neither text nor a tool call came back (Ollama's
	// template tool parser drops a call it cannot parse or that names no
	// listed tool).
	ErrDroppedCall ErrorClass = "server_dropped_call"
)

// StopReason says why a trial stopped.
type StopReason string

// Why a trial stopped.
const (
	StopAnswer   StopReason = "answer"
	StopMaxTurns StopReason = "max_turns"
	// StopCallLimit is a trial stopped at its call cap (Config.CallLimit):
	// whatever it sends, a subject's record stays bounded.
	StopCallLimit StopReason = "call_limit"
	StopTimeout   StopReason = "timeout"
	StopError     StopReason = "error"
)

// Verdict is the outcome of one of an artifact's assertions.
type Verdict struct {
	Kind     string `json:"kind"`
	Tool     string `json:"tool"`
	Severity string `json:"severity"`
	Passed   bool   `json:"passed"`
	Why      string `json:"why,omitempty"`
}
