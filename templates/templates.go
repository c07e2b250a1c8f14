// Package templates embeds the text templates granite fills in: the agent's
// system prompt now; the synthesizer's and the judge's prompts and the
// report layout as they land.
package templates

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var fs embed.FS

// Agent is the system prompt of a model under test. It takes the domain's
// Title and Description.
var Agent = template.Must(template.ParseFS(fs, "agent.tmpl"))

// SynthScenario is the synthesizer's scenario stage prompt. It takes Tools
// (Name, Description, Schema), Tier (simple or complex) and Focus (tool
// names the scenario must use).
var SynthScenario = template.Must(template.New("synth_scenario.tmpl").Funcs(template.FuncMap{"join": strings.Join}).ParseFS(fs, "synth_scenario.tmpl"))

// Judge is the judge's prompt. It takes Tools (Name, Description, Schema),
// Turns (Prompt) and Calls (Tool, Arguments, Reason).
var Judge = template.Must(template.ParseFS(fs, "judge.tmpl"))

// SynthEnrich, SynthMock and SynthTurns are the synthesizer's enrich,
// mock-output and multi-turn stage prompts.
var (
	SynthEnrich = template.Must(template.ParseFS(fs, "synth_enrich.tmpl"))
	SynthMock   = template.Must(template.ParseFS(fs, "synth_mock.tmpl"))
	SynthTurns  = template.Must(template.ParseFS(fs, "synth_turns.tmpl"))
)
