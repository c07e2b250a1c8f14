package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/ollama"
	"github.com/mcpgranite/granite/internal/speclang"
)

// ollamaAgent is a model served by one Ollama host.
type ollamaAgent struct {
	client *ollama.Client
	host   string
	model  string
	entry  results.ModelEntry
	cfg    *results.Config
	// tools converts the listed tools once per tool set.
	tools *toolCache[api.Tools]
}

// options are the request options, the same for every request of a model
// so that Ollama never reloads it between trials.
func options(cfg *results.Config, e results.ModelEntry) map[string]any {
	temp, maxTokens, seed := cfg.Sampling(e)
	return map[string]any{
		"temperature": temp,
		"num_predict": maxTokens,
		"num_ctx":     cfg.NumCtx,
		"seed":        seed,
	}
}

func keepAlive(cfg *results.Config) *api.Duration {
	d, err := time.ParseDuration(cfg.KeepAlive)
	if err != nil {
		return nil // the schema admits only durations
	}
	return &api.Duration{Duration: d}
}

func (a *ollamaAgent) Run(ctx context.Context, tr *Trial) {
	opts := options(a.cfg, a.entry)
	playChat(ctx, tr, a.tools, opts, a.cfg.MaxAgentTurns, func(tools api.Tools, sys string) conversation {
		return &ollamaConversation{a: a, tools: tools, stream: a.cfg.Streaming(), options: opts,
			msgs: []api.Message{{Role: "system", Content: sys}}}
	})
}

// ollamaConversation is a trial's conversation in Ollama's chat form.
type ollamaConversation struct {
	a       *ollamaAgent
	tools   api.Tools
	stream  bool
	options map[string]any
	msgs    []api.Message
}

func (c *ollamaConversation) user(text string) {
	c.msgs = append(c.msgs, api.Message{Role: "user", Content: text})
}

func (c *ollamaConversation) reply(ctx context.Context, rec *results.Record) (modelReply, error) {
	// truncate: false makes Ollama refuse a prompt longer than num_ctx
	// instead of cutting it silently (the system prompt and tool list
	// first): a trial whose prompt was cut is never scored as if whole.
	noTruncate := false
	req := &api.ChatRequest{Model: c.a.model, Messages: c.msgs, Tools: c.tools, Stream: &c.stream, KeepAlive: keepAlive(c.a.cfg), Options: c.options, Truncate: &noTruncate}
	r, err := c.a.client.Chat(ctx, req)
	rec.Durations.TotalNS += int64(r.Metrics.TotalDuration)
	rec.Durations.LoadNS += int64(r.Metrics.LoadDuration)
	rec.Durations.PromptEvalNS += int64(r.Metrics.PromptEvalDuration)
	rec.Durations.EvalNS += int64(r.Metrics.EvalDuration)
	rec.Durations.ModelWaitNS += int64(r.Wait)
	rec.PromptTokens += r.Metrics.PromptEvalCount
	rec.CompletionTokens += r.Metrics.EvalCount
	if err != nil {
		return modelReply{}, err
	}
	out := modelReply{DoneReason: r.DoneReason,
		Message: results.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking}}
	sent, cloned := r.Message.ToolCalls, false
	for i, tc := range r.Message.ToolCalls {
		args, _ := json.Marshal(tc.Function.Arguments)
		out.Message.ToolCalls = append(out.Message.ToolCalls, results.MessageCall{Name: tc.Function.Name, Arguments: args})
		out.Calls = append(out.Calls, replyCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		if len(args) > results.CutBytes {
			// Sent back as the record keeps it: a model that writes
			// megabytes of arguments must not make every later request
			// carry them all.
			if !cloned {
				sent, cloned = slices.Clone(r.Message.ToolCalls), true
			}
			var cut api.ToolCallFunctionArguments
			if json.Unmarshal(results.CutArguments(args), &cut) == nil {
				sent[i].Function.Arguments = cut
			}
		}
	}
	c.msgs = append(c.msgs, api.Message{Role: "assistant", Content: r.Message.Content, Thinking: r.Message.Thinking, ToolCalls: sent})
	return out, nil
}

func (c *ollamaConversation) toolResult(call replyCall, res results.Call) {
	c.msgs = append(c.msgs, api.Message{Role: "tool", ToolName: res.Tool, Content: res.Result, ToolCallID: call.ID})
}

