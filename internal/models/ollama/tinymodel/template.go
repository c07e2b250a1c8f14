package tinymodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// chatTemplate writes the Modelfile's TEMPLATE: the system prompt, the
// tool list as JSON, each message framed by role tokens (an assistant's
// tool calls in Call's format, so Ollama's template-derived parser takes
// "<tool_call>" for the tag), and last the marker of the first rule
// whose selector matches, which decides the reply.
//
// Ollama's template language has no "contains" or arithmetic, so the
// template first sets a variable per tool name a selector mentions,
// while ranging over .Tools, and counts the assistant's messages as a
// string of "+", one per message.
func chatTemplate(s Script, v *vocab) string {
	var names []string
	for _, r := range s.Rules {
		names = append(names, r.When.Tools...)
		names = append(names, r.When.Without...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	variable := func(name string) string { return fmt.Sprintf("$tool%d", slices.Index(names, name)) }

	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "{{- %s := false }}", variable(n))
	}
	b.WriteString("{{- $turn := \"\" }}")
	if len(names) > 0 {
		b.WriteString("{{- range .Tools }}")
		for _, n := range names {
			fmt.Fprintf(&b, "{{ if eq .Function.Name %s }}{{ %s = true }}{{ end }}", strconv.Quote(n), variable(n))
		}
		b.WriteString("{{ end }}\n")
	}
	b.WriteString(`{{- if .System }}` + systemToken + `{{ .System }}` + turnEndToken + `{{ end }}
{{- if .Tools }}` + toolsToken + `{{ range .Tools }}{{ json . }}
{{ end }}` + turnEndToken + `{{ end }}
{{- range .Messages }}{{ if ne .Role "system" }}<|{{ .Role }}|>{{ .Content }}
{{- if .ToolCalls }}<tool_call>
{{ range .ToolCalls }}{"name":{{ json .Function.Name }},"arguments":{{ json .Function.Arguments }}}
{{ end }}</tool_call>{{ end }}` + turnEndToken + `{{ end }}
{{- if eq .Role "assistant" }}{{ $turn = printf "%s+" $turn }}{{ end }}
{{- end }}
`)
	for i, r := range s.Rules {
		keyword := "else if"
		if i == 0 {
			keyword = "if"
		}
		fmt.Fprintf(&b, "{{- %s %s }}%s\n", keyword, condition(r.When, variable), v.tokens[v.markers[i]])
	}
	def := v.tokens[v.markers[len(s.Rules)]]
	if len(s.Rules) == 0 {
		b.WriteString(def)
	} else {
		fmt.Fprintf(&b, "{{- else }}%s{{ end }}", def)
	}
	return b.String()
}

// condition is a selector as a template pipeline.
func condition(sel Selector, variable func(string) string) string {
	terms := []string{fmt.Sprintf("(eq $turn %s)", strconv.Quote(strings.Repeat("+", sel.Turn)))}
	for _, n := range sel.Tools {
		terms = append(terms, variable(n))
	}
	for _, n := range sel.Without {
		terms = append(terms, "(not "+variable(n)+")")
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return "and " + strings.Join(terms, " ")
}
