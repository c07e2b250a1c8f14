package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/gold"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/gguf"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamaserver"
	"github.com/mcpgranite/granite/internal/models/ollama/tinymodel"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/serve/servetest"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/scenarios"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// realPlay is the scenario the real-server trials play, and per level
// what the tiny models say to it.
type realPlay struct {
	domain   *speclang.Domain
	dom      *mcpdomain.Domain
	scenario *speclang.Scenario
	levels   map[level.Level]realLevel
}

// realLevel is one level of the scenario as a tiny model sees it.
type realLevel struct {
	// marker is a tool name only this level's tool list holds: the
	// selector that tells the model which level it is at.
	marker string
	// tool and args are the gold call as the level encodes it (the
	// action argument of a grouped tool included).
	tool string
	args string
	// typed is args with a number argument sent as a string.
	typed string
	// answer is what the oracle answers after the call: the tool's
	// result on a fresh store.
	answer string
	// unlisted is a tool name the level does not list and that holds no
	// name it lists.
	unlisted string
}

// pickRealPlay finds, in spec order, the first scenario whose gold is one
// call at every level and has a number argument at every level (so that
// a string-typed argument is a schema violation), and works out its
// levels: no scenario or domain is named, so that the real-server tests
// follow the benchmark as it grows.
func pickRealPlay(t *testing.T, spec *speclang.Spec, lookup gold.Lookup) *realPlay {
	t.Helper()
	for _, d := range spec.Domains {
		dom, ok := lookup(d.Name)
		if !ok {
			continue
		}
		for _, s := range d.Scenarios {
			if p := realLevels(t, d, dom, s); p != nil {
				return p
			}
		}
	}
	t.Fatal("no scenario of the benchmark has a gold of one call with a number argument at every level; the real-server tests need one")
	return nil
}

// realLevels works out a scenario's levels, or returns nil when its gold
// is not one call with a number argument at every level.
func realLevels(t *testing.T, d *speclang.Domain, dom *mcpdomain.Domain, s *speclang.Scenario) *realPlay {
	t.Helper()
	p := &realPlay{domain: d, dom: dom, scenario: s, levels: map[level.Level]realLevel{}}
	for _, l := range level.Levels {
		calls := s.Gold[l]
		if len(calls) != 1 {
			return nil
		}
		c := calls[0]
		typed := ""
		for _, arg := range slices.Sorted(maps.Keys(c.Args)) {
			switch v := c.Args[arg].(type) {
			case int, int64, uint64, float64:
				typed = string(c.With(arg, fmt.Sprint(v)))
			}
			if typed != "" {
				break
			}
		}
		if typed == "" {
			return nil
		}
		marker := onlyTool(dom, l)
		if marker == "" {
			return nil
		}
		sess, err := serve.Open(context.Background(), dom, servetest.Level(t, dom, l))
		if err != nil {
			t.Fatal(err)
		}
		res, err := sess.Call(context.Background(), c.Tool, c.JSON())
		sess.Close()
		if err != nil || res.IsError {
			t.Fatalf("%s at %s: the gold call %s %s on a fresh store: %v %s", s.ID, l, c.Tool, c.JSON(), err, res.Text)
		}
		unlisted := neverListed
		for _, tool := range dom.Tools[l] {
			if strings.Contains(unlisted, tool.Name) {
				t.Fatalf("%s at %s: tool %s is part of the name %s the tests take for an unlisted tool; choose another", s.ID, l, tool.Name, unlisted)
			}
		}
		p.levels[l] = realLevel{marker: marker, tool: c.Tool, args: string(c.JSON()), typed: typed, answer: res.Text, unlisted: unlisted}
	}
	return p
}

