package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/progress"
	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/mcpgranite/granite/internal/stage"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/templates"
)

// Retries is how often a stage's reply may fail validation before the
// record is discarded.
const Retries = 3

// ErrDiscarded is returned when a stage's replies fail validation Retries
// times over.
var ErrDiscarded = errors.New("discarded after failed validation")

// LLM runs synthesis stages on an Ollama model with constrained decoding:
// the stage's JSON Schema is the request's format, and every reply is
// validated again before it is used. Requests follow the client's retry
// policy (transport failures and 5xx retried within Timeout).
type LLM struct {
	Client  *ollama.Client
	Model   string
	Timeout time.Duration
	// Progress, when set, counts Synthesize's enriched tools and kept
	// scenarios, labelled with the stage and what was discarded.
	Progress *progress.Bar
}

// NewLLM connects to an Ollama host.
func NewLLM(host, model string, hc *http.Client) (*LLM, error) {
	c, err := ollama.New(host, hc)
	if err != nil {
		return nil, err
	}
	return &LLM{Client: c, Model: model, Timeout: stageTimeout}, nil
}

// DialLLM is NewLLM once the host has shown it is an Ollama holding the
// model (ollama.Dial): its errors say in one line why there is no model,
// those of a host where no Ollama answers marked ollama.ErrNoServer.
func DialLLM(ctx context.Context, host, model string, hc *http.Client) (*LLM, error) {
	c, err := ollama.Dial(ctx, host, hc, model)
	if err != nil {
		return nil, err
	}
	return &LLM{Client: c, Model: model, Timeout: stageTimeout}, nil
}

// stageTimeout bounds one stage request with its retries.
const stageTimeout = 2 * time.Minute

// Stage sends a prompt with the schema as format, validates the reply and
// decodes it into out; each check then looks at out and names a problem a
// schema cannot express, or returns "". A reply that fails validation or
// a check is fed back with the reason and the stage retried, at most
// Retries times; it returns the retries used.
func (l *LLM) Stage(ctx context.Context, prompt string, schema json.RawMessage, out any, checks ...func() string) (int, error) {
	sch, err := schemacheck.Compile("stage", string(schema))
	if err != nil {
		return 0, err
	}
	msgs := []api.Message{{Role: "user", Content: prompt}}
	for attempt := 0; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, l.Timeout)
		reply, err := l.Client.Structured(sctx, l.Model, msgs, schema)
		cancel()
		if err != nil {
			return attempt, fmt.Errorf("ollama: %w", err)
		}
		problem := ""
		v, perr := jsonschema.UnmarshalJSON(strings.NewReader(reply))
		if perr == nil {
			perr = sch.Validate(v)
		}
		switch {
		case perr != nil:
			problem = "Your reply does not match the required JSON Schema: " + perr.Error()
		default:
			if err := json.Unmarshal([]byte(reply), out); err != nil {
				return attempt, err
			}
			for _, check := range checks {
				if p := check(); p != "" {
					problem = "Your reply was refused: " + p + "."
					break
				}
			}
		}
		if problem == "" {
			return attempt, nil
		}
		if attempt >= Retries {
			return attempt, fmt.Errorf("%w: %s", ErrDiscarded, problem)
		}
		msgs = append(msgs, api.Message{Role: "assistant", Content: reply},
			api.Message{Role: "user", Content: problem + "\nReply again with JSON only."})
	}
}

// ScenarioSchema is the scenario stage's contract for a tool set (see
// stage.ScenarioSchema), built from the tools at run time, generated
// domains' as any other source's.
func ScenarioSchema(tools []Tool) (json.RawMessage, error) {
	listed := make([]toolsrc.Tool, len(tools))
	for i, t := range tools {
		listed[i] = t.Tool
	}
	return stage.ScenarioSchema(listed)
}

// stageScenario is the scenario stage's reply.
type stageScenario struct {
	Title       string `json:"title"`
	Instruction string `json:"instruction"`
	Calls       []struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Reason    string          `json:"reason"`
	} `json:"calls"`
	Novelty  string `json:"novelty"`
	FollowUp string `json:"follow_up"`
}

// Result is what an LLM synthesis produced.
type Result struct {
	Artifacts []Artifact
	// Discarded counts scenarios whose replies failed validation
	// Retries times; Retried the replies that failed and were retried;
	// SingleTurn the multi-turn expansions dropped for having one turn;
	// NoNewTool the scenarios written after count was reached that used
	// no unused tool, which are not kept.
	Discarded, Retried, SingleTurn, NoNewTool int
}

