package tinymodel

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/gguf"
	"github.com/ollama/ollama/fs/ggml"
)

// reference is the model as llama.cpp holds it once loaded: the
// vocabulary and the weights decoded from the file's own bytes, so that
// F16 and Q8_0 rounding is in what the forward pass computes with.
type reference struct {
	tokens  []string
	types   []int32
	nEmbd   int
	nFF     int
	embd    []float32 // nVocab rows of nEmbd
	output  []float32
	outNorm []float32
	layers  []refLayer
}

type refLayer struct {
	attnNorm, q, k, v, o, ffnNorm, gate, up, down []float32
}

func load(t *testing.T, file []byte) *reference {
	t.Helper()
	g, err := ggml.Decode(bytes.NewReader(file), -1)
	if err != nil {
		t.Fatalf("ollama's decoder refuses the model: %v", err)
	}
	kv := g.KV()
	ts := g.Tensors()
	tensor := func(name string) []float32 {
		for _, tt := range ts.Items() {
			if tt.Name == name {
				start := ts.Offset + tt.Offset
				vals, err := gguf.Decode(gguf.Type(tt.Kind), file[start:start+tt.Size()])
				if err != nil {
					t.Fatal(err)
				}
				return vals
			}
		}
		t.Fatalf("no tensor %s", name)
		return nil
	}
	r := &reference{
		tokens:  kv.Strings("tokenizer.ggml.tokens"),
		types:   kv.Ints("tokenizer.ggml.token_type"),
		nEmbd:   int(kv.EmbeddingLength()),
		nFF:     int(kv.Uint("feed_forward_length")),
		embd:    tensor("token_embd.weight"),
		output:  tensor("output.weight"),
		outNorm: tensor("output_norm.weight"),
	}
	if kv.Uint("attention.head_count") != nHead || kv.Uint("attention.head_count_kv") != nHeadKV || kv.Float("rope.freq_base") != ropeBase {
		t.Fatalf("hyperparameters read back as %v", kv)
	}
	for l := range int(kv.BlockCount()) {
		p := "blk." + string(rune('0'+l)) + "."
		r.layers = append(r.layers, refLayer{
			attnNorm: tensor(p + "attn_norm.weight"), q: tensor(p + "attn_q.weight"), k: tensor(p + "attn_k.weight"),
			v: tensor(p + "attn_v.weight"), o: tensor(p + "attn_output.weight"), ffnNorm: tensor(p + "ffn_norm.weight"),
			gate: tensor(p + "ffn_gate.weight"), up: tensor(p + "ffn_up.weight"), down: tensor(p + "ffn_down.weight"),
		})
	}
	return r
}

// tokenize splits a prompt as llama.cpp does for this vocabulary with
// special-token parsing on: control tokens where their text occurs, and
// every other byte its byte token (there are no merges to join them).
func (r *reference) tokenize(prompt string) []int {
	var out []int
	for len(prompt) > 0 {
		best := -1
		for id, typ := range r.types {
			if typ == tokenControl && strings.HasPrefix(prompt, r.tokens[id]) && (best < 0 || len(r.tokens[id]) > len(r.tokens[best])) {
				best = id
			}
		}
		if best >= 0 {
			out = append(out, best)
			prompt = prompt[len(r.tokens[best]):]
			continue
		}
		out = append(out, slices.Index(r.tokens, string(byteToRune[prompt[0]])))
		prompt = prompt[1:]
	}
	return out
}

// piece is a token's text as llama.cpp renders it: control tokens as
// written, normal tokens mapped back from the byte-level alphabet.
func (r *reference) piece(id int) string {
	if r.types[id] == tokenControl {
		return r.tokens[id]
	}
	var b []byte
	for _, c := range r.tokens[id] {
		b = append(b, byte(slices.Index(byteToRune[:], c)))
	}
	return string(b)
}

// matVec is y = W·x for a GGUF matrix of shape {len(x), rows}.
func matVec(w, x []float32) []float32 {
	rows := len(w) / len(x)
	y := make([]float32, rows)
	for i := range rows {
		var s float32
		for j, xv := range x {
			s += w[i*len(x)+j] * xv
		}
		y[i] = s
	}
	return y
}

func rmsNorm(x, w []float32) []float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v * v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+rmsEps))
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = v * scale * w[i]
	}
	return out
}