// onlyTool is a tool name of level l's list that no other level of the
// domain lists, or "" when there is none.
func onlyTool(dom *mcpdomain.Domain, l level.Level) string {
	for _, tool := range dom.Tools[l] {
		elsewhere := false
		for _, other := range level.Levels {
			if other != l && slices.ContainsFunc(dom.Tools[other], func(o *mcpdomain.Tool) bool { return o.Name == tool.Name }) {
				elsewhere = true
			}
		}
		if !elsewhere {
			return tool.Name
		}
	}
	return ""
}

// neverListed is a tool name no tool list holds: a rule that asks for
// it never matches.
const neverListed = "a_tool_no_server_lists"

// behaviour is what a tiny model replies at each level's first turn; its
// second turn is the oracle's answer.
type behaviour struct {
	name  string
	first func(realLevel) tinymodel.Reply
}

// The behaviours of the real-server tests.
var (
	rightCall = behaviour{"right", func(lv realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: tinymodel.Call(lv.tool, lv.args)}
	}}
	invalidJSON = behaviour{"invalid-json", func(lv realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: tinymodel.Call(lv.tool, strings.TrimSuffix(lv.args, "}"))}
	}}
	// unknownTool names a tool no list holds and whose name holds no
	// listed one (see unlisted).
	unknownTool = behaviour{"unknown-tool", func(lv realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: tinymodel.Call(lv.unlisted, lv.args)}
	}}
	// suffixedTool names the gold tool with a suffix: Ollama's
	// template-driven parser takes the listed name it finds inside the
	// text for the call's name, so the call arrives as the gold one.
	suffixedTool = behaviour{"suffixed-tool", func(lv realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: tinymodel.Call(lv.tool+"_unlisted", lv.args)}
	}}
	stringTyped = behaviour{"string-typed", func(lv realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: tinymodel.Call(lv.tool, lv.typed)}
	}}
	loopForever = behaviour{"loop", func(realLevel) tinymodel.Reply {
		return tinymodel.Reply{Text: " again", Loop: true}
	}}
)

// family is a set of tiny models that share one GGUF file: the same rules
// and replies, each model's template selecting only its own behaviour's
// rules (the others ask for a tool no list holds). Ollama keys a loaded
// runner by its weights file, so the family's models run on one runner
// and share its prompt cache: a level's prompt (system prompt, tool
// list, task) is evaluated once for them all, which on 2 cores is most
// of a trial's cost.
type family struct {
	typ        gguf.Type
	numCtx     int
	behaviours []behaviour
}

// model names a behaviour of the family under a parser.
func (f family) model(b behaviour, parser string) string {
	name := b.name + "-" + strings.ToLower(f.typ.String())
	if parser != "" {
		name += "-" + parser
	}
	return name
}

// script is the family's script with only behaviour b's rules live.
func (f family) script(p *realPlay, b behaviour, parser string) tinymodel.Script {
	s := tinymodel.Script{Parser: parser, Type: f.typ, NumCtx: f.numCtx, Seed: 7,
		Default: tinymodel.Reply{Text: "No rule of the script matches this request."}}
	for _, other := range f.behaviours {
		for _, l := range level.Levels {
			lv := p.levels[l]
			when := []string{lv.marker}
			if other.name != b.name {
				when = []string{neverListed}
			}
			s.Rules = append(s.Rules,
				tinymodel.Rule{When: tinymodel.Selector{Tools: when}, Reply: other.first(lv)},
				tinymodel.Rule{When: tinymodel.Selector{Tools: when, Turn: 1}, Reply: tinymodel.Reply{Text: lv.answer}})
		}
	}
	return s
}

// create builds behaviour b's model under parser and creates it on the
// server; every model of the family has the same GGUF bytes.
func (f family) create(t *testing.T, srv *ollamaserver.Server, p *realPlay, b behaviour, parser string) string {
	t.Helper()
	built, err := tinymodel.Build(f.script(p, b, parser))
	if err != nil {
		t.Fatalf("model %s: %v", f.model(b, parser), err)
	}
	name := f.model(b, parser)
	srv.Create(t, name, built.Modelfile("./model.gguf"), map[string][]byte{"model.gguf": built.GGUF})
	return name
}

