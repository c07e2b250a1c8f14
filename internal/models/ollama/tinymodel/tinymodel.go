// Package tinymodel writes tiny llama-architecture GGUF models whose
// greedy decoding follows a script, so that tests can run granite
// against a real Ollama server without downloading a model.
//
// The model is a bigram chain laid over real layers. Its chat template
// (the Modelfile's TEMPLATE, which Ollama renders) ends every prompt with
// a marker control token chosen by conditions on the request: which tool
// names the tool list holds, and how many replies the assistant has
// already given. Each marker's embedding is its own direction of the
// residual stream, and the output matrix maps that direction to one
// vocabulary token that holds a whole reply (a complete tool call, a
// whole answer) or its first part; that token's direction maps to the
// next part, then to end-of-text, or, for a loop, to itself. The attention and feed-forward weights are random
// (seeded) and small, so that what they add to the residual stream
// cannot move the argmax: the model runs every layer for real, and still
// says what the script says.
package tinymodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/gguf"
)

// Selector is the condition a Rule answers: the request's tool list names
// every tool in Tools and none in Without, and the conversation holds
// exactly Turn assistant messages (0 for the first reply, 1 after one
// call and its result, …).
type Selector struct {
	Tools   []string
	Without []string
	Turn    int
}

// Reply is what the model emits: Text verbatim as one token, then each
// of Then as one token more (so a stream carries them as chunks of their
// own), then end-of-text. With Loop it emits Text again and again
// instead, which Ollama's repeat limit (a token repeated 30 times) cuts
// off without a done chunk. An empty Text ends the reply at once.
//
// Every text is one token with one successor, whichever reply it is in:
// two replies may share a text only if the same token follows it in both.
type Reply struct {
	Text string
	Then []string
	Loop bool
}

// Rule is one line of a Script: the reply for the prompts its selector
// matches.
type Rule struct {
	When  Selector
	Reply Reply
}

// Script says what the model replies to each request. The first rule
// whose selector matches decides; Default answers when none does.
type Script struct {
	Rules   []Rule
	Default Reply
	// Parser is the Modelfile's PARSER: "" leaves tool calls to Ollama's
	// template-derived parser, "qwen3" (or another built-in) to that
	// parser. Both read Call's format.
	Parser string
	// Type is how the weight matrices are stored (the norms are always
	// F32, as in any GGUF).
	Type gguf.Type
	// NumCtx, when set, becomes PARAMETER num_ctx.
	NumCtx int
	// Seed draws the random layers; the same script and seed give the
	// same bytes.
	Seed uint64
}

// Call is a tool call in the format both parsers read (Qwen's and
// Hermes'): the name and the arguments, which are written as given so a
// script can hold invalid JSON or arguments of the wrong type.
func Call(name, arguments string) string {
	quoted, _ := json.Marshal(name)
	return "<tool_call>\n{\"name\":" + string(quoted) + ",\"arguments\":" + arguments + "}\n</tool_call>"
}

// The architecture: small enough to build and load in milliseconds,
// large enough that every kind of layer llama.cpp runs for a llama model
// is there (grouped-query attention with RoPE, SwiGLU, RMSNorm).
const (
	minEmbd       = 64
	nHead         = 4
	nHeadKV       = 2
	nFF           = 256
	nLayer        = 2
	contextLength = 32768
	ropeBase      = 10000
	rmsEps        = 1e-5
	// layerScale bounds the random layer weights, and stateScale is the
	// output weight on a state's direction: the layers add a few
	// thousandths to each residual coordinate, while the next token's
	// logit is about stateScale·√n_embd ≈ 40 and every other logit near 0.
	// noiseScale bounds the output rows of tokens no state selects, so
	// that the matrix is not zero outside the chain.
	layerScale = 0.02
	stateScale = 5
	noiseScale = 0.05
)

// Model is a built model: the GGUF file's bytes and what its Modelfile
// says besides FROM.
type Model struct {
	GGUF []byte
	// Template is the chat template, in Ollama's Go template language.
	Template string
	Parser   string
	NumCtx   int
	// Params is the number of weights, EmbeddingLength n_embd.
	Params          int
	EmbeddingLength int
}

// Modelfile is the Modelfile that creates the model from its GGUF file
// written at ggufPath.
func (m *Model) Modelfile(ggufPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\nTEMPLATE \"\"\"%s\"\"\"\n", ggufPath, m.Template)
	if m.Parser != "" {
		fmt.Fprintf(&b, "PARSER %s\n", m.Parser)
	}
	if m.NumCtx > 0 {
		fmt.Fprintf(&b, "PARAMETER num_ctx %d\n", m.NumCtx)
	}
	return b.String()
}