// rope rotates each head's adjacent pairs by pos·base^(-2i/d), llama.cpp's
// normal (non-NeoX) mode, the one it runs llama models in.
func rope(x []float32, pos, headDim int) {
	for h := 0; h < len(x); h += headDim {
		for i := 0; i < headDim; i += 2 {
			theta := float64(pos) * math.Pow(ropeBase, -float64(i)/float64(headDim))
			c, s := float32(math.Cos(theta)), float32(math.Sin(theta))
			a, b := x[h+i], x[h+i+1]
			x[h+i], x[h+i+1] = a*c-b*s, a*s+b*c
		}
	}
}

// session is a llama forward pass one token at a time, keeping each
// layer's keys and values as llama.cpp's cache does.
type session struct {
	r            *reference
	keys, values [][][]float32
}

// step feeds the next token and returns the logits at its position and
// how far the layers moved its residual stream from its embedding (the
// largest coordinate change).
func (s *session) step(tok int) (logits []float32, drift float32) {
	r := s.r
	n := r.nEmbd
	headDim := n / nHead
	if s.keys == nil {
		s.keys = make([][][]float32, len(r.layers))
		s.values = make([][][]float32, len(r.layers))
	}
	pos := len(s.keys[0])
	x := slices.Clone(r.embd[tok*n : (tok+1)*n])
	for l, ly := range r.layers {
		h := rmsNorm(x, ly.attnNorm)
		q, k, v := matVec(ly.q, h), matVec(ly.k, h), matVec(ly.v, h)
		rope(q, pos, headDim)
		rope(k, pos, headDim)
		s.keys[l] = append(s.keys[l], k)
		s.values[l] = append(s.values[l], v)
		att := make([]float32, n)
		for hd := range nHead {
			g := hd / (nHead / nHeadKV) // the key/value head this query head shares
			qh := q[hd*headDim : (hd+1)*headDim]
			scores := make([]float64, pos+1)
			top := math.Inf(-1)
			for p := range pos + 1 {
				var dot float64
				for i, qv := range qh {
					dot += float64(qv * s.keys[l][p][g*headDim+i])
				}
				scores[p] = dot / math.Sqrt(float64(headDim))
				top = max(top, scores[p])
			}
			var sum float64
			for p := range scores {
				scores[p] = math.Exp(scores[p] - top)
				sum += scores[p]
			}
			for p := range scores {
				for i := range headDim {
					att[hd*headDim+i] += float32(scores[p]/sum) * s.values[l][p][g*headDim+i]
				}
			}
		}
		for i, v := range matVec(ly.o, att) {
			x[i] += v
		}
		h = rmsNorm(x, ly.ffnNorm)
		gate, up := matVec(ly.gate, h), matVec(ly.up, h)
		for i := range gate {
			gate[i] = gate[i] / (1 + float32(math.Exp(float64(-gate[i])))) * up[i] // SwiGLU
		}
		for i, v := range matVec(ly.down, gate) {
			x[i] += v
		}
	}
	for i := range n {
		drift = max(drift, float32(math.Abs(float64(x[i]-r.embd[tok*n+i]))))
	}
	return matVec(r.output, rmsNorm(x, r.outNorm)), drift
}

// decoded is what greedy decoding produced from a prompt.
type decoded struct {
	text    string
	tokens  []int
	eos     bool    // ended with end-of-text (else: ran out of steps)
	margin  float32 // the smallest lead of the chosen logit over the next
	drift   float32 // the largest residual drift the layers caused
	pieces  []string
	prompts int
}

// generate decodes greedily, as Ollama does at temperature 0, for at
// most steps tokens.
func (r *reference) generate(prompt string, steps int) decoded {
	toks := r.tokenize(prompt)
	d := decoded{margin: float32(math.Inf(1)), prompts: len(toks)}
	eos := slices.Index(r.tokens, eosToken)
	sess := &session{r: r}
	var logits []float32
	for _, tok := range toks {
		logits, d.drift = sess.step(tok)
	}
	for range steps {
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		second := float32(math.Inf(-1))
		for i, l := range logits {
			if i != best {
				second = max(second, l)
			}
		}
		d.margin = min(d.margin, logits[best]-second)
		if best == eos {
			d.eos = true
			return d
		}
		d.tokens = append(d.tokens, best)
		d.pieces = append(d.pieces, r.piece(best))
		d.text += r.piece(best)
		var drift float32
		logits, drift = sess.step(best)
		d.drift = max(d.drift, drift)
	}
	return d
}
