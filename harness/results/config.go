package results

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/surface"
)

// Config is one experiment, as run.json records it. Zero fields take the
// documented defaults in harness.LoadConfig, which reads it.
type Config struct {
	Name          string        `json:"name"`
	Description   string        `json:"description,omitempty"`
	Models        []ModelEntry  `json:"models"`
	Domains       []string      `json:"domains,omitempty"`
	Scenarios     []string      `json:"scenarios,omitempty"`
	Granularities []level.Level `json:"granularities,omitempty"`
	// Interfaces are transformed levels played beside (or instead of) the
	// granularities, each by its name (see package surface).
	Interfaces surface.Specs `json:"interfaces,omitempty"`
	// Faults are the fault settings every scenario trial is played under
	// (see Config.Settings); none: no faults.
	Faults              []faults.Setting `json:"faults,omitempty"`
	Repetitions         int              `json:"repetitions"`
	MaxAgentTurns       int              `json:"max_agent_turns"`
	MaxCalls            int              `json:"max_calls,omitempty"`
	AgentTimeoutSeconds float64          `json:"agent_timeout_seconds"`
	Temperature         float64          `json:"temperature"`
	MaxTokens           int              `json:"max_tokens"`
	NumCtx              int              `json:"num_ctx"`
	KeepAlive           string           `json:"keep_alive"`
	Seed                int              `json:"seed"`
	Stream              *bool            `json:"stream,omitempty"`
	Ollama              OllamaConfig     `json:"ollama"`
	Meter               string           `json:"meter"`
	MeterIntervalMS     int              `json:"meter_interval_ms,omitempty"`
	GPUs                []int            `json:"gpus,omitempty"`
	PowercapRoot        string           `json:"powercap_root,omitempty"`
	SysfsRoot           string           `json:"sysfs_root,omitempty"`
	Output              string           `json:"output"`
	// Artifacts makes this an artifact run: models x artifacts x
	// repetitions, each artifact on a replay server (see harness.LoadArtifacts).
	Artifacts     string `json:"artifacts,omitempty"`
	ArtifactTools string `json:"artifact_tools,omitempty"`
	// With granularities, an artifact run plays each artifact at each
	// level, its tools regrouped by Groups (a groups file; empty:
	// derived). ArtifactCmd or ArtifactURL names a live source to play
	// on instead of replay servers: a command is started afresh for
	// every trial. For artifacts of reference scenarios, ArtifactCmd is a
	// template of each one's level server (harness.CommandTemplate), and
	// granularities keep the artifacts at those levels.
	Groups      string `json:"groups,omitempty"`
	ArtifactCmd string `json:"artifact_cmd,omitempty"`
	ArtifactURL string `json:"artifact_url,omitempty"`
}

// OllamaConfig says where Ollama runs.
type OllamaConfig struct {
	Host  string   `json:"host,omitempty"`
	Hosts []string `json:"hosts,omitempty"`
}

// Timeout is the wall-clock limit of one trial.
func (c *Config) Timeout() time.Duration {
	return time.Duration(c.AgentTimeoutSeconds * float64(time.Second))
}

// DefaultMaxCalls is the call cap of a trial when the config sets none:
// far above any scenario's gold (tens of calls), low enough that a record
// of bounded calls stays a few megabytes.
const DefaultMaxCalls = 1000

// CallLimit is the most tool calls a trial may make: max_calls, or
// DefaultMaxCalls. The call after the last allowed one is not made; the
// trial stops with StopCallLimit.
func (c *Config) CallLimit() int {
	if c.MaxCalls > 0 {
		return c.MaxCalls
	}
	return DefaultMaxCalls
}

// CallLimitError says why a trial stopped at its call cap and how to
// raise it.
func CallLimitError(limit int) string {
	return fmt.Sprintf("the trial reached its cap of %d tool calls and was stopped before the next one; raise max_calls in the experiment config to allow more", limit)
}

// Streaming reports whether replies are streamed.
func (c *Config) Streaming() bool { return c.Stream == nil || *c.Stream }

// HostList returns the Ollama hosts, one worker each.
func (c *Config) HostList() []string {
	if len(c.Ollama.Hosts) > 0 {
		return c.Ollama.Hosts
	}
	return []string{c.Ollama.Host}
}

// Played lists the interfaces a scenario run plays, in plan order: each
// of the granularities as its level's identity interface
// (surface.Identity), then the interfaces. Everything past the config
// reads the plan from here, so a level as written and a transformed one
// travel one path.
func (c *Config) Played() []surface.Spec {
	out := make([]surface.Spec, 0, len(c.Granularities)+len(c.Interfaces))
	for _, lv := range c.Granularities {
		out = append(out, surface.Identity(lv))
	}
	return append(out, c.Interfaces...)
}

// Settings lists the fault settings a scenario run plays each trial
// under, in plan order: the config's, or one setting of no faults (rate
// 0) when it names none. A setting of rate 0 is a run without faults:
// its trials keep today's ids and records (see FaultTrialID).
func (c *Config) Settings() []faults.Setting {
	if len(c.Faults) == 0 {
		return []faults.Setting{{Name: "none"}}
	}
	return c.Faults
}

// Endpoints say where one run's models are served when that is not where
// the config says: a shard's own server on its node, or its share of a
// pool of hosts. They are the run's, not the config's: shards on
// different nodes are one run, with one config hash, whatever ports
// their servers listen on.
type Endpoints struct {
	// OllamaHosts replace ollama.host and ollama.hosts.
	OllamaHosts []string
	// BaseURL replaces the base_url of every entry that has one (the
	// OpenAI-compatible ones; the config refuses it on the others).
	BaseURL string
}

// Apply returns c served at e: c itself when e changes nothing, else a
// copy, so that the config a run hashes and records stays as written.
func (e Endpoints) Apply(c *Config) *Config {
	if len(e.OllamaHosts) == 0 && e.BaseURL == "" {
		return c
	}
	served := *c
	if len(e.OllamaHosts) > 0 {
		served.Ollama = OllamaConfig{Hosts: e.OllamaHosts}
	}
	if e.BaseURL != "" {
		served.Models = slices.Clone(c.Models)
		for i := range served.Models {
			if served.Models[i].BaseURL != "" {
				served.Models[i].BaseURL = e.BaseURL
			}
		}
	}
	return &served
}