// realAPI is a way granite talks to the server: the native API streamed
// or not, or the OpenAI-compatible one at /v1, streamed or not.
type realAPI struct {
	name   string
	v1     bool
	stream bool
}

var realAPIs = []realAPI{{"native-stream", false, true}, {"native", false, false}, {"v1-stream", true, true}, {"v1", true, false}}

// realConfig is a config of the models on the server through api, the
// scenario at one level.
func realConfig(srv *ollamaserver.Server, api realAPI, p *realPlay, l level.Level, models ...string) *results.Config {
	c := &results.Config{Name: "real-" + api.name, Ollama: results.OllamaConfig{Host: srv.URL}, Scenarios: []string{p.scenario.ID},
		Granularities: []level.Level{l}, Stream: &api.stream}
	for _, m := range models {
		e := results.ModelEntry{Name: m}
		if api.v1 {
			e.Backend, e.BaseURL = agent.BackendOpenAI, srv.URL+"/v1"
		}
		c.Models = append(c.Models, e)
	}
	Defaults(c)
	return c
}

// realRun runs cfg and returns its records by model, and the manifest.
func realRun(t *testing.T, cfg *results.Config, spec *speclang.Spec, lookup gold.Lookup, opts Options) (map[string]results.Record, *results.Manifest) {
	by, man, _ := realRunLog(t, cfg, spec, lookup, opts)
	return by, man
}

// realRunLog is realRun that also returns what the run printed.
func realRunLog(t *testing.T, cfg *results.Config, spec *speclang.Spec, lookup gold.Lookup, opts Options) (map[string]results.Record, *results.Manifest, string) {
	t.Helper()
	opts.Out, opts.Lookup = t.TempDir(), lookup
	var progress strings.Builder
	opts.Progress = &progress
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	start := time.Now()
	_, err := Run(context.Background(), cfg, spec, opts)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s: %v\n%s", cfg.Name, err, progress.String())
	}
	checkRecordSchema(t, filepath.Join(opts.Out, results.TrialsFile))
	recs, _, err := results.ReadJournal(filepath.Join(opts.Out, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	man, err := results.ReadManifest(opts.Out)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]results.Record{}
	for _, r := range recs {
		by[r.Model] = r
	}
	t.Logf("%s %s: %d trials in %v", cfg.Name, cfg.Granularities[0], len(recs), took.Round(time.Millisecond))
	return by, man, progress.String()
}

// outcome is what a trial's record must say: its TC, error class and
// stop reason, and how many calls reached the server.
type outcome struct {
	tc    float64
	class results.ErrorClass
	stop  results.StopReason
	calls int
}

// check compares a record with what the model must produce, and that a
// trial that got replies counted their tokens and time.
func (o outcome) check(t *testing.T, api realAPI, r results.Record) {
	t.Helper()
	if r.Metrics == nil {
		t.Errorf("%s %s %s: no record", api.name, r.Model, r.Level)
		return
	}
	got := outcome{r.Metrics.TC, r.ErrorClass, r.StopReason, len(r.Calls)}
	if got != o {
		t.Errorf("%s %s %s: %+v, want %+v (error %q, done_reason %q, answer %.120q)", api.name, r.Model, r.Level, got, o, r.Error, r.DoneReason, r.FinalAnswer)
	}
	if o.stop == results.StopAnswer {
		if r.DoneReason != "stop" || r.PromptTokens == 0 || r.CompletionTokens == 0 || r.Durations.ModelWaitNS == 0 {
			t.Errorf("%s %s %s: an answer without its counts: done_reason %q, tokens %d/%d, durations %+v", api.name, r.Model, r.Level, r.DoneReason, r.PromptTokens, r.CompletionTokens, r.Durations)
		}
		if !api.v1 && (r.Durations.PromptEvalNS == 0 || r.Durations.EvalNS == 0 || r.Durations.TotalNS == 0) {
			t.Errorf("%s %s %s: Ollama's durations not recorded: %+v", api.name, r.Model, r.Level, r.Durations)
		}
	}
	if t.Failed() {
		for _, c := range r.Calls {
			b, _ := json.Marshal(c)
			t.Logf("%s %s %s: call %.300s", api.name, r.Model, r.Level, b)
		}
	}
}

