package tinymodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgranite/granite/internal/gguf"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/ollama/ollama/template"
	"github.com/ollama/ollama/tools"
)

// The made-up tools of two levels: the first offers alpha_list and
// alpha_get, the second beta_find too.
var (
	firstLevel  = toolList("alpha_list", "alpha_get")
	secondLevel = toolList("alpha_list", "alpha_get", "beta_find")
)

func toolList(names ...string) api.Tools {
	var ts api.Tools
	for _, n := range names {
		var t api.Tool
		doc := fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":"does %s","parameters":{"type":"object","properties":{"limit":{"type":"integer"}},"required":["limit"]}}}`, n, n)
		if err := json.Unmarshal([]byte(doc), &t); err != nil {
			panic(err)
		}
		ts = append(ts, t)
	}
	return ts
}

const (
	rightCall   = `{"limit":5}`
	answer      = answerHead + answerTail
	answerHead  = "There are 5"
	answerTail  = " items."
	loopText    = " again"
	secondTurn  = "Second level done."
	invalidJSON = `{"limit":5`
)

// script is a model of every behaviour a test needs: per level and turn,
// a right call then an answer, an unknown tool, string-typed arguments,
// invalid JSON and a loop.
func script(typ gguf.Type, parser string) Script {
	return Script{
		Type:   typ,
		Parser: parser,
		Rules: []Rule{
			{When: Selector{Tools: []string{"beta_find"}, Turn: 0}, Reply: Reply{Text: Call("alpha_list", `{"limit":"5"}`)}},
			{When: Selector{Tools: []string{"beta_find"}, Turn: 1}, Reply: Reply{Text: Call("gamma_unknown", rightCall)}},
			{When: Selector{Tools: []string{"beta_find"}, Turn: 2}, Reply: Reply{Text: Call("beta_find", invalidJSON)}},
			{When: Selector{Tools: []string{"beta_find"}, Turn: 3}, Reply: Reply{Text: loopText, Loop: true}},
			{When: Selector{Tools: []string{"alpha_list"}, Without: []string{"beta_find"}, Turn: 0}, Reply: Reply{Text: Call("alpha_list", rightCall)}},
			{When: Selector{Tools: []string{"alpha_list"}, Without: []string{"beta_find"}, Turn: 1}, Reply: Reply{Text: answerHead, Then: []string{answerTail}}},
			{When: Selector{Tools: []string{"alpha_get"}, Turn: 2}, Reply: Reply{Text: "7"}},
		},
		Default: Reply{Text: secondTurn},
	}
}

// conversation is a request at a turn: a system prompt, a user task and,
// per earlier turn, the assistant's call and the tool's result.
func conversation(turn int) []api.Message {
	msgs := []api.Message{{Role: "system", Content: "You operate a system."}, {Role: "user", Content: "How many items are there?"}}
	for i := range turn {
		args := api.NewToolCallFunctionArguments()
		args.Set("limit", 5)
		msgs = append(msgs,
			api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "alpha_list", Arguments: args}}}},
			api.Message{Role: "tool", Content: fmt.Sprintf(`{"items":%d}`, i+5), ToolName: "alpha_list"})
	}
	return msgs
}

// want is what a request at a level and turn must decode to.
type want struct {
	name   string
	tools  api.Tools
	turn   int
	text   string
	tokens int // before end-of-text; for a loop, how many to decode
	loop   bool
}

var cases = []want{
	{"first level, first turn: the right call", firstLevel, 0, Call("alpha_list", rightCall), 1, false},
	{"first level, second turn: the answer in two tokens", firstLevel, 1, answer, 2, false},
	{"first level, third turn: a one-byte reply, the byte's own token", firstLevel, 2, "7", 1, false},
	{"first level, fourth turn: no rule, the default", firstLevel, 3, secondTurn, 1, false},
	{"second level, first turn: string-typed arguments", secondLevel, 0, Call("alpha_list", `{"limit":"5"}`), 1, false},
	{"second level, second turn: an unknown tool", secondLevel, 1, Call("gamma_unknown", rightCall), 1, false},
	{"second level, third turn: invalid JSON", secondLevel, 2, Call("beta_find", invalidJSON), 1, false},
	{"second level, fourth turn: a loop", secondLevel, 3, loopText, 32, true}, // past Ollama's limit of 30 repeats
	{"no tools: the default", nil, 0, secondTurn, 1, false},
}

