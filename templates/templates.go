// Package templates embeds the text templates granite fills in: the agent's
// system prompt now; the synthesizer's and the judge's prompts and the
// report layout as they land.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var fs embed.FS

// Agent is the system prompt of a model under test. It takes the domain's
// Title and Description.
var Agent = template.Must(template.ParseFS(fs, "agent.tmpl"))
