package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/openai/openai-go/v3"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/models"
	"github.com/mcpgranite/granite/internal/models/openai"
	"github.com/mcpgranite/granite/internal/speclang"
)

// openaiAgent is a model served by an OpenAI-compatible endpoint. It plays
// the same loop as ollamaAgent: the tools listed over MCP, each call
// through tools/call, results fed back as tool messages with the call's
// ID, until an answer without tool calls, max_agent_turns or the
// deadline.
type openaiAgent struct {
	client *openai.Client
	entry  results.ModelEntry
	cfg    *results.Config
	// tools caches the converted tools per tool set.
	tools map[string][]sdk.ChatCompletionToolUnionParam
}

// openaiOptions are a model's request fields, the same for every request,
// as the record keeps them.
func openaiOptions(cfg *results.Config, e results.ModelEntry) map[string]any {
	temp, maxTokens, seed := cfg.Sampling(e)
	return map[string]any{"temperature": temp, "max_tokens": maxTokens, "seed": seed, "tool_choice": "auto"}
}

// classifyOpenAI names the error class of a failed request.
func classifyOpenAI(ctx context.Context, err error) results.ErrorClass {
	switch {
	case models.IsTooLong(err):
		return results.ErrMalformedReply
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return results.ErrTimeout
	case openai.IsMalformed(err):
		return results.ErrMalformed
	case openai.IsContextLength(err):
		return results.ErrContext
	default:
		return results.ErrTransport
	}
}

func (a *openaiAgent) run(ctx context.Context, tr *trialRun) {
	tools, err := a.toolsFor(tr)
	if err != nil {
		tr.rec.ErrorClass, tr.rec.Error, tr.rec.StopReason = results.ErrTransport, err.Error(), results.StopError
		return
	}
	sys, ok := systemPrompt(tr)
	if !ok {
		return
	}
	tr.rec.Options = openaiOptions(a.cfg, a.entry)
	temp, maxTokens, seed := a.cfg.Sampling(a.entry)
	conv := &openaiConversation{a: a, stream: a.cfg.Streaming(),
		msgs: []sdk.ChatCompletionMessageParamUnion{sdk.SystemMessage(sys)},
		params: sdk.ChatCompletionNewParams{
			Model:       a.entry.ServedAs(),
			Tools:       tools,
			ToolChoice:  sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String("auto")},
			Temperature: sdk.Float(temp),
			MaxTokens:   sdk.Int(int64(maxTokens)),
			Seed:        sdk.Int(int64(seed)),
		}}
	chatLoop(ctx, tr, conv, sys, a.cfg.MaxAgentTurns)
}

// openaiConversation is a trial's conversation in the Chat Completions
// form.
type openaiConversation struct {
	a      *openaiAgent
	stream bool
	params sdk.ChatCompletionNewParams
	msgs   []sdk.ChatCompletionMessageParamUnion
}

func (c *openaiConversation) user(text string) { c.msgs = append(c.msgs, sdk.UserMessage(text)) }

func (c *openaiConversation) reply(ctx context.Context, rec *results.Record) (modelReply, error) {
	c.params.Messages = c.msgs
	r, err := c.a.client.Chat(ctx, c.params, c.stream)
	rec.Durations.ModelWaitNS += int64(r.Wait)
	rec.PromptTokens += r.PromptTokens
	rec.CompletionTokens += r.CompletionTokens
	out := modelReply{Message: assistantMessage(r), DoneReason: r.FinishReason}
	if err != nil {
		return out, err // a garbled reply still shows what the model wrote
	}
	for _, tc := range r.ToolCalls {
		out.Calls = append(out.Calls, replyCall{ID: tc.ID, Name: tc.Name, Args: json.RawMessage(tc.Arguments)})
	}
	c.msgs = append(c.msgs, assistantParam(r))
	return out, nil
}

func (c *openaiConversation) toolResult(call replyCall, res results.Call) {
	c.msgs = append(c.msgs, sdk.ToolMessage(res.Result, call.ID))
}

func (c *openaiConversation) classify(ctx context.Context, err error) results.ErrorClass {
	return classifyOpenAI(ctx, err)
}

// assistantMessage is a reply as the record keeps it; arguments that are
// not JSON are kept as a JSON string of what the model wrote.
func assistantMessage(r *openai.Reply) results.Message {
	m := results.Message{Role: "assistant", Content: r.Content, Thinking: r.Reasoning}
	for _, tc := range r.ToolCalls {
		args := json.RawMessage(tc.Arguments)
		if strings.TrimSpace(tc.Arguments) == "" {
			args = json.RawMessage("{}")
		} else if !json.Valid(args) {
			args, _ = json.Marshal(tc.Arguments)
		}
		m.ToolCalls = append(m.ToolCalls, results.MessageCall{Name: tc.Name, Arguments: args})
	}
	return m
}

// assistantParam is a reply as the next request sends it back: its
// content and its tool calls with their IDs; reasoning is not sent back,
// as vLLM and DeepSeek ask.
func assistantParam(r *openai.Reply) sdk.ChatCompletionMessageParamUnion {
	p := sdk.ChatCompletionAssistantMessageParam{}
	if r.Content != "" || len(r.ToolCalls) == 0 {
		p.Content.OfString = sdk.String(r.Content)
	}
	for _, tc := range r.ToolCalls {
		args := tc.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		} else if len(args) > results.CutBytes {
			// Sent back as the record keeps it: a model that writes
			// megabytes of arguments must not make every later request
			// carry them all.
			args = string(results.CutArguments(json.RawMessage(args)))
		}
		p.ToolCalls = append(p.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
			ID: tc.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args}}})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &p}
}