// classify: a tool call Ollama could not parse, a reply it ended at its
// repeat limit or emptied, a prompt past the context are each their own
// class, not the transport's.
func (c *ollamaConversation) classify(ctx context.Context, err error) results.ErrorClass {
	return classifyFailure(ctx, err, failure{ollama.IsMalformed, results.ErrMalformed}, failure{ollama.IsContextLength, results.ErrContext},
		failure{models.IsRepeatLimit, results.ErrRepeatLimit}, failure{models.IsDroppedCall, results.ErrDroppedCall})
}

// ollamaBackend is the Ollama kind: models a host (or hosts) serves,
// one worker per host and parallel slot, each host warmed up first.
type ollamaBackend struct{}

// BackendOllama names the Ollama kind, the default of an entry that names
// none; it is also Record.Agent of its trials.
const BackendOllama = "ollama"

func (ollamaBackend) Name() string  { return BackendOllama }
func (ollamaBackend) Label() string { return BackendOllama }

func (ollamaBackend) Check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	list := notCommand(doc, m, at)
	for _, f := range []struct{ key, val string }{{"base_url", m.BaseURL}, {"api_key_env", m.APIKeyEnv}} {
		if f.val != "" {
			list = append(list, doc.Errorf(at(f.key), "found %s on an Ollama model; expected it only with backend: openai (Ollama models run on ollama.host or ollama.hosts)", f.key))
		}
	}
	return list
}

// Defaults fills the hosts' default: $OLLAMA_HOST (http:// when it names
// no scheme, as Ollama reads it), else Ollama's own address
// (ollama.ResolveHost, which granite's --ollama flags share).
func (ollamaBackend) Defaults(c *results.Config) {
	if c.Ollama.Host != "" || len(c.Ollama.Hosts) > 0 {
		return
	}
	c.Ollama.Host = ollama.ResolveHost("")
}

func (ollamaBackend) ContextNote() string {
	return "num_ctx, sent with every request; a prompt longer than it is refused (truncate: false) and recorded as context_length_exceeded"
}

// CheckConfig reports the hosts that are not URLs.
func (ollamaBackend) CheckConfig(doc *speclang.Document, c *results.Config) speclang.ErrorList {
	var list speclang.ErrorList
	for i, h := range c.HostList() {
		if u, err := url.Parse(h); err != nil || u.Scheme == "" || u.Host == "" {
			at := []any{"ollama", "host"}
			if len(c.Ollama.Hosts) > 0 {
				at = []any{"ollama", "hosts", i}
			}
			list = append(list, doc.Errorf(at, "found host %q; expected a URL like %s", h, ollama.DefaultHost))
		}
	}
	return list
}

// Preflight fails fast, naming the host and the fix, when a host is down
// or lacks one of the models' tags; and warns that Ollama's tool types
// drop schema keywords the trials' tools use.
func (b ollamaBackend) Preflight(ctx context.Context, env *Env, entries []results.ModelEntry) error {
	if lost := LostBySet(b, env.ToolSets); len(lost) > 0 {
		all := map[string][]string{}
		for lv, tools := range lost {
			for t, l := range tools {
				all[lv+"/"+t] = l
			}
		}
		fmt.Fprintf(env.Progress, "warning: Ollama's tool types drop schema keywords before a model sees them (their constraints are also in the descriptions; run.json lists them per tool): %s\n", LostSummary(all))
	}
	if d, err := time.ParseDuration(env.Config.KeepAlive); err == nil && d == 0 {
		fmt.Fprintf(env.Progress, "warning: keep_alive %s makes Ollama unload the model after every request (the warm-up itself becomes an unload): every request of every trial reloads it, and the load lands in the measured time; set keep_alive to a duration such as 10m, or -1m to keep it loaded\n", env.Config.KeepAlive)
	}
	if longest := longestToolList(env.ToolSets); env.Config.NumCtx > 0 && longest.tokens > env.Config.NumCtx {
		fmt.Fprintf(env.Progress, "warning: the tool list of %s alone is about %d tokens, longer than num_ctx %d: Ollama will refuse every trial's prompt there (context_length_exceeded); raise num_ctx\n", longest.set, longest.tokens, env.Config.NumCtx)
	}
	var tags []string
	for _, m := range entries {
		if !slices.Contains(tags, m.ServedAs()) {
			tags = append(tags, m.ServedAs())
		}
	}
	return ollama.CheckHosts(ctx, env.Config.HostList(), tags, env.HTTP)
}