var (
	scoredFull  = outcome{tc: 1, stop: results.StopAnswer, calls: 1}
	droppedCall = outcome{class: results.ErrDroppedCall, stop: results.StopError}
	unknownCall = outcome{class: results.ErrUnknown, stop: results.StopAnswer, calls: 1}
	schemaCall  = outcome{class: results.ErrSchema, stop: results.StopAnswer, calls: 1}
	repeatLimit = outcome{class: results.ErrRepeatLimit, stop: results.StopError}
)

// realCase is a model of TestRealOllamaTrials and the outcome it must
// produce at every level, on the native API and on /v1.
type realCase struct {
	fam       family
	b         behaviour
	parser    string
	native    outcome
	v1        outcome
	allLevels bool // on /v1 too (else /v1 plays the smallest level only)
}

// TestRealOllamaTrials runs experiments through granite against a real
// Ollama server serving tiny models that play the first scenario of the
// golden tiny domain whose gold is one call with a number argument at
// every level: right calls (F32 with Ollama's template-driven parser,
// Q8_0 with PARSER qwen3) and the faults (F16) a model makes, each
// through the native API streamed and not and through /v1 streamed and
// not, and checks each record's outcome exactly. The right models play
// every level on both APIs; the faults every level natively and the
// smallest level on /v1 (each /v1 model's warm-up evicts the cached
// prompt, so each costs a whole prompt evaluation there).
func TestRealOllamaTrials(t *testing.T) {
	bin := ollamaserver.Binary(t)
	spec, lookup := tinySpec(t)
	p := pickRealPlay(t, spec, lookup)
	srv := ollamaserver.Start(t, bin)
	const numCtx = 8192 // the config's default, so /v1 runs with the same context
	right32 := family{gguf.F32, numCtx, []behaviour{rightCall}}
	right8 := family{gguf.Q8_0, numCtx, []behaviour{rightCall}}
	faults := family{gguf.F16, numCtx, []behaviour{invalidJSON, unknownTool, suffixedTool, stringTyped, loopForever}}
	cases := []realCase{
		{right32, rightCall, "", scoredFull, scoredFull, true},
		{right8, rightCall, "qwen3", scoredFull, scoredFull, true},
		// The template-driven parser drops a call it cannot parse, and
		// one naming no listed tool: Ollama replies "" after generating.
		{faults, invalidJSON, "", droppedCall, droppedCall, false},
		{faults, unknownTool, "", droppedCall, droppedCall, false},
		{faults, unknownTool, "qwen3", unknownCall, unknownCall, false},
		// It also renames a call whose name holds a listed one: no wire
		// shows the model was wrong, and the trial scores as right.
		{faults, suffixedTool, "", scoredFull, scoredFull, false},
		{faults, stringTyped, "", schemaCall, schemaCall, false},
		{faults, stringTyped, "qwen3", schemaCall, schemaCall, false},
		// Ollama's repeat limit ends the reply with no done chunk (no
		// finish_reason on /v1).
		{faults, loopForever, "", repeatLimit, repeatLimit, false},
	}
	names := map[string]realCase{}
	var all []string
	for _, c := range cases {
		name := c.fam.create(t, srv, p, c.b, c.parser)
		names[name] = c
		all = append(all, name)
	}
	smallest := level.Levels[0]
	for _, l := range level.Levels {
		if promptSize(p, l) < promptSize(p, smallest) {
			smallest = l
		}
	}
	for _, l := range level.Levels {
		for _, api := range realAPIs {
			var models []string
			for _, m := range all {
				if !api.v1 || names[m].allLevels || l == smallest {
					models = append(models, m)
				}
			}
			cfg := realConfig(srv, api, p, l, models...)
			cfg.AgentTimeoutSeconds = 60
			by, man := realRun(t, cfg, spec, lookup, Options{})
			for _, m := range models {
				c := names[m]
				want := c.native
				if api.v1 {
					want = c.v1
				}
				want.check(t, api, by[m])
				info := man.Models[m]
				if !api.v1 && (info.Parameters == 0 || info.ContextTokens != numCtx) {
					t.Errorf("%s %s: run.json says %+v; want /api/show's parameter count and num_ctx %d", api.name, m, info, numCtx)
				}
				// /api/ps lists a runner under the model that loaded it:
				// the family's other models, on the same weights, find no
				// context there (0).
				if api.v1 && (info.ContextTokens != numCtx && info.ContextTokens != 0 || !strings.Contains(info.Context, "num_ctx cannot be set")) {
					t.Errorf("%s %s: run.json says %+v; want the server's context %d (the Modelfile's) and that num_ctx cannot be set", api.name, m, info, numCtx)
				}
			}
		}
	}
}

