package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The GGUF format, version 3, as ggml/include/gguf.h in llama.cpp describes it: the magic
// "GGUF", the version (uint32), the tensor count and the key-value count (int64 each), the
// key-value pairs, the tensor infos, padding to the alignment, then the tensor data, each
// tensor starting at a multiple of the alignment from the start of the data. All numbers are
// little-endian; a string is its byte length (uint64) and its bytes, without a terminator.

const (
	ggufMagic     = "GGUF"
	ggufVersion   = 3
	ggufAlignment = 32 // GGUF_DEFAULT_ALIGNMENT, also written as general.alignment
)

// The value types of gguf.h's enum gguf_type.
type valueType uint32

const (
	typeUint8   valueType = 0
	typeInt8    valueType = 1
	typeUint16  valueType = 2
	typeInt16   valueType = 3
	typeUint32  valueType = 4
	typeInt32   valueType = 5
	typeFloat32 valueType = 6
	typeBool    valueType = 7
	typeString  valueType = 8
	typeArray   valueType = 9
	typeUint64  valueType = 10
	typeInt64   valueType = 11
	typeFloat64 valueType = 12
)

// The tensor types of ggml.h's enum ggml_type that this program writes.
type tensorType uint32

const (
	tensorF32 tensorType = 0 // GGML_TYPE_F32
	tensorF16 tensorType = 1 // GGML_TYPE_F16
)

// size is the bytes of one element (both types have blocks of one element).
func (t tensorType) size() int64 {
	if t == tensorF16 {
		return 2
	}
	return 4
}

// kv is one metadata pair. val is uint32, int32, float32, bool, string, []string or []int32.
type kv struct {
	key string
	val any
}

// tensor is one tensor to write: its name, its dims in ggml's order (ne[0], the length of a
// row, first), its type, and what fills it.
type tensor struct {
	name string
	dims []int64
	typ  tensorType
	fill func(i int64) float32 // the value of element i (row-major: i = row*dims[0] + col)
}

func (t tensor) elements() int64 {
	n := int64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (t tensor) bytes() int64 { return t.elements() * t.typ.size() }

func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// ggufWriter writes little-endian values and counts the bytes written.
type ggufWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (w *ggufWriter) write(p []byte) {
	if w.err != nil {
		return
	}
	var k int
	k, w.err = w.w.Write(p)
	w.n += int64(k)
}

func (w *ggufWriter) u8(v uint8) { w.buf[0] = v; w.write(w.buf[:1]) }
func (w *ggufWriter) u16(v uint16) {
	binary.LittleEndian.PutUint16(w.buf[:2], v)
	w.write(w.buf[:2])
}
func (w *ggufWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.write(w.buf[:4])
}
func (w *ggufWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.write(w.buf[:8])
}
func (w *ggufWriter) str(s string) {
	w.u64(uint64(len(s)))
	if w.err == nil {
		var k int
		k, w.err = w.w.WriteString(s)
		w.n += int64(k)
	}
}

func (w *ggufWriter) value(v any) error {
	switch v := v.(type) {
	case uint32:
		w.u32(uint32(typeUint32))
		w.u32(v)
	case int32:
		w.u32(uint32(typeInt32))
		w.u32(uint32(v))
	case float32:
		w.u32(uint32(typeFloat32))
		w.u32(math.Float32bits(v))
	case bool:
		w.u32(uint32(typeBool))
		if v {
			w.u8(1)
		} else {
			w.u8(0)
		}
	case string:
		w.u32(uint32(typeString))
		w.str(v)
	case []string:
		w.u32(uint32(typeArray))
		w.u32(uint32(typeString))
		w.u64(uint64(len(v)))
		for _, s := range v {
			w.str(s)
		}
	case []int32:
		w.u32(uint32(typeArray))
		w.u32(uint32(typeInt32))
		w.u64(uint64(len(v)))
		for _, x := range v {
			w.u32(uint32(x))
		}
	default:
		return fmt.Errorf("no GGUF type for a %T", v)
	}
	return nil
}

func (w *ggufWriter) padTo(align int64) {
	for w.n%align != 0 && w.err == nil {
		w.u8(0)
	}
}

// writeGGUF writes a GGUF v3 file of kvs and tensors to out, the tensors in the order given.
// It returns the bytes written.
func writeGGUF(out io.Writer, kvs []kv, tensors []tensor) (int64, error) {
	w := &ggufWriter{w: bufio.NewWriterSize(out, 1<<20)}
	w.write([]byte(ggufMagic))
	w.u32(ggufVersion)
	w.u64(uint64(len(tensors)))
	w.u64(uint64(len(kvs)))
	seen := make(map[string]bool, len(kvs))
	for _, p := range kvs {
		if seen[p.key] {
			return w.n, fmt.Errorf("metadata key %s twice", p.key)
		}
		seen[p.key] = true
		w.str(p.key)
		if err := w.value(p.val); err != nil {
			return w.n, fmt.Errorf("%s: %w", p.key, err)
		}
	}
	var offset int64 // of each tensor, from the start of the data
	for _, t := range tensors {
		if len(t.dims) == 0 || len(t.dims) > 4 {
			return w.n, fmt.Errorf("tensor %s: %d dims (ggml has 1 to 4)", t.name, len(t.dims))
		}
		w.str(t.name)
		w.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			if d < 1 {
				return w.n, fmt.Errorf("tensor %s: dim %d", t.name, d)
			}
			w.u64(uint64(d))
		}
		w.u32(uint32(t.typ))
		w.u64(uint64(offset))
		offset += pad(t.bytes(), ggufAlignment)
	}
	w.padTo(ggufAlignment)
	start := w.n
	row := make([]byte, 0, 1<<16)
	for _, t := range tensors {
		if got := w.n - start; got%ggufAlignment != 0 {
			return w.n, errors.New("internal error: tensor data not aligned")
		}
		n := t.elements()
		for i := int64(0); i < n; i++ {
			v := t.fill(i)
			if t.typ == tensorF16 {
				row = binary.LittleEndian.AppendUint16(row, f32ToF16(v))
			} else {
				row = binary.LittleEndian.AppendUint32(row, math.Float32bits(v))
			}
			if len(row) >= cap(row)-4 {
				w.write(row)
				row = row[:0]
			}
		}
		w.write(row)
		row = row[:0]
		w.padTo(ggufAlignment)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.n, w.err
}

// f32ToF16 converts f to IEEE 754 binary16, rounding to nearest, ties to even; values too
// large become infinities, NaNs stay NaNs (quiet), values too small become (signed) zeros
// or subnormals.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // the half's biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e >= 1 {
		h := uint32(e)<<10 | mant>>13
		rem := mant & 0x1fff
		if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
			h++ // a carry out of the mantissa raises the exponent, up to infinity: still right
		}
		return sign | uint16(h)
	}
	// A subnormal half (or zero): the value in units of 2^-24 is mant24 >> (126 - exp).
	if exp == 0 {
		return sign // float32 zeros and subnormals are far below half's smallest subnormal
	}
	mant24 := mant | 0x800000
	s := uint32(126 - exp) // at least 14
	if s > 24 {
		return sign
	}
	h := mant24 >> s
	rem := mant24 & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || rem == half && h&1 == 1 {
		h++ // may become 0x400, the smallest normal: still right
	}
	return sign | uint16(h)
}

// f16ToF32 converts IEEE 754 binary16 to float32, exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	default:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
}