// Workers warms the model up on every host, records what /api/show says
// of it, and gives each host the entry's parallel workers.
func (ollamaBackend) Workers(ctx context.Context, env *Env, entry results.ModelEntry, _ int) ([]Worker, error) {
	var workers []Worker
	cfg, model := env.Config, entry.Name
	for _, h := range cfg.HostList() {
		c, err := ollama.New(h, env.HTTP)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, cfg.Timeout()) // a load may take minutes, never forever
		load, err := c.WarmUp(wctx, entry.ServedAs(), keepAlive(cfg), options(cfg, entry))
		cancel()
		w := results.WarmUp{Model: model, Host: h, LoadS: load.Seconds(), WallS: time.Since(start).Seconds(), Config: fmt.Sprint(options(cfg, entry))}
		if err != nil {
			w.Error = err.Error()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("warm-up of %s on %s: %w", model, h, err)
		}
		info, err := showModel(ctx, c, entry.ServedAs())
		if err != nil {
			return nil, fmt.Errorf("/api/show of %s on %s: %w", model, h, err)
		}
		info.ContextTokens, info.Context = cfg.NumCtx, ollamaBackend{}.ContextNote()
		if err := env.Checked(model, info, w); err != nil {
			return nil, err
		}
		for range entry.Workers() {
			workers = append(workers, Worker{Host: h, Agent: &ollamaAgent{client: c, host: h, model: entry.ServedAs(), entry: entry, cfg: cfg, tools: newToolCache(OllamaTools)}})
		}
	}
	return workers, nil
}

// Lost is what Ollama drops of each input schema, by tool name, in time
// linear in each schema (ollamaLost): measuring an interface asks it of
// every schema of every interface.
func (ollamaBackend) Lost(schemas map[string][]byte) map[string][]string {
	return lostEach(schemas, func(_ string, schema []byte) ([]string, error) {
		return ollamaLost(schema)
	})
}

// OllamaTools converts tools listed over MCP into Ollama's tool type, as
// Ollama itself decodes them: whatever its types have no field for
// (minimum, maximum, pattern, format, nested required, ...) is gone
// before any model sees the tool. Lost maps each tool to what it lost.
func OllamaTools(tools []mcp.Tool) (api.Tools, map[string][]string, error) {
	out := make(api.Tools, 0, len(tools))
	lost := map[string][]string{}
	for _, t := range tools {
		raw, err := inputSchema(t)
		if err != nil {
			return nil, nil, err
		}
		params, l, err := ollamaParams(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		if len(l) > 0 {
			lost[t.Name] = l
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, lost, nil
}

// ollamaParams decodes an input schema as Ollama does and lists what it
// lost.
func ollamaParams(raw []byte) (api.ToolFunctionParameters, []string, error) {
	var params api.ToolFunctionParameters
	if err := json.Unmarshal(raw, &params); err != nil {
		return params, nil, fmt.Errorf("Ollama cannot read the input schema: %w", err)
	}
	lost, err := LostKeywords(raw, params)
	return params, lost, err
}

// LostKeywords lists, as "argument: keyword" (or "keyword" at the top),
// the schema keywords of raw that the converted parameters dropped.
func LostKeywords(raw []byte, params api.ToolFunctionParameters) ([]string, error) {
	kept, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return lostBetween(raw, kept)
}

// showModel asks Ollama about a model.
func showModel(ctx context.Context, c *ollama.Client, model string) (results.ModelInfo, error) {
	resp, err := c.Show(ctx, model)
	if err != nil {
		return results.ModelInfo{}, err
	}
	info := results.ModelInfo{Family: resp.Details.Family, ParameterSize: resp.Details.ParameterSize, Quantization: resp.Details.QuantizationLevel}
	if n, ok := resp.ModelInfo["general.parameter_count"].(float64); ok {
		info.Parameters = n
	} else {
		info.Parameters = results.ParseSize(info.ParameterSize)
	}
	return info, nil
}