// promptSize is about how long a level's prompt is: its tool list's
// schemas.
func promptSize(p *realPlay, l level.Level) int {
	n := 0
	for _, tool := range p.dom.Tools[l] {
		b, _ := json.Marshal(tool)
		n += len(b)
	}
	return n
}

// chatWatch is an HTTP transport that counts a run's chat requests to
// the model server and, on the first bytes of the first trial reply's
// body (a request that lists tools), calls onReply once: the test then
// freezes or kills the real server while that reply streams.
type chatWatch struct {
	base    http.RoundTripper
	chats   atomic.Int32
	once    sync.Once
	onReply func()
}

func (w *chatWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	trial := false
	if strings.HasSuffix(req.URL.Path, "/chat") || strings.HasSuffix(req.URL.Path, "/chat/completions") {
		w.chats.Add(1)
		if req.GetBody != nil {
			if body, err := req.GetBody(); err == nil {
				data, _ := io.ReadAll(body)
				trial = bytes.Contains(data, []byte(`"tools"`))
			}
		}
	}
	resp, err := w.base.RoundTrip(req)
	if err == nil && trial && w.onReply != nil {
		resp.Body = &firstRead{ReadCloser: resp.Body, hook: func() { w.once.Do(w.onReply) }}
	}
	return resp, err
}

// firstRead calls hook once bytes of the body have come.
type firstRead struct {
	io.ReadCloser
	hook func()
}

func (r *firstRead) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.hook()
	}
	return n, err
}

// serverGroup is the process group of the `ollama serve` the test started
// for srv (ollamaserver gives it a group of its own, which its runners
// join): the process among this test's children whose OLLAMA_HOST is
// srv's.
func serverGroup(t *testing.T, srv *ollamaserver.Server) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), "OLLAMA_HOST="+srv.Host) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && fields[1] == strconv.Itoa(os.Getpid()) {
			pgrp, _ := strconv.Atoi(fields[2])
			return pgrp
		}
	}
	t.Skipf("cannot find the process of the ollama serve on %s under /proc (not Linux?): the test freezes it by its process group", srv.Host)
	return 0
}

// oneModelServer starts a server holding one model of the fault family.
func oneModelServer(t *testing.T, bin string, p *realPlay, f family, b behaviour, parser string) (*ollamaserver.Server, string) {
	t.Helper()
	srv := ollamaserver.Start(t, bin)
	return srv, f.create(t, srv, p, b, parser)
}