// TestGreedyDecodingFollowsTheScript renders each request with Ollama's
// own template engine, tokenizes it as llama.cpp does, and decodes it
// greedily through every real layer of the F32, F16 and Q8_0 files: the
// chain is the scripted token then end-of-text (or the loop token over
// and over), with a wide lead over every other token despite the random
// layers.
func TestGreedyDecodingFollowsTheScript(t *testing.T) {
	for _, typ := range []gguf.Type{gguf.F32, gguf.F16, gguf.Q8_0} {
		m, err := Build(script(typ, ""))
		if err != nil {
			t.Fatal(err)
		}
		ref := load(t, m.GGUF)
		tmpl, err := template.Parse(m.Template)
		if err != nil {
			t.Fatalf("ollama's template parser refuses the template: %v\n%s", err, m.Template)
		}
		for _, c := range cases {
			var prompt bytes.Buffer
			if err := tmpl.Execute(&prompt, template.Values{Messages: conversation(c.turn), Tools: c.tools}); err != nil {
				t.Fatal(err)
			}
			steps := c.tokens + 2
			if c.loop {
				steps = c.tokens
			}
			got := ref.generate(prompt.String(), steps)
			switch {
			case c.loop && (got.eos || got.text != strings.Repeat(c.text, steps)):
				t.Errorf("%s %s: decoded %q (eos %v), want %q repeated %d times", typ, c.name, got.text, got.eos, c.text, steps)
			case !c.loop && (!got.eos || len(got.tokens) != c.tokens || got.text != c.text):
				t.Errorf("%s %s: decoded %q in %d tokens (eos %v), want %q in %d tokens then end-of-text", typ, c.name, got.text, len(got.tokens), got.eos, c.text, c.tokens)
			}
			t.Logf("%s %s: %d prompt tokens, margin %.1f, drift %.4f", typ, c.name, got.prompts, got.margin, got.drift)
			if got.margin < 20 {
				t.Errorf("%s %s: the chosen token leads the next by only %.2f logits", typ, c.name, got.margin)
			}
			if got.drift > 0.05 {
				t.Errorf("%s %s: the layers moved the residual by %.4f, enough to blur the directions", typ, c.name, got.drift)
			}
		}
	}
}

// TestTemplateEndsWithTheMarker: the prompt's last token is a marker,
// the tool list and every message reach the prompt, and the role and
// frame texts are control tokens, not bytes.
func TestTemplateEndsWithTheMarker(t *testing.T) {
	m, err := Build(script(gguf.F32, ""))
	if err != nil {
		t.Fatal(err)
	}
	ref := load(t, m.GGUF)
	tmpl, err := template.Parse(m.Template)
	if err != nil {
		t.Fatal(err)
	}
	var prompt bytes.Buffer
	if err := tmpl.Execute(&prompt, template.Values{Messages: conversation(1), Tools: firstLevel}); err != nil {
		t.Fatal(err)
	}
	p := prompt.String()
	for _, part := range []string{`"name":"alpha_get"`, "You operate a system.", "How many items", `<tool_call>` + "\n" + `{"name":"alpha_list","arguments":{"limit":5}}`, `{"items":5}`, "<|tool|>"} {
		if !strings.Contains(p, part) {
			t.Errorf("prompt lacks %q:\n%s", part, p)
		}
	}
	if !strings.HasSuffix(p, "<|turn_end|><|reply_5|>") {
		t.Errorf("prompt ends %q, want the second-turn marker of the first level", p[max(0, len(p)-40):])
	}
	toks := ref.tokenize(p)
	controls := 0
	for _, id := range toks {
		if ref.types[id] == tokenControl {
			controls++
		}
	}
	// system, its end, tools, its end, user, its end, assistant, its end,
	// tool, its end, the marker
	if controls != 11 {
		t.Errorf("%d control tokens in the prompt, want 11", controls)
	}
}

