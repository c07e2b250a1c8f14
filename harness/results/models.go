package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
)

// MCP client configuration formats a command entry's mcp_config names.
const (
	MCPConfigEnv    = "env"    // GRANITE_MCP_URL and GRANITE_MCP_TOKEN only (the default)
	MCPConfigClaude = "claude" // Claude Code / Claude Desktop mcpServers JSON
	MCPConfigCodex  = "codex"  // Codex CLI config.toml
	MCPConfigGemini = "gemini" // Gemini CLI .gemini/settings.json
)

// ModelEntry is one model of an experiment: in the config, a plain Ollama
// tag, or an object naming its backend. Name is what trial ids, records
// and the report show; Model is what the server calls it (default Name).
// The API key itself is never here, only the environment variable that
// holds it.
type ModelEntry struct {
	Name string `json:"name"`
	// Backend names the entry's kind, one registered in package agent
	// (default Ollama).
	Backend string `json:"backend,omitempty"`
	// BaseURL is an OpenAI-compatible endpoint (…/v1).
	BaseURL   string `json:"base_url,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// ParamsB (billions) and Quantization describe a model no /api/show
	// describes, for the report.
	ParamsB      float64 `json:"params_b,omitempty"`
	Quantization string  `json:"quantization,omitempty"`
	// Parallel is how many trials of this model run at once (default 1,
	// the paper's protocol).
	Parallel int `json:"parallel,omitempty"`
	// Temperature, MaxTokens and Seed override the experiment's for this
	// model.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        *int     `json:"seed,omitempty"`

	// Command is a command entry's program and arguments, each a
	// text/template over the trial (see agent.CommandData); it runs
	// without a shell.
	Command []string `json:"command,omitempty"`
	// MCPConfig is the client configuration written for it (MCPConfig*
	// constants; default env).
	MCPConfig string `json:"mcp_config,omitempty"`
	// Answer says where the final answer is on stdout (nil: all of it).
	Answer *AnswerSpec `json:"answer,omitempty"`
	// TimeoutSeconds limits one trial of the command (default: the
	// experiment's agent_timeout_seconds).
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// Env adds variables to the command's environment; values are
	// templates like the arguments.
	Env map[string]string `json:"env,omitempty"`
	// PassEnv names variables of granite's own environment the command
	// gets besides the allow-list (PATH, HOME, the locale...): a key the
	// agent itself needs, say. Nothing else of granite's passes.
	PassEnv []string `json:"pass_env,omitempty"`
	// EmptyHome runs the command with HOME set to an empty folder of the
	// trial's own, so that no user configuration leaks in and no trial
	// reads what an earlier one wrote there (nil: yes; see HomeIsEmpty).
	EmptyHome *bool `json:"empty_home,omitempty"`
	// Limits bound one trial of the command where it runs in namespaces
	// (nil: the sandbox's defaults).
	Limits *CommandLimits `json:"limits,omitempty"`
}

// CommandLimits bound what one trial of an agent command may use; a
// field left out keeps its default (4096 MiB, 2048 tasks, 1024 MiB).
type CommandLimits struct {
	// MemoryMiB bounds the resident memory of all its processes together.
	MemoryMiB int `json:"memory_mib,omitempty"`
	// Tasks bounds its processes and threads together.
	Tasks int `json:"tasks,omitempty"`
	// DiskMiB bounds each folder it may write in: its own, /tmp,
	// /var/tmp, /dev/shm and its writes under HOME.
	DiskMiB int `json:"disk_mib,omitempty"`
}

// HomeIsEmpty reports whether the command runs with an empty HOME of its
// trial's own: unless the entry says empty_home: false, since an agent
// CLI's home holds a login, memory files and transcripts that would carry
// from trial to trial and from the user into the benchmark.
func (e ModelEntry) HomeIsEmpty() bool { return e.EmptyHome == nil || *e.EmptyHome }

// AnswerSpec says where a command's final answer is: all of stdout
// (written "stdout"), or a field of the JSON it prints ({json: result}).
type AnswerSpec struct {
	// JSON is a field name, or a dotted path of them; the last JSON value
	// on stdout that has it gives the answer.
	JSON string `json:"json,omitempty"`
}

// UnmarshalJSON reads "stdout" or {json: field}.
func (a *AnswerSpec) UnmarshalJSON(data []byte) error {
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '"' {
		*a = AnswerSpec{}
		return nil // the schema allows only "stdout"
	}
	type plain AnswerSpec
	return json.Unmarshal(data, (*plain)(a))
}

// MarshalJSON writes the stdout answer as "stdout".
func (a AnswerSpec) MarshalJSON() ([]byte, error) {
	if a.JSON == "" {
		return []byte(`"stdout"`), nil
	}
	type plain AnswerSpec
	return json.Marshal(plain(a))
}

// IsPlain reports whether the entry is only a name, as a plain tag is.
func (e ModelEntry) IsPlain() bool { return reflect.DeepEqual(e, ModelEntry{Name: e.Name}) }

// UnmarshalJSON reads a plain tag or an object.
func (e *ModelEntry) UnmarshalJSON(data []byte) error {
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '"' {
		*e = ModelEntry{}
		return json.Unmarshal(d, &e.Name)
	}
	type plain ModelEntry
	return json.Unmarshal(data, (*plain)(e))
}

// MarshalJSON writes an entry that is only a name as the plain tag, so
// that run.json and the config hash of a config of tags are what they
// were before entries could be objects.
func (e ModelEntry) MarshalJSON() ([]byte, error) {
	if e.IsPlain() {
		return json.Marshal(e.Name)
	}
	type plain ModelEntry
	return json.Marshal(plain(e))
}

// ServedAs is the model's name on its server.
func (e ModelEntry) ServedAs() string {
	if e.Model != "" {
		return e.Model
	}
	return e.Name
}

// Workers is the number of trials of the model that run at once.
func (e ModelEntry) Workers() int { return max(1, e.Parallel) }

// ModelNames returns the entries' names, in order.
func (c *Config) ModelNames() []string {
	out := make([]string, len(c.Models))
	for i, m := range c.Models {
		out[i] = m.Name
	}
	return out
}

// Entry returns the entry of a model name.
func (c *Config) Entry(name string) (ModelEntry, bool) {
	i := slices.IndexFunc(c.Models, func(m ModelEntry) bool { return m.Name == name })
	if i < 0 {
		return ModelEntry{}, false
	}
	return c.Models[i], true
}

// Entries makes plain entries of names, for configs built in code.
func Entries(names ...string) []ModelEntry {
	out := make([]ModelEntry, len(names))
	for i, n := range names {
		out[i] = ModelEntry{Name: n}
	}
	return out
}

// Sampling is one model's sampling: the experiment's temperature, max_tokens and
// seed, or the entry's where it sets them.
func (c *Config) Sampling(e ModelEntry) (temperature float64, maxTokens, seed int) {
	temperature, maxTokens, seed = c.Temperature, c.MaxTokens, c.Seed
	if e.Temperature != nil {
		temperature = *e.Temperature
	}
	if e.MaxTokens > 0 {
		maxTokens = e.MaxTokens
	}
	if e.Seed != nil {
		seed = *e.Seed
	}
	return temperature, maxTokens, seed
}