// TestRealOllamaOwnServerFaults plays the faults that leave a real server
// unusable, each on a server of its own, at the level with the smallest
// prompt, natively and on /v1, streamed and not:
//
//   - PARSER qwen3 and arguments that are not JSON: Ollama answers 500
//     "failed to parse JSON"; granite records malformed_tool_call after
//     one request, no retry. (Ollama 0.17.4 then never frees the runner's
//     slot: every later request to that server waits.)
//   - the server frozen (SIGSTOP) once a reply has begun to stream: the
//     trial's deadline passes mid-stream, and the record says timeout,
//     never an answer;
//   - the server killed once a reply has begun to stream: no answer
//     either; the cut reply is retried until the deadline, against a
//     server that is gone.
func TestRealOllamaOwnServerFaults(t *testing.T) {
	bin := ollamaserver.Binary(t)
	spec, lookup := tinySpec(t)
	p := pickRealPlay(t, spec, lookup)
	smallest := level.Levels[0]
	for _, l := range level.Levels {
		if promptSize(p, l) < promptSize(p, smallest) {
			smallest = l
		}
	}
	faults := family{gguf.F16, 8192, []behaviour{invalidJSON, loopForever}}
	for _, api := range realAPIs {
		t.Run("malformed-qwen3/"+api.name, func(t *testing.T) {
			srv, m := oneModelServer(t, bin, p, faults, invalidJSON, "qwen3")
			w := &chatWatch{base: http.DefaultTransport}
			cfg := realConfig(srv, api, p, smallest, m)
			cfg.AgentTimeoutSeconds = 60
			by, _ := realRun(t, cfg, spec, lookup, Options{HTTP: &http.Client{Transport: w}})
			r := by[m]
			outcome{class: results.ErrMalformed, stop: results.StopError}.check(t, api, r)
			// The warm-up, then one request: a malformed call is never
			// asked again.
			if n := w.chats.Load(); n != 2 || r.Metrics.WallS > 30 {
				t.Errorf("%s: %d chat requests (warm-up included) in %.1f s; want 2, at once", api.name, n, r.Metrics.WallS)
			}
			if !strings.Contains(r.Error, "failed to parse JSON") {
				t.Errorf("%s: error %q; want Ollama's words", api.name, r.Error)
			}
		})
	}
	for _, api := range realAPIs {
		if !api.stream {
			continue
		}
		t.Run("frozen-mid-stream/"+api.name, func(t *testing.T) {
			srv, m := oneModelServer(t, bin, p, faults, loopForever, "")
			group := serverGroup(t, srv)
			t.Cleanup(func() { syscall.Kill(-group, syscall.SIGCONT) })
			w := &chatWatch{base: http.DefaultTransport, onReply: func() { syscall.Kill(-group, syscall.SIGSTOP) }}
			cfg := realConfig(srv, api, p, smallest, m)
			cfg.AgentTimeoutSeconds = 8
			by, _ := realRun(t, cfg, spec, lookup, Options{HTTP: &http.Client{Transport: w}})
			r := by[m]
			outcome{class: results.ErrTimeout, stop: results.StopTimeout}.check(t, api, r)
			if !r.Metrics.Timeout || r.FinalAnswer != "" {
				t.Errorf("%s: timeout %v, final answer %q; want a timeout and no answer", api.name, r.Metrics.Timeout, r.FinalAnswer)
			}
			t.Logf("%s: %s", api.name, r.Error)
		})
		t.Run("killed-mid-stream/"+api.name, func(t *testing.T) {
			srv, m := oneModelServer(t, bin, p, faults, loopForever, "")
			w := &chatWatch{base: http.DefaultTransport, onReply: srv.Kill}
			cfg := realConfig(srv, api, p, smallest, m)
			cfg.AgentTimeoutSeconds = 8
			by, _ := realRun(t, cfg, spec, lookup, Options{HTTP: &http.Client{Transport: w}})
			r := by[m]
			outcome{class: results.ErrTimeout, stop: results.StopTimeout}.check(t, api, r)
			if r.FinalAnswer != "" {
				t.Errorf("%s: final answer %q; a reply cut by a dead server is none", api.name, r.FinalAnswer)
			}
			t.Logf("%s: %s", api.name, r.Error)
		})
	}
}