// TestParsersReadTheCalls: what the model emits is what each of Ollama's
// parsers needs: the template-derived parser (tag <tool_call>) finds the
// right call and the string-typed one, and drops the unknown tool and
// the invalid JSON with no content; the qwen3 parser finds all three
// well-formed calls and fails on the invalid JSON.
func TestParsersReadTheCalls(t *testing.T) {
	m, err := Build(script(gguf.F32, ""))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.Parse(m.Template)
	if err != nil {
		t.Fatal(err)
	}
	type parsed struct {
		Name    string
		Args    string
		Content string
		Err     bool
	}
	for _, c := range []struct {
		text           string
		template, qwen parsed
	}{
		{Call("alpha_list", rightCall), parsed{Name: "alpha_list", Args: rightCall}, parsed{Name: "alpha_list", Args: rightCall}},
		{Call("alpha_list", `{"limit":"5"}`), parsed{Name: "alpha_list", Args: `{"limit":"5"}`}, parsed{Name: "alpha_list", Args: `{"limit":"5"}`}},
		{Call("gamma_unknown", rightCall), parsed{}, parsed{Name: "gamma_unknown", Args: rightCall}},
		{Call("beta_find", invalidJSON), parsed{}, parsed{Err: true}},
		{answer, parsed{Content: answer}, parsed{Content: answer}},
	} {
		tp := tools.NewParser(tmpl.Template, secondLevel)
		calls, content := tp.Add(c.text)
		got := parsed{Content: content + string(tp.Content())}
		if len(calls) > 0 {
			args, _ := json.Marshal(calls[0].Function.Arguments)
			got.Name, got.Args = calls[0].Function.Name, string(args)
		}
		if d := cmp.Diff(c.template, got); d != "" {
			t.Errorf("template parser on %q (-want +got):\n%s", c.text, d)
		}
		qp := parsers.ParserForName("qwen3")
		qp.Init(secondLevel, nil, nil)
		content, _, qcalls, err := qp.Add(c.text, true)
		got = parsed{Content: content, Err: err != nil}
		if len(qcalls) > 0 {
			args, _ := json.Marshal(qcalls[0].Function.Arguments)
			got.Name, got.Args = qcalls[0].Function.Name, string(args)
		}
		if d := cmp.Diff(c.qwen, got); d != "" {
			t.Errorf("qwen3 parser on %q (-want +got):\n%s", c.text, d)
		}
	}
}

// TestBuildIsDeterministicAndSmall: the same script gives the same bytes,
// a few hundred thousand weights, and a Modelfile naming the parser.
func TestBuildIsDeterministicAndSmall(t *testing.T) {
	s := script(gguf.Q8_0, "qwen3")
	s.NumCtx = 2048
	a, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Build(s)
	if !bytes.Equal(a.GGUF, b.GGUF) || a.Template != b.Template {
		t.Error("two builds of one script differ")
	}
	if a.Params < 100_000 || a.Params > 1_000_000 {
		t.Errorf("%d weights, want a few hundred thousand", a.Params)
	}
	dir := t.TempDir()
	mf, err := a.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(mf)
	for _, line := range []string{"FROM " + filepath.Join(dir, "model.gguf") + "\n", "\nPARSER qwen3\n", "\nPARAMETER num_ctx 2048\n", `TEMPLATE """`} {
		if !strings.Contains(string(text), line) {
			t.Errorf("Modelfile lacks %q:\n%s", line, text)
		}
	}
	if onDisk, _ := os.ReadFile(filepath.Join(dir, "model.gguf")); !bytes.Equal(onDisk, a.GGUF) {
		t.Error("model.gguf differs from the built bytes")
	}
}

// TestScriptErrors: a script the model cannot say is refused with what to
// change.
func TestScriptErrors(t *testing.T) {
	for msg, s := range map[string]Script{
		"one token with one successor":          {Rules: []Rule{{Reply: Reply{Text: "xy", Loop: true}}}, Default: Reply{Text: "xy"}},
		"followed by \" c\" here and by \" b\"": {Rules: []Rule{{Reply: Reply{Text: "a", Then: []string{" b"}}}}, Default: Reply{Text: "a", Then: []string{" c"}}},
		"give it a Text to begin with":          {Default: Reply{Loop: true}},
		"a loop repeats its Text alone":         {Default: Reply{Text: "x", Loop: true, Then: []string{"y"}}},
		"Then[0] is empty":                      {Default: Reply{Text: "x", Then: []string{""}}},
		"an empty tool name":                    {Rules: []Rule{{When: Selector{Tools: []string{""}}}}},
		"counts the assistant's replies":        {Rules: []Rule{{When: Selector{Turn: -1}}}},
		"a tiny model is F32, F16 or Q8_0":      {Type: gguf.Type(2)},
	} {
		if _, err := Build(s); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("error %v, want one saying %q", err, msg)
		}
	}
}
