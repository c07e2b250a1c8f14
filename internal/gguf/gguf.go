// Package gguf writes GGUF v3 files, the container llama.cpp and Ollama
// load models from: typed metadata key/values, then tensor descriptions,
// then the aligned tensor data.
//
// Granite writes its own tiny test models with it instead of downloading
// one, so it holds only what those need: the scalar, string and array
// value types a llama model's metadata uses, and tensors in F32, F16 and
// Q8_0. Ollama's own writer (fs/ggml.WriteGGUF) was not used: it needs an
// *os.File to seek in, reorders keys and tensors itself, prefixes keys
// with the architecture, and links Ollama's ml package and
// golang.org/x/sync into whatever calls it; this one writes to any
// io.Writer in the order given, so the bytes are the caller's to pin.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Type is a tensor's element encoding, numbered as ggml numbers them.
type Type uint32

// The tensor types the writer encodes.
const (
	F32  Type = 0
	F16  Type = 1
	Q8_0 Type = 8
)

// String names the type as ggml and Ollama print it.
func (t Type) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q8_0:
		return "Q8_0"
	}
	return fmt.Sprintf("Type(%d)", uint32(t))
}

// ParseType reads a type name as String writes it.
func ParseType(s string) (Type, error) {
	for _, t := range []Type{F32, F16, Q8_0} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("tensor type %q: want F32, F16 or Q8_0", s)
}

// blockLen is how many values one encoded block holds, and blockBytes its
// size: Q8_0 stores 32 values as a float16 scale and 32 int8s.
func (t Type) blockLen() int {
	if t == Q8_0 {
		return 32
	}
	return 1
}

func (t Type) blockBytes() int {
	switch t {
	case F16:
		return 2
	case Q8_0:
		return 2 + 32
	}
	return 4
}

// The value type codes GGUF gives each metadata value.
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
)

// DefaultAlignment is the tensor data alignment GGUF readers assume when
// the file sets no general.alignment.
const DefaultAlignment = 32

// File is a GGUF file being assembled: metadata and tensors in the order
// they were added, which is the order they are written in.
type File struct {
	kvs     []keyValue
	tensors []tensor
	err     error
}

type keyValue struct {
	key string
	typ uint32
	val any
}

type tensor struct {
	name  string
	typ   Type
	shape []uint64
	data  []byte
}

func (f *File) set(key string, typ uint32, val any) {
	if i := slices.IndexFunc(f.kvs, func(kv keyValue) bool { return kv.key == key }); i >= 0 {
		f.kvs[i] = keyValue{key, typ, val}
		return
	}
	f.kvs = append(f.kvs, keyValue{key, typ, val})
}

// SetUint32 sets a uint32 value (general.alignment, a llama hyperparameter).
func (f *File) SetUint32(key string, v uint32) { f.set(key, typeUint32, v) }

// SetInt32 sets an int32 value.
func (f *File) SetInt32(key string, v int32) { f.set(key, typeInt32, v) }

// SetFloat32 sets a float32 value.
func (f *File) SetFloat32(key string, v float32) { f.set(key, typeFloat32, v) }

// SetBool sets a bool value.
func (f *File) SetBool(key string, v bool) { f.set(key, typeBool, v) }

// SetString sets a string value.
func (f *File) SetString(key string, v string) { f.set(key, typeString, v) }

// SetStrings sets an array of strings (a tokenizer's tokens and merges).
func (f *File) SetStrings(key string, v []string) { f.set(key, typeString, slices.Clone(v)) }

// SetInt32s sets an array of int32 (a tokenizer's token types).
func (f *File) SetInt32s(key string, v []int32) { f.set(key, typeInt32, slices.Clone(v)) }

// SetFloat32s sets an array of float32 (a tokenizer's scores).
func (f *File) SetFloat32s(key string, v []float32) { f.set(key, typeFloat32, slices.Clone(v)) }

