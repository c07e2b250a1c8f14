package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
)

// Encode packs values as a tensor of type t stores them, little-endian:
// F32 as IEEE singles, F16 as IEEE halves (rounded to nearest even), Q8_0
// as ggml's blocks of 32 values, each a float16 scale d = max|x|/127
// followed by 32 int8s q = round(x/d), so that x ≈ d·q. Q8_0 needs a
// multiple of 32 values.
func Encode(t Type, values []float32) ([]byte, error) {
	switch t {
	case F32:
		out := make([]byte, 0, 4*len(values))
		for _, v := range values {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		return out, nil
	case F16:
		out := make([]byte, 0, 2*len(values))
		for _, v := range values {
			out = binary.LittleEndian.AppendUint16(out, float16.Fromfloat32(v).Bits())
		}
		return out, nil
	case Q8_0:
		if len(values)%32 != 0 {
			return nil, fmt.Errorf("Q8_0 packs blocks of 32 values; got %d values", len(values))
		}
		out := make([]byte, 0, len(values)/32*34)
		for b := 0; b < len(values); b += 32 {
			out = appendQ8Block(out, values[b:b+32])
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor type %s: the writer encodes F32, F16 and Q8_0", t)
}

// appendQ8Block quantizes one block as ggml's quantize_row_q8_0_ref does:
// the scale is computed in float32 and rounded to float16 only when
// stored, and the int8s come from the float32 scale.
func appendQ8Block(out []byte, block []float32) []byte {
	var amax float32
	for _, v := range block {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	out = binary.LittleEndian.AppendUint16(out, float16.Fromfloat32(d).Bits())
	for _, v := range block {
		out = append(out, byte(int8(math.Round(float64(v*id)))))
	}
	return out
}

// Decode unpacks a tensor's bytes back to float32, the inverse of Encode
// up to its rounding: what a model's weights are once llama.cpp has read
// them, which is what a test of the model's decoding must compute with.
func Decode(t Type, data []byte) ([]float32, error) {
	switch t {
	case F32:
		if len(data)%4 != 0 {
			return nil, fmt.Errorf("F32 data of %d bytes is not whole values", len(data))
		}
		out := make([]float32, len(data)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return out, nil
	case F16:
		if len(data)%2 != 0 {
			return nil, fmt.Errorf("F16 data of %d bytes is not whole values", len(data))
		}
		out := make([]float32, len(data)/2)
		for i := range out {
			out[i] = float16.Frombits(binary.LittleEndian.Uint16(data[2*i:])).Float32()
		}
		return out, nil
	case Q8_0:
		if len(data)%34 != 0 {
			return nil, fmt.Errorf("Q8_0 data of %d bytes is not whole 34-byte blocks", len(data))
		}
		out := make([]float32, 0, len(data)/34*32)
		for b := 0; b < len(data); b += 34 {
			d := float16.Frombits(binary.LittleEndian.Uint16(data[b:])).Float32()
			for _, q := range data[b+2 : b+34] {
				out = append(out, d*float32(int8(q)))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor type %s: the writer decodes F32, F16 and Q8_0", t)
}
