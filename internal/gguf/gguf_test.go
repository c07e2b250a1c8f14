package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/fs/ggml"
)

// TestOllamaDecodesWhatIsWritten: Ollama's own GGUF reader, the one its
// server checks a model with, reads back every value type and tensor
// type the writer writes, at the offsets and alignment it chose.
func TestOllamaDecodesWhatIsWritten(t *testing.T) {
	for _, align := range []uint32{0, 64} {
		var f File
		f.SetString("general.architecture", "llama")
		if align != 0 {
			f.SetUint32("general.alignment", align)
		}
		f.SetUint32("llama.block_count", 2)
		f.SetInt32("llama.test_int", -7)
		f.SetFloat32("llama.test_eps", 1e-5)
		f.SetBool("llama.test_flag", true)
		f.SetStrings("tokenizer.ggml.tokens", []string{"a", "ĠB", "<|x|>"})
		f.SetInt32s("tokenizer.ggml.token_type", []int32{1, 1, 3})
		f.SetFloat32s("tokenizer.ggml.scores", []float32{0.5, -1})
		f.SetUint32("llama.block_count", 3) // a second set replaces the first
		rng := rand.New(rand.NewPCG(1, 2))
		values := make([]float32, 32*3)
		for i := range values {
			values[i] = rng.Float32()*2 - 1
		}
		f.AddTensor("a.f32", F32, []uint64{5}, values[:5])
		f.AddTensor("b.f16", F16, []uint64{32, 3}, values)
		f.AddTensor("c.q8", Q8_0, []uint64{32, 3}, values)
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(buf.Len()) {
			t.Errorf("WriteTo says %d bytes, wrote %d", n, buf.Len())
		}
		g, err := ggml.Decode(bytes.NewReader(buf.Bytes()), -1)
		if err != nil {
			t.Fatalf("alignment %d: ollama's decoder: %v", align, err)
		}
		kv := g.KV()
		if kv.Architecture() != "llama" || kv.BlockCount() != 3 || kv["llama.test_eps"] != float32(1e-5) || kv["llama.test_flag"] != true {
			t.Errorf("scalars read back as %v", kv)
		}
		if v, ok := kv["llama.test_int"].(int32); !ok || v != -7 {
			t.Errorf("llama.test_int read back as %#v", kv["llama.test_int"])
		}
		if d := cmp.Diff([]string{"a", "ĠB", "<|x|>"}, kv.Strings("tokenizer.ggml.tokens")); d != "" {
			t.Errorf("tokens (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]int32{1, 1, 3}, kv.Ints("tokenizer.ggml.token_type")); d != "" {
			t.Errorf("token types (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]float32{0.5, -1}, kv.Floats("tokenizer.ggml.scores")); d != "" {
			t.Errorf("scores (-want +got):\n%s", d)
		}
		want := map[string]struct {
			typ   Type
			shape []uint64
			tol   float64
			vals  []float32
		}{
			"a.f32": {F32, []uint64{5}, 0, values[:5]},
			"b.f16": {F16, []uint64{32, 3}, 1e-3, values},
			"c.q8":  {Q8_0, []uint64{32, 3}, 1.0 / 127, values},
		}
		ts := g.Tensors()
		wantAlign := uint64(max(align, DefaultAlignment))
		if ts.Offset%wantAlign != 0 {
			t.Errorf("data section at %d, not a multiple of %d", ts.Offset, wantAlign)
		}
		if len(ts.Items()) != len(want) {
			t.Fatalf("%d tensors read back, want %d", len(ts.Items()), len(want))
		}
		for _, tt := range ts.Items() {
			w, ok := want[tt.Name]
			if !ok {
				t.Errorf("unexpected tensor %s", tt.Name)
				continue
			}
			if Type(tt.Kind).String() != tt.Type() || tt.Type() != w.typ.String() {
				t.Errorf("%s: type %s (ollama) / %s, want %s", tt.Name, tt.Type(), Type(tt.Kind), w.typ)
			}
			if d := cmp.Diff(w.shape, tt.Shape); d != "" {
				t.Errorf("%s shape (-want +got):\n%s", tt.Name, d)
			}
			if tt.Offset%wantAlign != 0 {
				t.Errorf("%s at offset %d, not aligned to %d", tt.Name, tt.Offset, wantAlign)
			}
			start := ts.Offset + tt.Offset
			data := buf.Bytes()[start : start+tt.Size()]
			got, err := Decode(w.typ, data)
			if err != nil {
				t.Fatal(err)
			}
			for i := range w.vals {
				if math.Abs(float64(got[i]-w.vals[i])) > w.tol {
					t.Errorf("%s[%d] = %v, want %v within %v", tt.Name, i, got[i], w.vals[i], w.tol)
					break
				}
			}
		}
	}
}

// TestQ8BlockLayout pins ggml's block: the float16 scale max|x|/127 first,
// then round(x/d) as int8, the largest magnitude landing on ±127.
func TestQ8BlockLayout(t *testing.T) {
	block := make([]float32, 32)
	block[0], block[1], block[2], block[31] = 2.54, -1.27, 0.01, -2.54
	b, err := Encode(Q8_0, block)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 34 {
		t.Fatalf("a block is %d bytes, want 34", len(b))
	}
	if got := binary.LittleEndian.Uint16(b); got != 0x251f { // float16(0.02): exponent -6, mantissa 0.28
		t.Errorf("scale bits %#04x, want 0x251f (0.02)", got)
	}
	if q := []int8{int8(b[2]), int8(b[3]), int8(b[4]), int8(b[33])}; q[0] != 127 || q[1] != -64 || q[2] != 1 || q[3] != -127 {
		t.Errorf("quants %v, want [127 -64 1 -127]", q)
	}
	zero, _ := Encode(Q8_0, make([]float32, 32))
	if !bytes.Equal(zero, make([]byte, 34)) {
		t.Errorf("a zero block encodes as %v, want all zero bytes", zero)
	}
}

// TestErrorsNameTheTensor: a shape that does not fit the data or the
// type is refused with the tensor's name, and nothing is written.
func TestErrorsNameTheTensor(t *testing.T) {
	for name, add := range map[string]func(*File){
		"holds 6 values, data has 5": func(f *File) { f.AddTensor("w", F32, []uint64{2, 3}, make([]float32, 5)) },
		"multiple of 32":             func(f *File) { f.AddTensor("w", Q8_0, []uint64{16, 2}, make([]float32, 32)) },
		"added twice": func(f *File) {
			f.AddTensor("w", F32, []uint64{1}, []float32{1})
			f.AddTensor("w", F32, []uint64{1}, []float32{1})
		},
		"multiple of 8": func(f *File) { f.SetUint32("general.alignment", 12) },
	} {
		var f File
		add(&f)
		var buf bytes.Buffer
		_, err := f.WriteTo(&buf)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(name)) {
			t.Errorf("error %v, want one saying %q", err, name)
		}
		if buf.Len() != 0 {
			t.Errorf("%q: wrote %d bytes despite the error", name, buf.Len())
		}
	}
}