// AddTensor encodes data, in row-major order, as a tensor of the given
// type. Shape is in GGUF's order, the fastest-varying dimension first:
// a matrix of r rows of c values is {c, r}. Q8_0 needs that first
// dimension to be a multiple of 32, ggml's block length. The first error
// is kept and returned by WriteTo, so a model is built without an error
// check per tensor.
func (f *File) AddTensor(name string, typ Type, shape []uint64, data []float32) {
	if f.err != nil {
		return
	}
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	switch {
	case len(shape) == 0:
		f.err = fmt.Errorf("tensor %s: no shape", name)
	case n != uint64(len(data)):
		f.err = fmt.Errorf("tensor %s: shape %v holds %d values, data has %d", name, shape, n, len(data))
	case shape[0]%uint64(typ.blockLen()) != 0:
		f.err = fmt.Errorf("tensor %s: %s needs the first dimension a multiple of %d, shape is %v", name, typ, typ.blockLen(), shape)
	case slices.ContainsFunc(f.tensors, func(t tensor) bool { return t.name == name }):
		f.err = fmt.Errorf("tensor %s added twice", name)
	}
	if f.err != nil {
		return
	}
	enc, err := Encode(typ, data)
	if err != nil {
		f.err = fmt.Errorf("tensor %s: %w", name, err)
		return
	}
	f.tensors = append(f.tensors, tensor{name, typ, slices.Clone(shape), enc})
}

// alignment is general.alignment when set, else the default.
func (f *File) alignment() (uint64, error) {
	for _, kv := range f.kvs {
		if kv.key != "general.alignment" {
			continue
		}
		a, ok := kv.val.(uint32)
		if !ok || a == 0 || a%8 != 0 {
			return 0, fmt.Errorf("general.alignment is %v; GGUF wants a uint32 multiple of 8", kv.val)
		}
		return uint64(a), nil
	}
	return DefaultAlignment, nil
}

// WriteTo writes the file: the header (magic, version 3, tensor and
// key/value counts), the key/values, the tensor descriptions with their
// offsets into the data section, padding to the alignment, and each
// tensor's data padded to the alignment.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	if f.err != nil {
		return 0, f.err
	}
	align, err := f.alignment()
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: bufio.NewWriter(w)}
	cw.bytes([]byte("GGUF"))
	cw.u32(3)
	cw.u64(uint64(len(f.tensors)))
	cw.u64(uint64(len(f.kvs)))
	for _, kv := range f.kvs {
		cw.str(kv.key)
		cw.value(kv.typ, kv.val)
	}
	var offset uint64
	for _, t := range f.tensors {
		cw.str(t.name)
		cw.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			cw.u64(d)
		}
		cw.u32(uint32(t.typ))
		cw.u64(offset)
		offset += padded(uint64(len(t.data)), align)
	}
	cw.pad(align)
	for _, t := range f.tensors {
		cw.bytes(t.data)
		cw.pad(align)
	}
	if cw.err == nil {
		cw.err = cw.w.(*bufio.Writer).Flush()
	}
	return cw.n, cw.err
}

func padded(n, align uint64) uint64 { return (n + align - 1) / align * align }

// countingWriter writes little-endian values, keeping the byte count for
// padding and the first error, so WriteTo reads as the layout it writes.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) bytes(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *countingWriter) u32(v uint32) { c.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (c *countingWriter) u64(v uint64) { c.bytes(binary.LittleEndian.AppendUint64(nil, v)) }

func (c *countingWriter) str(s string) {
	c.u64(uint64(len(s)))
	c.bytes([]byte(s))
}

func (c *countingWriter) pad(align uint64) {
	c.bytes(make([]byte, padded(uint64(c.n), align)-uint64(c.n)))
}

// value writes a type code and a value; a slice is an array of that
// element type.
func (c *countingWriter) value(typ uint32, val any) {
	switch v := val.(type) {
	case []string:
		c.u32(typeArray)
		c.u32(typ)
		c.u64(uint64(len(v)))
		for _, s := range v {
			c.str(s)
		}
		return
	case []int32:
		c.u32(typeArray)
		c.u32(typ)
		c.u64(uint64(len(v)))
		for _, x := range v {
			c.u32(uint32(x))
		}
		return
	case []float32:
		c.u32(typeArray)
		c.u32(typ)
		c.u64(uint64(len(v)))
		for _, x := range v {
			c.u32(math.Float32bits(x))
		}
		return
	}
	c.u32(typ)
	switch v := val.(type) {
	case uint32:
		c.u32(v)
	case int32:
		c.u32(uint32(v))
	case float32:
		c.u32(math.Float32bits(v))
	case bool:
		if v {
			c.bytes([]byte{1})
		} else {
			c.bytes([]byte{0})
		}
	case string:
		c.str(v)
	default:
		c.err = errors.Join(c.err, fmt.Errorf("gguf: value of type %T", val))
	}
}