// TestRealOllamaContextLength plays a right model whose context (num_ctx
// 512, in its Modelfile and the config) is shorter than every level's
// prompt. Natively granite asks with truncate: false, Ollama refuses, and
// the record says context_length_exceeded. On /v1 nothing can ask that:
// Ollama cuts the prompt silently (its first tokens and its tail kept,
// the tool list lost) and the run warns before the trials, as the README
// says. The cut takes the conversation too: the model never sees its own
// call and result, calls again at every turn, and the trial ends at
// max_agent_turns with no error class.
func TestRealOllamaContextLength(t *testing.T) {
	bin := ollamaserver.Binary(t)
	spec, lookup := tinySpec(t)
	p := pickRealPlay(t, spec, lookup)
	const numCtx = 512
	srv := ollamaserver.Start(t, bin)
	m := family{gguf.F16, numCtx, []behaviour{rightCall}}.create(t, srv, p, rightCall, "")
	for _, api := range realAPIs {
		for _, l := range level.Levels {
			cfg := realConfig(srv, api, p, l, m)
			cfg.NumCtx = numCtx
			cfg.AgentTimeoutSeconds = 60
			by, man, progress := realRunLog(t, cfg, spec, lookup, Options{})
			r := by[m]
			if !api.v1 {
				outcome{class: results.ErrContext, stop: results.StopError}.check(t, api, r)
				if !strings.Contains(r.Error, "exceeds the context length") {
					t.Errorf("%s %s: error %q; want Ollama's refusal", api.name, l, r.Error)
				}
				continue
			}
			// The cut keeps the prompt's tail, and the tiny model answers
			// from it: but the cut drops the model's own call and its
			// result too, so it calls again and again, never told.
			outcome{stop: results.StopMaxTurns, calls: cfg.MaxAgentTurns}.check(t, api, r)
			if info := man.Models[m]; info.ContextTokens != numCtx {
				t.Errorf("%s %s: run.json's context %d; want the Modelfile's %d", api.name, l, info.ContextTokens, numCtx)
			}
			if !strings.Contains(progress, "longer than the 512 tokens of context") || !strings.Contains(progress, "OLLAMA_CONTEXT_LENGTH") {
				t.Errorf("%s %s: the run did not warn that the tool list is longer than the context:\n%s", api.name, l, progress)
			}
			if r.PromptTokens > r.Turns*numCtx {
				t.Errorf("%s %s: %d prompt tokens over %d requests of a %d-token context: Ollama did not cut", api.name, l, r.PromptTokens, r.Turns, numCtx)
			}
		}
	}
}

