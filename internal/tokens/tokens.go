// Package tokens counts the tokens of what an interface shows a model,
// offline and deterministically, with OpenAI's cl100k_base byte-pair
// encoding (tiktoken-go/tokenizer's codec, which carries the vocabulary in
// the binary; only cl100k_base is linked). No local model's own tokenizer
// is at hand before a run, and the models granite tests use several
// (Llama 3, Qwen, Gemma, Phi), so one fixed, widely used encoding is the
// yardstick that compares interfaces; it is not any local model's exact
// count, which a trial records beside it (its prompt tokens).
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Encoding names the encoding Count uses, for records and docs.
const Encoding = "cl100k_base"

var (
	once  sync.Once
	coder *codec.Codec
)

// Count is the number of cl100k_base tokens of s.
func Count(s string) int {
	once.Do(func() { coder = codec.NewCl100kBase() })
	n, err := coder.Count(s)
	if err != nil {
		// The codec fails only on invalid UTF-8 in strict mode, which is
		// not the default; count bytes rather than lose the figure.
		return len(s)
	}
	return n
}
