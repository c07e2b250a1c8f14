package agent

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
	sdk "github.com/sashabaranov/go-openai"

	"github.com/mcpgranite/granite/harness/results"
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
	// tools converts the listed tools once per tool set.
	tools *toolCache[[]sdk.Tool]
}

// openaiOptions are a model's request fields, the same for every request,
// as the record keeps them.
func openaiOptions(cfg *results.Config, e results.ModelEntry) map[string]any {
	temp, maxTokens, seed := cfg.Sampling(e)
	return map[string]any{"temperature": temp, "max_tokens": maxTokens, "seed": seed, "tool_choice": "auto"}
}

func (a *openaiAgent) Run(ctx context.Context, tr *Trial) {
	playChat(ctx, tr, a.tools, openaiOptions(a.cfg, a.entry), a.cfg.MaxAgentTurns, func(tools []sdk.Tool, sys string) conversation {
		temp, maxTokens, seed := a.cfg.Sampling(a.entry)
		return &openaiConversation{a: a, stream: a.cfg.Streaming(),
			msgs: []sdk.ChatCompletionMessage{{Role: sdk.ChatMessageRoleSystem, Content: sys}},
			req: sdk.ChatCompletionRequest{
				Model:       a.entry.ServedAs(),
				Tools:       tools,
				ToolChoice:  "auto",
				Temperature: float32(temp),
				MaxTokens:   maxTokens,
				Seed:        &seed,
			}}
	})
}

// openaiConversation is a trial's conversation in the Chat Completions
// form.
type openaiConversation struct {
	a      *openaiAgent
	stream bool
	req    sdk.ChatCompletionRequest
	msgs   []sdk.ChatCompletionMessage
}

func (c *openaiConversation) user(text string) {
	c.msgs = append(c.msgs, sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleUser, Content: text})
}

func (c *openaiConversation) reply(ctx context.Context, rec *results.Record) (modelReply, error) {
	c.req.Messages = c.msgs
	r, err := c.a.client.Chat(ctx, c.req, c.stream)
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
	c.msgs = append(c.msgs, sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleTool, Content: res.Result, ToolCallID: call.ID})
}

// classify: a reply the model garbled is its own failure, and a
// conversation past the model's context, a reply ended at Ollama's
// repeat limit and one the server's tool parser emptied are told apart.
func (c *openaiConversation) classify(ctx context.Context, err error) results.ErrorClass {
	return classifyFailure(ctx, err, failure{openai.IsMalformed, results.ErrMalformed}, failure{openai.IsContextLength, results.ErrContext},
		failure{openai.IsRepeatLimit, results.ErrRepeatLimit}, failure{openai.IsDroppedCall, results.ErrDroppedCall})
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
// content and its tool calls with their IDs (an empty content without
// calls is sent too, see openai.Client.Chat); reasoning is not sent back,
// as vLLM and DeepSeek ask.
func assistantParam(r *openai.Reply) sdk.ChatCompletionMessage {
	p := sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleAssistant, Content: r.Content}
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
		p.ToolCalls = append(p.ToolCalls, sdk.ToolCall{ID: tc.ID, Type: sdk.ToolTypeFunction, Function: sdk.FunctionCall{Name: tc.Name, Arguments: args}})
	}
	return p
}

