package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/sandbox"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
)

// Bounds on what granite keeps of an agent command's output: stdout is
// captured up to MaxStdout (the rest is counted and dropped), the answer
// taken from it up to MaxAnswer, and the last maxStderr bytes of stderr.
const (
	MaxStdout = 1 << 20
	MaxAnswer = 64 << 10
	maxStderr = 8 << 10
)

// maxRequestBody bounds one request the agent sends its trial's server
// (serve.Options.MaxBody's default); larger is refused with 413.
const maxRequestBody = 1 << 20

// WaitDelay is how long granite waits, after the agent exits or is
// killed, for output pipes its leftover children still hold.
const WaitDelay = 2 * time.Second

// CommandData are the fields an agent command's arguments and env values
// may use, as text/template fields ({{.Prompt}}). The bearer token is not
// one: it would show in the process list; it is in the configuration file
// and in GRANITE_MCP_TOKEN.
type CommandData struct {
	// Prompt is the task's prompt (a multi-turn task's user turns, one
	// paragraph each); Prompts lists them apart.
	Prompt  string
	Prompts []string
	// MCPConfig is the configuration file written for the agent ("" for
	// mcp_config env); MCPURL is the trial's streamable HTTP endpoint.
	MCPConfig string
	MCPURL    string
	// Dir is the trial's private folder, where the command runs; Home is
	// the HOME it gets.
	Dir  string
	Home string
	// What the trial plays.
	Domain, Level, Scenario, TrialID, Model string
}

// parseTemplate parses one templated argument; missing keys are errors.
func parseTemplate(text string) (*template.Template, error) {
	return template.New("arg").Option("missingkey=error").Parse(text)
}