// Synthesize writes at least count scenarios with the model, alternating
// simple and complex tiers and steering each toward the least-used tools,
// and goes on until every tool is used: past count, a scenario is kept
// only when it uses a tool no earlier one did. Attempts are bounded
// (count × (Retries+1) + 2 × tools), so a model that ignores the steering
// cannot loop forever. exec, when not nil, runs a scenario's calls on a
// fresh store and returns their outputs (executed grounding).
func (l *LLM) Synthesize(ctx context.Context, source string, tools []Tool, count int, exec func([]ExpectedCall) []MockOutput) (*Result, error) {
	schema, err := ScenarioSchema(tools)
	if err != nil {
		return nil, err
	}
	used := map[string]int{}
	res := &Result{}
	type promptTool struct{ Name, Description, Schema string }
	var pts []promptTool
	l.Progress.Label(fmt.Sprintf("enrich: %d tools", len(tools)))
	for _, t := range tools {
		// Enrich: the scenario prompt shows each tool as the enrich stage
		// read it; a tool whose enrichment fails keeps its description.
		desc := t.Description
		if e, n, err := l.Enrich(ctx, t); err == nil {
			desc = fmt.Sprintf("%s Uses: %s. Context: %s.", e.FunctionalDescription, strings.Join(e.UseCases, "; "), e.Context)
			res.Retried += n
		} else if !errors.Is(err, ErrDiscarded) {
			return nil, err
		}
		pts = append(pts, promptTool{t.Name, desc, string(t.InputSchema)})
		l.Progress.Done()
	}
	l.Progress.Label(fmt.Sprintf("scenarios: %d wanted", count))
	discarded := func() {
		res.Discarded++
		l.Progress.Label(fmt.Sprintf("scenarios: %d wanted, %d discarded after %d retries", count, res.Discarded, Retries))
	}
	unused := func() int {
		n := 0
		for _, t := range tools {
			if used[t.Name] == 0 {
				n++
			}
		}
		return n
	}
	limit := count*(Retries+1) + 2*len(tools)
	for i := 0; (len(res.Artifacts) < count || unused() > 0) && i < limit; i++ {
		tier, focusN := "simple", 1
		if i%2 == 1 {
			tier, focusN = "complex", 3
		}
		focus := leastUsed(tools, used, focusN)
		var prompt strings.Builder
		if err := templates.SynthScenario.Execute(&prompt, map[string]any{"Tools": pts, "Tier": tier, "Focus": focus}); err != nil {
			return nil, err
		}
		var s stageScenario
		retries, err := l.Stage(ctx, prompt.String(), schema, &s)
		res.Retried += retries
		if errors.Is(err, ErrDiscarded) {
			discarded()
			continue
		}
		if err != nil {
			return res, err
		}
		fresh := false
		for _, c := range s.Calls {
			fresh = fresh || used[c.Tool] == 0
		}
		if len(res.Artifacts) >= count && !fresh {
			res.NoNewTool++
			continue
		}
		a := Artifact{Version: ArtifactVersion, ID: artifactID(source, l.Model, len(res.Artifacts)+1),
			Source: source, Tier: tier, Title: s.Title, Novelty: s.Novelty, FollowUp: s.FollowUp, Turns: []Turn{{Prompt: s.Instruction}},
			Provenance: Provenance{Backend: "ollama", Model: l.Model, Stage: "scenario", Retries: retries}}
		for _, c := range s.Calls {
			a.ExpectedCalls = append(a.ExpectedCalls, ExpectedCall{Tool: c.Tool, Arguments: c.Arguments, Reason: c.Reason})
			a.Assertions = append(a.Assertions, Assertion{Kind: "tool_call", Tool: c.Tool, Arguments: c.Arguments, Severity: "blocker", Note: c.Reason})
			used[c.Tool]++
		}
		if exec != nil {
			a.MockOutputs = exec(a.ExpectedCalls)
		} else {
			outs, n, err := l.Mock(ctx, tools, s.Instruction, a.ExpectedCalls)
			res.Retried += n
			a.Provenance.Retries += n
			if errors.Is(err, ErrDiscarded) {
				discarded()
				continue
			}
			if err != nil {
				return res, err
			}
			a.MockOutputs = outs
		}
		a.Provenance.Stage = "enrich+scenario+mock"
		if len(a.ExpectedCalls) > 1 {
			turns, n, err := l.Expand(ctx, s.Instruction, a.ExpectedCalls, a.MockOutputs)
			res.Retried += n
			a.Provenance.Retries += n
			switch {
			case err == nil:
				a.Turns = turns
				a.Provenance.Stage += "+multi-turn"
			case errors.Is(err, ErrSingleTurn) || errors.Is(err, ErrDiscarded):
				res.SingleTurn++ // the expansion is dropped; the scenario stays one turn
			default:
				return res, err
			}
		}
		res.Artifacts = append(res.Artifacts, a)
		if len(res.Artifacts) >= count {
			// Past count, aim for one more scenario per two unused tools.
			l.Progress.SetTotal(len(tools) + len(res.Artifacts) + (unused()+1)/2)
		}
		l.Progress.Done()
	}
	return res, nil
}

// leastUsed picks n tools used least so far, in name order on ties.
func leastUsed(tools []Tool, used map[string]int, n int) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	sort.SliceStable(names, func(a, b int) bool { return used[names[a]] < used[names[b]] })
	return names[:min(n, len(names))]
}

// Executor runs a scenario's calls in order on one fresh store of a
// generated domain at a level: outputs that are real and consistent
// across calls (grounding: executed).
func Executor(d *mcpdomain.Domain, level level.Level) func([]ExpectedCall) []MockOutput {
	return func(calls []ExpectedCall) []MockOutput {
		return runCalls(d, level, d.NewStore(), calls)
	}
}

// runCalls runs calls in order on a store.
func runCalls(d *mcpdomain.Domain, level level.Level, st mcpdomain.Store, calls []ExpectedCall) []MockOutput {
	var out []MockOutput
	for i, c := range calls {
		t := d.Tool(level, c.Tool)
		m := MockOutput{Call: i, Grounding: "executed"}
		if t == nil {
			m.Output, m.IsError = "unknown tool "+c.Tool, true
		} else if res, err := t.Call(c.Arguments, func(op *mcpdomain.Operation, a []byte) (any, error) { return st.Call(op.Name, a) }); err != nil {
			m.Output, m.IsError = err.Error(), true
		} else {
			b, _ := json.Marshal(res)
			m.Output = string(b)
		}
		out = append(out, m)
	}
	return out
}
