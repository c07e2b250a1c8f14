package tinymodel

import (
	"strings"
)

// Token types as llama.cpp reads tokenizer.ggml.token_type.
const (
	tokenNormal  int32 = 1
	tokenControl int32 = 3
)

// The control tokens the template frames a conversation with. None is on
// llama.cpp's list of end-of-generation texts (<|end|>, <|im_end|>, …),
// which would make it stop generation wherever it appeared; eos is the
// one that is, and the only one the model ever emits after a reply.
const (
	eosToken       = "<|endoftext|>"
	bosToken       = "<|startoftext|>"
	systemToken    = "<|system|>"
	toolsToken     = "<|tools|>"
	turnEndToken   = "<|turn_end|>"
	markerTemplate = "<|reply_%d|>"
)

// frameTokens are the control tokens between the byte tokens and the
// markers, in vocabulary order; role tokens are <|role|> for each role
// Ollama passes a template.
var frameTokens = []string{eosToken, bosToken, systemToken, toolsToken, turnEndToken,
	"<|user|>", "<|assistant|>", "<|tool|>"}

// byteToRune is GPT-2's byte-level alphabet: every byte as a printable
// rune, so a byte-level BPE vocabulary holds any text. Printable Latin-1
// bytes stand for themselves; the rest (controls, space, soft hyphen)
// take the runes from U+0100 on, in byte order, so a space is 'Ġ' and a
// newline 'Ċ'.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || ('¡' <= b && b <= '¬') || ('®' <= b && b <= 'ÿ') {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// byteLevel writes text in the byte-level alphabet, as a GPT-2 vocabulary
// stores a normal token: llama.cpp maps each rune back to its byte when it
// turns the token into text.
func byteLevel(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		b.WriteRune(byteToRune[text[i]])
	}
	return b.String()
}