// schemaReply is a reply that fits a flat JSON Schema of integers and
// strings: each integer at its maximum, each string s. Its keys come in
// the schema's order (encoding/json sorts both), which llama.cpp's
// grammar of the schema holds a reply to.
func schemaReply(t *testing.T, schema json.RawMessage, s string) (string, map[string]float64) {
	t.Helper()
	var sch struct {
		Properties map[string]struct {
			Type    string  `json:"type"`
			Maximum float64 `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &sch); err != nil {
		t.Fatal(err)
	}
	reply, ints := map[string]any{}, map[string]float64{}
	for k, p := range sch.Properties {
		switch p.Type {
		case "integer":
			reply[k], ints[k] = int(p.Maximum), p.Maximum
		case "string":
			reply[k] = s
		default:
			t.Fatalf("schema property %s of type %s: schemaReply writes integers and strings only", k, p.Type)
		}
	}
	b, _ := json.Marshal(reply)
	return string(b), ints
}

// structuredModel creates a tiny model that answers a structured request
// (no tools) with replies[k] after k assistant replies (the retries so
// far), and the last one after that.
func structuredModel(t *testing.T, srv *ollamaserver.Server, name string, replies ...string) {
	t.Helper()
	s := tinymodel.Script{Type: gguf.F16, NumCtx: 8192, Seed: 7, Default: tinymodel.Reply{Text: replies[len(replies)-1]}}
	for k, r := range replies[:len(replies)-1] {
		s.Rules = append(s.Rules, tinymodel.Rule{When: tinymodel.Selector{Turn: k}, Reply: tinymodel.Reply{Text: r}})
	}
	built, err := tinymodel.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	srv.Create(t, name, built.Modelfile("./model.gguf"), map[string][]byte{"model.gguf": built.GGUF})
}

// TestRealOllamaStructured runs the model stages of granite judge --model
// and granite regroup --suggest --model (scenarios.LLM.Judge,
// regroup.Suggest) against tiny models on a real server, which decodes
// under the grammar of each stage's JSON Schema (Ollama's format): a
// judge reply is validated and scored; a grouping that leaves a tool out
// is refused, fed back and asked again (its retry counted), and one that
// is refused every time ends in scenarios.ErrDiscarded after
// scenarios.Retries retries. A format Ollama cannot use is an
// *ollama.FormatError at once.
func TestRealOllamaStructured(t *testing.T) {
	bin := ollamaserver.Binary(t)
	spec, lookup := tinySpec(t)
	p := pickRealPlay(t, spec, lookup)
	srv := ollamaserver.Start(t, bin)
	tools := scenarios.FromDomain(p.dom, level.L4)
	sources := scenarios.Sources(tools)

	judged, scores := schemaReply(t, scenarios.JudgeSchema(), "Every call is right.")
	var names []string
	for _, tool := range sources {
		names = append(names, tool.Name)
	}
	grouping := func(tools []string) string {
		b, _ := json.Marshal(map[string]any{"L2": map[string]any{"control": []string{}, "query": tools},
			"L3": []any{map[string]any{"category": regroup.Categories[0], "tools": tools}}})
		return string(b)
	}
	whole, short := grouping(names), grouping(names[1:])
	structuredModel(t, srv, "judge", judged)
	structuredModel(t, srv, "grouper", short, whole)
	structuredModel(t, srv, "refuser", short)

	llm := func(model string) *scenarios.LLM {
		l, err := scenarios.NewLLM(srv.URL, model, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Timeout = time.Minute
		return l
	}
	ctx := context.Background()
	arts, err := scenarios.Offline("real", tools, 1)
	if err != nil || len(arts) == 0 {
		t.Fatalf("offline artifacts: %v", err)
	}
	s, err := llm("judge").Judge(ctx, tools, arts[0])
	if err != nil || s.Retries != 0 || s.Comment != "Every call is right." || s.Usage != scores["usage"]/10 {
		t.Errorf("judge: %+v, %v; want the reply's scores (usage %v/10) after no retry", s, err, scores["usage"])
	}

	g, err := regroup.Suggest(ctx, llm("grouper"), p.domain.Name, sources)
	if err != nil || len(g.L3) != 1 || len(g.L3[0].Tools) != len(names) {
		t.Errorf("suggest: %+v, %v; want the second reply's one group of every tool", g, err)
	}
	_, err = regroup.Suggest(ctx, llm("refuser"), p.domain.Name, sources)
	if !errors.Is(err, scenarios.ErrDiscarded) || !strings.Contains(err.Error(), "leaves out "+names[0]) {
		t.Errorf("suggest with a model that always leaves a tool out: %v; want ErrDiscarded naming %s", err, names[0])
	}

	c, err := ollama.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{`"yaml"`, `{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`} {
		start := time.Now()
		_, err := c.Structured(ctx, "judge", []api.Message{{Role: "user", Content: "hi"}}, json.RawMessage(format))
		if !ollama.IsFormat(err) || time.Since(start) > 10*time.Second {
			t.Errorf("format %s: %v after %v; want an *ollama.FormatError at once", format, err, time.Since(start))
		}
		t.Logf("format %s: %v", format, err)
	}
}