// toolsFor converts the trial's listed tools, once per tool set.
func (a *openaiAgent) toolsFor(tr *trialRun) ([]sdk.ChatCompletionToolUnionParam, error) {
	key := tr.t.toolsKey()
	if t, ok := a.tools[key]; ok {
		return t, nil
	}
	t, _, err := OpenAITools(tr.tools)
	if err != nil {
		return nil, err
	}
	a.tools[key] = t
	return t, nil
}

// OpenAITools converts tools listed over MCP into OpenAI function tools
// with their whole input schema as parameters: nothing is dropped, which
// Lost (what the request would lose, by tool, as OllamaTools reports it)
// checks rather than assumes.
func OpenAITools(tools []mcp.Tool) ([]sdk.ChatCompletionToolUnionParam, map[string][]string, error) {
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(tools))
	lost := map[string][]string{}
	for _, t := range tools {
		raw, err := inputSchema(t)
		if err != nil {
			return nil, nil, err
		}
		tool, l, err := openaiTool(t.Name, t.Description, raw)
		if err != nil {
			return nil, nil, err
		}
		if len(l) > 0 {
			lost[t.Name] = l
		}
		out = append(out, tool)
	}
	return out, lost, nil
}

// openaiTool converts one tool and lists what its request form lost.
func openaiTool(name, description string, schema []byte) (sdk.ChatCompletionToolUnionParam, []string, error) {
	var params sdk.FunctionParameters
	if err := json.Unmarshal(schema, &params); err != nil {
		return sdk.ChatCompletionToolUnionParam{}, nil, errors.New("tool " + name + ": input schema is not a JSON object: " + err.Error())
	}
	fn := sdk.FunctionDefinitionParam{Name: name, Parameters: params}
	if description != "" {
		fn.Description = sdk.String(description)
	}
	tool := sdk.ChatCompletionFunctionTool(fn)
	sent, err := json.Marshal(tool)
	if err != nil {
		return tool, nil, errors.New("tool " + name + ": " + err.Error())
	}
	var wire struct {
		Function struct {
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(sent, &wire); err != nil {
		return tool, nil, err
	}
	lost, err := lostBetween(schema, wire.Function.Parameters)
	return tool, lost, err
}

// openaiBackend is the kind of models an OpenAI-compatible endpoint
// serves (vLLM, llama.cpp's server, LM Studio, a hosted API).
type openaiBackend struct{}

// agentOpenAI is Record.Agent of an OpenAI-compatible model's trials.
const agentOpenAI = results.BackendOpenAI

func (openaiBackend) label() string { return agentOpenAI }

func (openaiBackend) check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	list := notCommand(doc, m, at)
	if m.BaseURL == "" {
		list = append(list, doc.Errorf(at(""), "found backend openai without base_url; expected the endpoint's URL, like http://gpu-node:8000/v1"))
	} else if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		list = append(list, doc.Errorf(at("base_url"), "found base_url %q; expected an http(s) URL like http://gpu-node:8000/v1", m.BaseURL))
	}
	return list
}

// preflight checks each endpoint: the key's environment variable is set,
// and GET {base_url}/models lists the model. Every problem is reported
// at once.
func (openaiBackend) preflight(ctx context.Context, pf preflight, entries []results.ModelEntry) error {
	var errs []error
	for _, m := range entries {
		if m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
			errs = append(errs, fmt.Errorf("model %s: api_key_env names %s, which is not set: export %s=<key> before granite run", m.Name, m.APIKeyEnv, m.APIKeyEnv))
			continue
		}
		if err := openai.New(m.BaseURL, apiKey(m), pf.opts.HTTP).Check(ctx, m.ServedAs()); err != nil {
			errs = append(errs, fmt.Errorf("model %s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// workers warms the endpoint's model up once and gives the entry its
// parallel workers on one client.
func (openaiBackend) workers(ctx context.Context, r *runner, e results.ModelEntry, _ []Trial) ([]worker, error) {
	c, err := endpoint(ctx, r, e)
	if err != nil {
		return nil, err
	}
	workers := make([]worker, e.Workers())
	for i := range workers {
		workers[i] = worker{host: e.BaseURL, agent: &openaiAgent{client: c, entry: e, cfg: r.cfg, tools: map[string][]sdk.ChatCompletionToolUnionParam{}}}
	}
	return workers, nil
}

// endpoint warms up an OpenAI-compatible model and records the warm-up
// and what the entry says of the model.
func endpoint(ctx context.Context, r *runner, e results.ModelEntry) (*openai.Client, error) {
	c := openai.New(e.BaseURL, apiKey(e), r.opts.HTTP)
	_, maxTokens, _ := r.cfg.Sampling(e)
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout())
	wall, err := c.WarmUp(wctx, e.ServedAs(), maxTokens)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("warm-up of %s (%s) at %s: %w", e.Name, e.ServedAs(), e.BaseURL, err)
	}
	info := results.ModelInfo{Family: e.ServedAs(), Parameters: e.ParamsB * 1e9, Quantization: e.Quantization}
	if e.ParamsB > 0 {
		info.ParameterSize = strconv.FormatFloat(e.ParamsB, 'f', -1, 64) + "B"
	}
	w := results.WarmUp{Model: e.Name, Host: e.BaseURL, WallS: wall.Seconds(), Config: fmt.Sprint(openaiOptions(r.cfg, e))}
	if err := r.checked(e.Name, info, w); err != nil {
		return nil, err
	}
	return c, nil
}