// WriteDir writes the model into dir as model.gguf and Modelfile, and
// returns the Modelfile's path, for `ollama create NAME -f PATH`.
func (m *Model) WriteDir(dir string) (string, error) {
	ggufPath, err := filepath.Abs(filepath.Join(dir, "model.gguf"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(ggufPath, m.GGUF, 0o644); err != nil {
		return "", fmt.Errorf("write tiny model: %w", err)
	}
	mf := filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(mf, []byte(m.Modelfile(ggufPath)), 0o644); err != nil {
		return "", fmt.Errorf("write tiny model: %w", err)
	}
	return mf, nil
}

// vocab is the model's vocabulary and what each token is for: the byte
// tokens, the frame's control tokens, one marker per rule and the
// default, and one token per distinct reply text. dir is the residual
// direction a token's embedding points along (-1: a random embedding,
// for tokens never last in a prompt); next maps a direction to the token
// whose output row points along it, the token it selects.
type vocab struct {
	tokens  []string
	types   []int32
	dir     []int
	markers []int // per rule, then the default
	nDirs   int
	next    map[int]int // direction → token it selects
}

// selecting is the direction that selects tok, given one the first time
// a token needs it.
func (v *vocab) selecting(tok int) int {
	for d, t := range v.next {
		if t == tok {
			return d
		}
	}
	d := v.nDirs
	v.nDirs++
	v.next[d] = tok
	return d
}

func (v *vocab) add(text string, typ int32) int {
	v.tokens = append(v.tokens, text)
	v.types = append(v.types, typ)
	v.dir = append(v.dir, -1)
	return len(v.tokens) - 1
}

func buildVocab(s Script) (*vocab, error) {
	v := &vocab{next: map[int]int{}}
	for b := range 256 {
		v.add(string(byteToRune[b]), tokenNormal)
	}
	for _, t := range frameTokens {
		v.add(t, tokenControl)
	}
	replies := make([]Reply, 0, len(s.Rules)+1)
	for _, r := range s.Rules {
		replies = append(replies, r.Reply)
	}
	replies = append(replies, s.Default)
	for i := range replies {
		v.markers = append(v.markers, v.add(fmt.Sprintf(markerTemplate, i), tokenControl))
	}
	// Direction 0 selects end-of-text.
	eos := slices.Index(v.tokens, eosToken)
	v.next[0] = eos
	v.nDirs = 1
	textTok := map[string]int{} // reply text → its token
	successor := map[int]int{}  // reply token → the token after it
	token := func(text string) int {
		if tok, ok := textTok[text]; ok {
			return tok
		}
		tok := -1
		if len(text) == 1 {
			tok = int(text[0]) // a one-byte text is its byte token: two tokens of one text would tokenize prompts differently
		} else {
			tok = v.add(byteLevel(text), tokenNormal)
		}
		textTok[text] = tok
		return tok
	}
	for i, r := range replies {
		if r.Text == "" {
			if r.Loop || len(r.Then) > 0 {
				return nil, fmt.Errorf("reply %d has no Text but Loop or Then; give it a Text to begin with", i)
			}
			v.dir[v.markers[i]] = 0
			continue
		}
		if r.Loop && len(r.Then) > 0 {
			return nil, fmt.Errorf("reply %d loops and has Then; a loop repeats its Text alone", i)
		}
		seq := append([]string{r.Text}, r.Then...)
		for k, text := range seq {
			if text == "" {
				return nil, fmt.Errorf("reply %d: Then[%d] is empty; every token of a reply needs a text", i, k-1)
			}
			tok := token(text)
			next := eos
			switch {
			case r.Loop:
				next = tok
			case k+1 < len(seq):
				next = token(seq[k+1])
			}
			if prev, ok := successor[tok]; ok && prev != next {
				return nil, fmt.Errorf("reply %d: the text %q is followed by %q here and by %q in another reply; a text is one token with one successor",
					i, text, v.text(next), v.text(prev))
			}
			successor[tok] = next
			v.dir[tok] = v.selecting(next)
		}
		v.dir[v.markers[i]] = v.selecting(token(r.Text))
	}
	return v, nil
}

// text is a token's text as an error message shows it.
func (v *vocab) text(tok int) string {
	if v.types[tok] == tokenControl {
		return v.tokens[tok]
	}
	var b []byte
	for _, r := range v.tokens[tok] {
		b = append(b, byte(slices.Index(byteToRune[:], r)))
	}
	return string(b)
}

// Build writes the model a script describes.
func Build(s Script) (*Model, error) {
	for i, r := range s.Rules {
		for _, name := range slices.Concat(r.When.Tools, r.When.Without) {
			if name == "" {
				return nil, fmt.Errorf("rule %d: an empty tool name; name the tools the selector asks for", i)
			}
		}
		if r.When.Turn < 0 {
			return nil, fmt.Errorf("rule %d: turn %d; a turn counts the assistant's replies so far, from 0", i, r.When.Turn)
		}
	}
	switch s.Type {
	case gguf.F32, gguf.F16, gguf.Q8_0:
	default:
		return nil, fmt.Errorf("tensor type %s: a tiny model is F32, F16 or Q8_0", s.Type)
	}
	v, err := buildVocab(s)
	if err != nil {
		return nil, err
	}
	nEmbd := max(minEmbd, (v.nDirs+31)/32*32)
	tmpl := chatTemplate(s, v)
	f, params := weights(s, v, nEmbd)
	f.SetString("general.architecture", "llama")
	f.SetString("general.name", "tiny")
	f.SetUint32("general.alignment", gguf.DefaultAlignment)
	f.SetUint32("general.file_type", fileType(s.Type))
	f.SetUint32("llama.context_length", contextLength)
	f.SetUint32("llama.embedding_length", uint32(nEmbd))
	f.SetUint32("llama.block_count", nLayer)
	f.SetUint32("llama.feed_forward_length", nFF)
	f.SetUint32("llama.attention.head_count", nHead)
	f.SetUint32("llama.attention.head_count_kv", nHeadKV)
	f.SetFloat32("llama.attention.layer_norm_rms_epsilon", rmsEps)
	f.SetFloat32("llama.rope.freq_base", ropeBase)
	f.SetUint32("llama.rope.dimension_count", uint32(nEmbd/nHead))
	f.SetUint32("llama.vocab_size", uint32(len(v.tokens)))
	f.SetString("tokenizer.ggml.model", "gpt2")
	f.SetString("tokenizer.ggml.pre", "gpt-2")
	f.SetStrings("tokenizer.ggml.tokens", v.tokens)
	f.SetInt32s("tokenizer.ggml.token_type", v.types)
	// No merges: every prompt splits into its byte tokens and the
	// template's control tokens, and the reply tokens are reached only
	// by sampling. llama.cpp refuses a gpt2 vocabulary without the key.
	f.SetStrings("tokenizer.ggml.merges", nil)
	f.SetUint32("tokenizer.ggml.bos_token_id", uint32(slices.Index(v.tokens, bosToken)))
	f.SetUint32("tokenizer.ggml.eos_token_id", uint32(slices.Index(v.tokens, eosToken)))
	f.SetBool("tokenizer.ggml.add_bos_token", false)
	f.SetString("tokenizer.chat_template", "")
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("write tiny model: %w", err)
	}
	return &Model{GGUF: buf.Bytes(), Template: tmpl, Parser: s.Parser, NumCtx: s.NumCtx,
		Params: params, EmbeddingLength: nEmbd}, nil
}

// fileType is general.file_type as llama.cpp numbers it (LLAMA_FTYPE_*),
// which Ollama shows as the model's quantization.
func fileType(t gguf.Type) uint32 {
	switch t {
	case gguf.F16:
		return 1
	case gguf.Q8_0:
		return 7
	}
	return 0
}

// weights draws and crafts the tensors: token_embd rows and output rows
// along the state directions, everything else random and small.
func weights(s Script, v *vocab, nEmbd int) (*gguf.File, int) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x7a1e))
	uniform := func(n int, scale float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((rng.Float64()*2 - 1) * scale)
		}
		return out
	}
	ones := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	nVocab := len(v.tokens)
	embd := make([]float32, 0, nVocab*nEmbd)
	for tok := range nVocab {
		row := make([]float32, nEmbd)
		if d := v.dir[tok]; d >= 0 {
			row[d] = 1
		} else {
			row = uniform(nEmbd, 1)
		}
		embd = append(embd, row...)
	}
	output := make([]float32, 0, nVocab*nEmbd)
	selects := map[int]int{}
	for d, tok := range v.next {
		selects[tok] = d
	}
	for tok := range nVocab {
		row := uniform(nEmbd, noiseScale)
		if d, ok := selects[tok]; ok {
			row = make([]float32, nEmbd)
			row[d] = stateScale
		}
		output = append(output, row...)
	}
	headDim := nEmbd / nHead
	kvDim := headDim * nHeadKV
	var f gguf.File
	params := 0
	add := func(name string, typ gguf.Type, shape []uint64, data []float32) {
		f.AddTensor(name, typ, shape, data)
		params += len(data)
	}
	e, vv, ff := uint64(nEmbd), uint64(nVocab), uint64(nFF)
	add("token_embd.weight", s.Type, []uint64{e, vv}, embd)
	for l := range nLayer {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.F32, []uint64{e}, ones(nEmbd))
		add(p+"attn_q.weight", s.Type, []uint64{e, e}, uniform(nEmbd*nEmbd, layerScale))
		add(p+"attn_k.weight", s.Type, []uint64{e, uint64(kvDim)}, uniform(nEmbd*kvDim, layerScale))
		add(p+"attn_v.weight", s.Type, []uint64{e, uint64(kvDim)}, uniform(nEmbd*kvDim, layerScale))
		add(p+"attn_output.weight", s.Type, []uint64{e, e}, uniform(nEmbd*nEmbd, layerScale))
		add(p+"ffn_norm.weight", gguf.F32, []uint64{e}, ones(nEmbd))
		add(p+"ffn_gate.weight", s.Type, []uint64{e, ff}, uniform(nEmbd*nFF, layerScale))
		add(p+"ffn_up.weight", s.Type, []uint64{e, ff}, uniform(nEmbd*nFF, layerScale))
		add(p+"ffn_down.weight", s.Type, []uint64{ff, e}, uniform(nFF*nEmbd, layerScale))
	}
	add("output_norm.weight", gguf.F32, []uint64{e}, ones(nEmbd))
	add("output.weight", s.Type, []uint64{e, vv}, output)
	return &f, params
}