// OpenAITools converts tools listed over MCP into OpenAI function tools
// with their whole input schema as parameters: nothing is dropped, which
// Lost (what the request would lose, by tool, as OllamaTools reports it)
// checks rather than assumes.
func OpenAITools(tools []mcp.Tool) ([]sdk.Tool, map[string][]string, error) {
	out := make([]sdk.Tool, 0, len(tools))
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
// The schema goes as it is (a json.RawMessage), its keys in their order
// and its numbers as written.
func openaiTool(name, description string, schema []byte) (sdk.Tool, []string, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(schema, &params); err != nil {
		return sdk.Tool{}, nil, errors.New("tool " + name + ": input schema is not a JSON object: " + err.Error())
	}
	tool := sdk.Tool{Type: sdk.ToolTypeFunction, Function: &sdk.FunctionDefinition{Name: name, Description: description, Parameters: json.RawMessage(schema)}}
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

// Lost is what an OpenAI function tool drops of each input schema, by
// tool name: nothing, which the conversion checks rather than assumes.
func (openaiBackend) Lost(schemas map[string][]byte) map[string][]string {
	return lostEach(schemas, func(name string, schema []byte) ([]string, error) {
		_, l, err := openaiTool(name, "", schema)
		return l, err
	})
}

// openaiBackend is the kind of models an OpenAI-compatible endpoint
// serves (vLLM, llama.cpp's server, LM Studio, a hosted API).
type openaiBackend struct{}

// BackendOpenAI names the kind of an OpenAI-compatible endpoint's
// models; it is also Record.Agent of their trials.
const BackendOpenAI = "openai"

func (openaiBackend) Name() string  { return BackendOpenAI }
func (openaiBackend) Label() string { return BackendOpenAI }

func (openaiBackend) Check(doc *speclang.Document, m results.ModelEntry, at func(string) []any) speclang.ErrorList {
	list := notCommand(doc, m, at)
	if m.BaseURL == "" {
		list = append(list, doc.Errorf(at(""), "found backend openai without base_url; expected the endpoint's URL, like http://gpu-node:8000/v1"))
	} else if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		list = append(list, doc.Errorf(at("base_url"), "found base_url %q; expected an http(s) URL like http://gpu-node:8000/v1", m.BaseURL))
	}
	return list
}

// Preflight checks each endpoint: the key's environment variable is set,
// and GET {base_url}/models lists the model. Every problem is reported
// at once.
func (openaiBackend) Preflight(ctx context.Context, env *Env, entries []results.ModelEntry) error {
	var errs []error
	for _, m := range entries {
		if m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
			errs = append(errs, fmt.Errorf("model %s: api_key_env names %s, which is not set: export %s=<key> before granite run", m.Name, m.APIKeyEnv, m.APIKeyEnv))
			continue
		}
		if err := openai.New(m.BaseURL, apiKey(m), env.HTTP).Check(ctx, m.ServedAs()); err != nil {
			errs = append(errs, fmt.Errorf("model %s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Workers warms the endpoint's model up once and gives the entry its
// parallel workers on one client.
func (openaiBackend) Workers(ctx context.Context, env *Env, e results.ModelEntry, _ int) ([]Worker, error) {
	c, err := endpoint(ctx, env, e)
	if err != nil {
		return nil, err
	}
	workers := make([]Worker, e.Workers())
	for i := range workers {
		workers[i] = Worker{Host: e.BaseURL, Agent: &openaiAgent{client: c, entry: e, cfg: env.Config, tools: newToolCache(OpenAITools)}}
	}
	return workers, nil
}

// endpoint warms up an OpenAI-compatible model and records the warm-up
// and what the entry says of the model.
func endpoint(ctx context.Context, env *Env, e results.ModelEntry) (*openai.Client, error) {
	c := openai.New(e.BaseURL, apiKey(e), env.HTTP)
	_, maxTokens, _ := env.Config.Sampling(e)
	wctx, cancel := context.WithTimeout(ctx, env.Config.Timeout())
	wall, err := c.WarmUp(wctx, e.ServedAs(), maxTokens)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("warm-up of %s (%s) at %s: %w", e.Name, e.ServedAs(), e.BaseURL, err)
	}
	info := results.ModelInfo{Family: e.ServedAs(), Parameters: e.ParamsB * 1e9, Quantization: e.Quantization,
		ContextTokens: c.ServerContext(ctx, e.ServedAs()), Context: OpenAIContextNote}
	if longest := longestToolList(env.ToolSets); info.ContextTokens > 0 && longest.tokens > info.ContextTokens {
		fmt.Fprintf(env.Progress, "warning: model %s: the tool list of %s alone is about %d tokens, longer than the %d tokens of context %s loaded it with: the server will cut or refuse every trial's prompt there; %s\n",
			e.Name, longest.set, longest.tokens, info.ContextTokens, e.BaseURL, OpenAIContextNote)
	}
	if e.ParamsB > 0 {
		info.ParameterSize = strconv.FormatFloat(e.ParamsB, 'f', -1, 64) + "B"
	}
	w := results.WarmUp{Model: e.Name, Host: e.BaseURL, WallS: wall.Seconds(), Config: fmt.Sprint(openaiOptions(env.Config, e))}
	if err := env.Checked(e.Name, info, w); err != nil {
		return nil, err
	}
	return c, nil
}

// OpenAIContextNote is what run.json, granite list and the warnings say
// of an OpenAI-compatible entry's context: the API has no field for it.
const OpenAIContextNote = "num_ctx cannot be set over the OpenAI API: the server's own context applies (Ollama's /v1: its default, 4096 tokens unless OLLAMA_CONTEXT_LENGTH is set for `ollama serve` or the model's Modelfile says PARAMETER num_ctx; vLLM: --max-model-len)"

func (openaiBackend) ContextNote() string { return OpenAIContextNote }

// toolList is a tool set and about how many tokens its schemas take.
type toolList struct {
	set    string
	tokens int
}

// longestToolList returns the run's largest tool set by its input
// schemas, at about four bytes a token: a lower bound of what the tool
// list costs a prompt, names and descriptions left out.
func longestToolList(sets map[string]map[string][]byte) toolList {
	var best toolList
	for set, tools := range sets {
		n := 0
		for name, schema := range tools {
			n += len(name) + len(schema)
		}
		if n/4 > best.tokens || n/4 == best.tokens && set < best.set {
			best = toolList{set: set, tokens: n / 4}
		}
	}
	return best
}

// apiKey reads an entry's key from its environment variable; the key
// lives only in memory, never in a file the run writes.
func apiKey(e results.ModelEntry) string {
	if e.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(e.APIKeyEnv)
}