// expand renders a templated argument.
func expand(text string, data *CommandData) (string, error) {
	t, err := parseTemplate(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkTemplate reports what is wrong with a templated value, trying it on
// sample data so that unknown fields are found before any trial runs.
func checkTemplate(text, format string) string {
	if _, err := expand(text, &CommandData{MCPConfig: "x", Prompts: []string{"p"}}); err != nil {
		return err.Error()
	}
	if (format == "" || format == results.MCPConfigEnv) && strings.Contains(text, ".MCPConfig") {
		return "{{.MCPConfig}} is empty with mcp_config env; set mcp_config to claude, codex or gemini, or read GRANITE_MCP_URL and GRANITE_MCP_TOKEN"
	}
	return ""
}

// checkCommand checks a command entry: a command to run, templates that
// parse and name known fields, and no model settings. at gives the path
// of one of the entry's fields.
func checkCommand(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	var list speclang.ErrorList
	if len(m.Command) == 0 {
		list = append(list, doc.Errorf(at(""), "found backend command without command; expected the program and its arguments, like [my-agent, --prompt, '{{.Prompt}}']"))
	}
	for k, arg := range m.Command {
		if msg := checkTemplate(arg, m.MCPConfig); msg != "" {
			list = append(list, doc.Errorf(append(at("command"), k), "found argument %q: %s; expected a text/template over %s", arg, msg, commandFields))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		if msg := checkTemplate(m.Env[k], m.MCPConfig); msg != "" {
			list = append(list, doc.Errorf(append(at("env"), k), "found env %s=%q: %s; expected a text/template over %s", k, m.Env[k], msg, commandFields))
		}
	}
	for _, f := range modelOnly(m) {
		list = append(list, doc.Errorf(at(f), "found %s on an agent command; expected it only on a model: the command brings its own model and sampling", f))
	}
	return list
}

// commandFields names CommandData's fields, for messages.
const commandFields = "{{.Prompt}}, {{.Prompts}}, {{.MCPConfig}}, {{.MCPURL}}, {{.Dir}}, {{.Home}}, {{.Domain}}, {{.Level}}, {{.Scenario}}, {{.TrialID}}, {{.Model}}"

// commandOnly lists the command settings a model entry sets.
func commandOnly(m results.ModelEntry) []string {
	var out []string
	for _, f := range []struct {
		key string
		set bool
	}{{"command", len(m.Command) > 0}, {"mcp_config", m.MCPConfig != ""}, {"answer", m.Answer != nil},
		{"timeout_seconds", m.TimeoutSeconds > 0}, {"env", len(m.Env) > 0}, {"pass_env", len(m.PassEnv) > 0}, {"empty_home", m.EmptyHome != nil},
		{"limits", m.Limits != nil}} {
		if f.set {
			out = append(out, f.key)
		}
	}
	return out
}

// modelOnly lists the model settings a command entry sets: an agent
// command brings its own model and sampling.
func modelOnly(m results.ModelEntry) []string {
	var out []string
	for _, f := range []struct {
		key string
		set bool
	}{{"base_url", m.BaseURL != ""}, {"api_key_env", m.APIKeyEnv != ""}, {"model", m.Model != ""},
		{"temperature", m.Temperature != nil}, {"max_tokens", m.MaxTokens > 0}, {"seed", m.Seed != nil}} {
		if f.set {
			out = append(out, f.key)
		}
	}
	return out
}

// Isolation settings: how agent commands are to be contained.
const (
	// IsolationAuto: in namespaces where the kernel allows it, else none,
	// said at preflight.
	IsolationAuto = "auto"
	// IsolationNamespaces: in namespaces, or the run does not start.
	IsolationNamespaces = string(sandbox.Namespaces)
	// IsolationNone: in a process group, as when namespaces are missing.
	IsolationNone = string(sandbox.None)
)

// namespacesAvailable is sandbox.Available; tests stand in a kernel that
// refuses namespaces.
var namespacesAvailable = sandbox.Available

// isolation decides how the agent commands of entries (those with
// trials to run) are contained (asked: one of the Isolation settings, ""
// for auto), saying on w when they cannot be contained as well as asked.
// It is "" when there are none.
func isolation(entries []results.ModelEntry, asked string, w io.Writer) (sandbox.Mode, error) {
	if len(entries) == 0 {
		return "", nil
	}
	switch asked {
	case IsolationNone:
		fmt.Fprintln(w, "warning: agent commands run with isolation none (--isolation none): an agent can read the environment, and so the token, of another trial's agent running beside it, and a process it starts in a session of its own outlives the trial")
		return sandbox.None, nil
	case "", IsolationAuto, IsolationNamespaces:
	default:
		return "", fmt.Errorf("found isolation %q; expected auto, namespaces or none", asked)
	}
	ok, why := namespacesAvailable()
	switch {
	case ok:
		return sandbox.Namespaces, nil
	case asked == IsolationNamespaces:
		return "", fmt.Errorf("agent commands cannot run in namespaces here: %s; allow unprivileged user namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or the AppArmor restriction on Ubuntu) or run with --isolation none", why)
	}
	fmt.Fprintf(w, "warning: agent commands run with isolation none: namespaces are unavailable here (%s). An agent can read the environment, and so the token, of another trial's agent running beside it, and a process it starts in a session of its own outlives the trial; run.json records isolation none\n", why)
	return sandbox.None, nil
}

// commandAgent runs an agent program per trial: it serves the trial's
// server over streamable HTTP on a loopback port of its own with a
// bearer token for that trial only, writes the client configuration the
// program expects into a private folder, runs the program in its own
// process group, and records every call the program made, in every
// session, as the trial's calls.
type commandAgent struct {
	entry results.ModelEntry
	// mode is how its process is contained: the run's, decided at
	// preflight (see isolation).
	mode sandbox.Mode
	// cover are the folders it must not see (Env.Hidden).
	cover []string
}

// limitsOf is what one trial of the entry may use: its limits, in the
// sandbox's units (what it leaves out the sandbox fills with its
// defaults).
func limitsOf(e results.ModelEntry) sandbox.Limits {
	if e.Limits == nil {
		return sandbox.Limits{}
	}
	return sandbox.Limits{Memory: int64(e.Limits.MemoryMiB) << 20, Tasks: e.Limits.Tasks, Disk: int64(e.Limits.DiskMiB) << 20}
}

// newToken returns a random bearer token.
func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// served is a trial's server on its loopback port.
type served struct {
	url, token string
	handler    *serve.Handler
	conns      *serve.ConnLimit
	hs         *http.Server
	done       chan error
}

// serveTrial serves the trial's MCP server (the very server its session
// is on, so the store scored is the store the agent changed) on a
// loopback port of its own, behind a token of its own, admitting at most
// limit tool calls: the call after them calls over.
func serveTrial(tr *Trial, rec func(serve.Observed), seen func(serve.Seen), limit int, over func()) (*served, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	h, err := serve.NewHandler(serve.Existing(tr.Session.Server()), serve.Options{Token: tok, OnCall: rec, MaxBody: maxRequestBody, MaxCalls: limit, OnCallLimit: over, OnRequest: seen, SharedStore: true})
	if err != nil {
		return nil, err
	}
	ln, err := listenTrial()
	if err != nil {
		_ = h.Close(context.Background())
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", serve.Guard(h, serve.GuardOptions{}))
	s := &served{url: "http://" + ln.Addr().String() + "/mcp", token: tok, handler: h, conns: ln, done: make(chan error, 1),
		hs: trialHTTPServer(mux)}
	go func() { s.done <- s.hs.Serve(ln) }()
	return s, nil
}

// close stops serving: open streams end at once.
func (s *served) close() {
	_ = s.hs.Close()
	<-s.done
	_ = s.handler.Close(context.Background())
}

// process is how an agent command ran.
type process struct {
	run    results.CommandRun
	stdout []byte
	// started and exited bound the agent's own time.
	started, exited time.Time
	// startErr is set when the program could not start; err when running
	// it failed otherwise.
	startErr, err error
}

// runProcess runs argv without a shell in dir, contained as mode says
// (see package sandbox): in namespaces of its own, or in a process group
// of its own; either way everything it started is killed when ctx ends
// and once it exits, so that nothing outlives the trial.
func runProcess(ctx context.Context, mode sandbox.Mode, s sandbox.Program) *process {
	out := &headBuffer{max: MaxStdout}
	errs := &tailBuffer{max: maxStderr}
	res := sandbox.Run(ctx, mode, s, out, errs, WaitDelay)
	p := &process{started: res.Started, exited: res.Exited, startErr: res.StartErr, err: res.Err}
	p.run.Killed, p.run.ExitCode, p.run.Signal, p.run.OverLimit = res.Killed, res.ExitCode, res.Signal, res.OverLimit
	p.run.Isolation = string(mode)
	p.stdout = out.buf.Bytes()
	p.run.StdoutBytes, p.run.StdoutTruncated = out.n, out.n > int64(out.buf.Len())
	p.run.StderrTail = strings.ToValidUTF8(string(errs.bytes()), "\uFFFD")
	return p
}

// headBuffer keeps the first max bytes written and counts them all.
type headBuffer struct {
	buf bytes.Buffer
	max int
	n   int64
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.n += int64(len(b))
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}

// passes reports whether granite's variable k reaches an agent command
// of entry e.
func passes(e results.ModelEntry, k string) bool {
	return sandbox.Passes(k) || slices.Contains(e.PassEnv, k)
}

// commandEnv is the agent command's environment: the passed part of
// granite's (sandbox.Passes and the entry's pass_env), HOME when
// the home is empty (the default), GRANITE_MCP_URL, GRANITE_MCP_TOKEN and
// GRANITE_MCP_CONFIG, then the entry's env.
func commandEnv(e results.ModelEntry, data *CommandData, token string) ([]string, error) {
	set := map[string]string{"GRANITE_MCP_URL": data.MCPURL, "GRANITE_MCP_TOKEN": token, "GRANITE_MCP_CONFIG": data.MCPConfig}
	if e.HomeIsEmpty() {
		set["HOME"] = data.Home
	}
	for k, v := range e.Env {
		x, err := expand(v, data)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		set[k] = x
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok && passes(e, k) {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out, nil
}

// ClipAnswer bounds an answer at MaxAnswer bytes, on a rune boundary.
func ClipAnswer(s string) string {
	if len(s) <= MaxAnswer {
		return s
	}
	return strings.ToValidUTF8(s[:MaxAnswer], "")
}

func (a *commandAgent) Run(ctx context.Context, tr *Trial) {
	rec, e := tr.Record, a.entry
	begin := time.Now()
	cr := &CallRecorder{}
	format := e.MCPConfig
	if format == "" {
		format = results.MCPConfigEnv
	}
	rec.Command = &results.CommandRun{MCPConfig: format}
	fail := func(err error) {
		rec.Error, rec.StopReason = err.Error(), results.StopError
		rec.Classify(results.ErrAgent)
		FillServed(rec, tr.Prompts, nil, "")
		rec.Command.OverheadMS = ms(time.Since(begin))
	}
	// The call past the cap stops the trial: the agent is killed as at
	// the timeout, and the record says why.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var capped atomic.Bool
	limit := tr.MaxCalls
	if limit <= 0 {
		limit = results.DefaultMaxCalls
	}
	watch := &connWatch{}
	srv, err := serveTrial(tr, cr.Add, watch.see, limit, func() { capped.Store(true); stop() })
	if err != nil {
		fail(err)
		return
	}
	priv, err := sandbox.MkdirPrivate("agent-")
	if err != nil {
		srv.close()
		fail(err)
		return
	}
	defer priv.Remove()
	dir, hide := priv.Dir, priv.Hide
	data := &CommandData{Prompt: strings.Join(tr.Prompts, "\n\n"), Prompts: tr.Prompts, MCPURL: srv.url, Dir: dir,
		Home: os.Getenv("HOME"), TrialID: rec.TrialID, Model: rec.Model}
	data.Domain, data.Level, data.Scenario = rec.Domain, string(rec.Level), rec.Scenario
	p, err := a.start(ctx, srv, data, hide, format)
	teardown := time.Now()
	srv.close()
	if err != nil {
		fail(err)
		return
	}
	rec.Command.OverheadMS = ms(p.started.Sub(begin) + time.Since(teardown) + teardown.Sub(p.exited))
	calls, sessions := ServedCalls(cr.Observed(), begin, tr.Valid)
	rec.Command.ExitCode, rec.Command.Signal, rec.Command.Killed, rec.Command.Isolation = p.run.ExitCode, p.run.Signal, p.run.Killed, p.run.Isolation
	rec.Command.OverLimit = p.run.OverLimit
	rec.Command.StdoutBytes, rec.Command.StdoutTruncated, rec.Command.StderrTail = p.run.StdoutBytes, p.run.StdoutTruncated, p.run.StderrTail
	rec.Command.Sessions = sessions
	rec.Command.Connection = watch.connection()
	answer, aerr := answerFrom(p.stdout, e.Answer)
	FillServed(rec, tr.Prompts, calls, answer)
	class, why := notConnected(rec.Command.Connection, len(calls))
	switch {
	case capped.Load():
		rec.StopReason, rec.Error = results.StopCallLimit, results.CallLimitError(limit)
	case p.run.Killed:
		rec.StopReason, rec.Error = results.StopTimeout, "the agent command did not finish in time; it and everything it started were killed"
		rec.Classify(results.ErrTimeout)
	case p.run.OverLimit != "":
		rec.StopReason = results.StopError
		rec.Error = "the agent command went over a limit of its trial (" + p.run.OverLimit + "); it and everything it started were ended"
		rec.Classify(results.ErrAgent)
	case class != "":
		// Whatever else went wrong, an agent that never saw its tools
		// failed first there; its exit says what it made of that.
		rec.StopReason, rec.Error = results.StopError, why
		switch {
		case p.run.Signal != "":
			rec.Error += " (it was ended by signal " + p.run.Signal + ")"
		case p.run.ExitCode != 0:
			rec.Error += fmt.Sprintf(" (it exited with status %d)", p.run.ExitCode)
		}
		rec.Classify(class)
	case p.err != nil:
		rec.StopReason, rec.Error = results.StopError, "agent command: "+p.err.Error()
		rec.Classify(results.ErrAgent)
	case p.run.ExitCode != 0:
		rec.StopReason = results.StopError
		rec.Error = fmt.Sprintf("the agent command exited with status %d", p.run.ExitCode)
		if p.run.Signal != "" {
			rec.Error = "the agent command was ended by signal " + p.run.Signal
		}
		rec.Classify(results.ErrAgent)
	case aerr != nil:
		rec.StopReason, rec.Error = results.StopError, aerr.Error()
		rec.Classify(results.ErrAgent)
	default:
		rec.StopReason = results.StopAnswer
	}
}

// start writes the client configuration, expands the command and runs it
// to the end.
func (a *commandAgent) start(ctx context.Context, srv *served, data *CommandData, hide, format string) (*process, error) {
	if a.entry.HomeIsEmpty() {
		data.Home = filepath.Join(data.Dir, "home")
		if err := os.Mkdir(data.Home, 0o700); err != nil {
			return nil, err
		}
	}
	cfgPath, err := writeMCPConfig(data.Dir, format, srv.url, srv.token)
	if err != nil {
		return nil, fmt.Errorf("write the %s MCP configuration: %w", format, err)
	}
	data.MCPConfig = cfgPath
	argv := make([]string, len(a.entry.Command))
	for i, arg := range a.entry.Command {
		if argv[i], err = expand(arg, data); err != nil {
			return nil, fmt.Errorf("command argument %d: %w", i, err)
		}
	}
	env, err := commandEnv(a.entry, data, srv.token)
	if err != nil {
		return nil, err
	}
	mode := a.mode
	if mode == "" {
		mode = sandbox.None
	}
	p := runProcess(ctx, mode, sandbox.Program{Argv: argv, Env: env, Dir: data.Dir, Hide: hide, Cover: a.cover, Limits: limitsOf(a.entry)})
	if p.startErr != nil {
		return nil, fmt.Errorf("start the agent command: %w", p.startErr)
	}
	return p, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// commandBackend is the kind of agent programs granite runs per trial
// (Claude Code, Codex, Gemini CLI, your own), each on a server of its own.
type commandBackend struct{}

// BackendCommand names the kind of agent programs run as commands: any
// MCP client, which granite serves the trial's tools to over HTTP. It is
// also Record.Agent of their trials.
const BackendCommand = "command"

func (commandBackend) Name() string  { return BackendCommand }
func (commandBackend) Label() string { return BackendCommand }

func (commandBackend) Check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	return checkCommand(doc, m, at)
}

// Preflight decides how the run's agent commands are contained, saying
// so when they cannot be as well as asked, for run.json (env.Mode).
func (commandBackend) Preflight(_ context.Context, env *Env, entries []results.ModelEntry) error {
	mode, err := isolation(entries, env.Isolation, env.Progress)
	env.Mode = mode
	if err != nil {
		return err
	}
	return checkDescriptors(entries)
}

// Workers gives the entry its parallel workers; each trial starts the
// program afresh.
func (commandBackend) Workers(_ context.Context, env *Env, e results.ModelEntry, _ int) ([]Worker, error) {
	workers := make([]Worker, e.Workers())
	for i := range workers {
		workers[i] = Worker{Agent: &commandAgent{entry: e, mode: env.Mode, cover: env.Hidden}}
	}
	return workers, nil
}

// notCommand reports the command settings of an entry that is no command.
func notCommand(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	var list speclang.ErrorList
	for _, f := range commandOnly(m) {
		list = append(list, doc.Errorf(at(f), "found %s on a model; expected it only with backend: command (an agent program granite runs per trial)", f))
	}
	return list
}
