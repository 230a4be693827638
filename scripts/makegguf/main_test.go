package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadcurve/loadcurve/scripts/makegguf/tokfile"
)

// tiny is a model small enough to write in a test: the vocabulary makes most of it
// (151,669 × 8 F16 values, 2.4 MB).
var tiny = config{layers: 2, dim: 8, heads: 2, kvHeads: 1, ffn: 24, ctx: 256, seed: 7, typ: tensorF16, ropeBase: 1e6, rmsEps: 1e-6}

var (
	qwenOnce  sync.Once
	qwenVocab *vocab
	qwenErr   error
)

// qwen3 is the vocabulary of the repository's Qwen3 fixture, read once.
func qwen3(t *testing.T) *vocab {
	t.Helper()
	qwenOnce.Do(func() {
		var data []byte
		if data, qwenErr = tokfile.Read("../../measure/tokens/testdata/models/qwen3.json.xz"); qwenErr == nil {
			qwenVocab, qwenErr = parseVocab(data)
		}
	})
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenVocab
}

func model(t *testing.T, c config) []byte {
	t.Helper()
	var b bytes.Buffer
	n, err := writeModel(&b, c, qwen3(t))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(b.Len()) {
		t.Fatalf("writeModel counted %d bytes, wrote %d", n, b.Len())
	}
	return b.Bytes()
}

// ---- a GGUF reader, written from gguf.h's description, for the tests only ----

type readTensor struct {
	name   string
	dims   []int64
	typ    tensorType
	offset uint64
}

type readFile struct {
	version   uint32
	kvs       map[string]any
	keys      []string
	tensors   []readTensor
	dataStart int64
	size      int64
}

type reader struct {
	b   []byte
	off int64
	err error
}

func (r *reader) take(n int64) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > int64(len(r.b)) {
		r.err = fmt.Errorf("read %d bytes at %d: past the end (%d)", n, r.off, len(r.b))
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}
func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}
func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}
func (r *reader) str() string { return string(r.take(int64(r.u64()))) }

func (r *reader) value(t valueType) any {
	switch t {
	case typeUint8:
		return r.u8()
	case typeInt8:
		return int8(r.u8())
	case typeUint16:
		return binary.LittleEndian.Uint16(r.take(2))
	case typeInt16:
		return int16(binary.LittleEndian.Uint16(r.take(2)))
	case typeUint32:
		return r.u32()
	case typeInt32:
		return int32(r.u32())
	case typeFloat32:
		return math.Float32frombits(r.u32())
	case typeBool:
		switch b := r.u8(); b {
		case 0, 1:
			return b == 1
		default:
			r.err = fmt.Errorf("bool %d", b)
		}
	case typeString:
		return r.str()
	case typeUint64:
		return r.u64()
	case typeInt64:
		return int64(r.u64())
	case typeFloat64:
		return math.Float64frombits(r.u64())
	case typeArray:
		et, n := valueType(r.u32()), r.u64()
		switch et {
		case typeString:
			out := make([]string, 0, n)
			for i := uint64(0); i < n && r.err == nil; i++ {
				out = append(out, r.str())
			}
			return out
		case typeInt32:
			out := make([]int32, 0, n)
			for i := uint64(0); i < n && r.err == nil; i++ {
				out = append(out, int32(r.u32()))
			}
			return out
		default:
			r.err = fmt.Errorf("array of type %d: not read here", et)
		}
	default:
		r.err = fmt.Errorf("value type %d", t)
	}
	return nil
}

func parseGGUF(b []byte) (*readFile, error) {
	r := &reader{b: b}
	if magic := string(r.take(4)); magic != ggufMagic {
		return nil, fmt.Errorf("magic %q", magic)
	}
	f := &readFile{version: r.u32(), kvs: map[string]any{}}
	nt, nkv := r.u64(), r.u64()
	for i := uint64(0); i < nkv && r.err == nil; i++ {
		k := r.str()
		if _, dup := f.kvs[k]; dup {
			return nil, fmt.Errorf("key %s twice", k)
		}
		f.kvs[k] = r.value(valueType(r.u32()))
		f.keys = append(f.keys, k)
	}
	for i := uint64(0); i < nt && r.err == nil; i++ {
		t := readTensor{name: r.str()}
		nd := r.u32()
		for range nd {
			t.dims = append(t.dims, int64(r.u64()))
		}
		t.typ = tensorType(r.u32())
		t.offset = r.u64()
		f.tensors = append(f.tensors, t)
	}
	if r.err != nil {
		return nil, r.err
	}
	align := int64(ggufAlignment)
	if a, ok := f.kvs["general.alignment"].(uint32); ok {
		align = int64(a)
	}
	f.dataStart = pad(r.off, align)
	for _, p := range b[r.off:f.dataStart] {
		if p != 0 {
			return nil, fmt.Errorf("non-zero padding before the data")
		}
	}
	f.size = int64(len(b)) - f.dataStart
	return f, nil
}

func (t readTensor) bytes() int64 {
	return tensor{dims: t.dims, typ: t.typ}.bytes()
}

// ---- tests ----

func TestDeterministic(t *testing.T) {
	a, b := model(t, tiny), model(t, tiny)
	if !bytes.Equal(a, b) {
		t.Fatal("one seed wrote two different files")
	}
	other := tiny
	other.seed++
	c := model(t, other)
	if len(c) != len(a) {
		t.Fatalf("another seed changed the size: %d, %d", len(a), len(c))
	}
	if bytes.Equal(a, c) {
		t.Fatal("another seed wrote the same file")
	}
}

func TestWriteFileSameBytesTwice(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a", "m.gguf"), filepath.Join(dir, "b.gguf")
	n1, s1, err := writeFile(p1, tiny, qwen3(t))
	if err != nil {
		t.Fatal(err)
	}
	n2, s2, err := writeFile(p2, tiny, qwen3(t))
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if n1 != n2 || s1 != s2 || !bytes.Equal(b1, b2) || int64(len(b1)) != n1 {
		t.Fatalf("two writes differ: %d %s, %d %s", n1, s1, n2, s2)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "a", ".makegguf-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestLayout(t *testing.T) {
	v := qwen3(t)
	b := model(t, tiny)
	f, err := parseGGUF(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.version != 3 {
		t.Errorf("version %d", f.version)
	}
	if f.dataStart%ggufAlignment != 0 {
		t.Errorf("data starts at %d, not a multiple of %d", f.dataStart, ggufAlignment)
	}

	// The tensors: the names and dims llama.cpp's llama architecture asks for, packed in
	// order, each at an aligned offset, and the file ends with the last one's padding.
	kvd := int64(tiny.dim / tiny.heads * tiny.kvHeads)
	d, ff, nv := int64(tiny.dim), int64(tiny.ffn), int64(len(v.tokens))
	want := map[string][]int64{"token_embd.weight": {d, nv}, "output_norm.weight": {d}}
	for i := range tiny.layers {
		p := fmt.Sprintf("blk.%d.", i)
		for name, dims := range map[string][]int64{
			"attn_norm": {d}, "attn_q": {d, d}, "attn_k": {d, kvd}, "attn_v": {d, kvd}, "attn_output": {d, d},
			"ffn_norm": {d}, "ffn_gate": {d, ff}, "ffn_up": {d, ff}, "ffn_down": {ff, d},
		} {
			want[p+name+".weight"] = dims
		}
	}
	if len(f.tensors) != len(want) {
		t.Errorf("%d tensors, want %d", len(f.tensors), len(want))
	}
	var next uint64
	var params int64
	for _, ts := range f.tensors {
		dims, ok := want[ts.name]
		if !ok {
			t.Errorf("unexpected tensor %s", ts.name)
			continue
		}
		delete(want, ts.name)
		if fmt.Sprint(ts.dims) != fmt.Sprint(dims) {
			t.Errorf("%s: dims %v, want %v", ts.name, ts.dims, dims)
		}
		wantType := tensorF16
		if len(dims) == 1 {
			wantType = tensorF32
		}
		if ts.typ != wantType {
			t.Errorf("%s: type %d, want %d", ts.name, ts.typ, wantType)
		}
		if ts.offset%ggufAlignment != 0 || ts.offset != next {
			t.Errorf("%s: offset %d, want %d (aligned to %d)", ts.name, ts.offset, next, ggufAlignment)
		}
		next = ts.offset + uint64(pad(ts.bytes(), ggufAlignment))
		params += tensor{dims: ts.dims}.elements()
	}
	for name := range want {
		t.Errorf("tensor %s missing", name)
	}
	if int64(next) != f.size {
		t.Errorf("the data is %d bytes, the tensors take %d", f.size, next)
	}
	if params != tiny.parameters(len(v.tokens)) {
		t.Errorf("%d parameters, parameters() says %d", params, tiny.parameters(len(v.tokens)))
	}

	// The values: norms exactly 1, matrices within the uniform's range, not all alike, with
	// about the standard deviation asked for, and no padding bytes set.
	data := b[f.dataStart:]
	for _, ts := range f.tensors {
		raw := data[ts.offset : ts.offset+uint64(ts.bytes())]
		for _, p := range data[ts.offset+uint64(ts.bytes()) : ts.offset+uint64(pad(ts.bytes(), ggufAlignment))] {
			if p != 0 {
				t.Fatalf("%s: non-zero padding", ts.name)
			}
		}
		if ts.typ == tensorF32 {
			for i := 0; i < len(raw); i += 4 {
				if v := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])); v != 1 {
					t.Fatalf("%s[%d] = %g, want 1", ts.name, i/4, v)
				}
			}
			continue
		}
		var sum, sq float64
		n := len(raw) / 2
		for i := 0; i < len(raw); i += 2 {
			x := float64(f16ToF32(binary.LittleEndian.Uint16(raw[i:])))
			if math.Abs(x) > weightScale*1.001 {
				t.Fatalf("%s[%d] = %g, outside ±%g", ts.name, i/2, x, weightScale)
			}
			sum += x
			sq += x * x
		}
		mean, sd := sum/float64(n), math.Sqrt(sq/float64(n)-(sum/float64(n))*(sum/float64(n)))
		if n >= 1000 && (math.Abs(mean) > 0.002 || math.Abs(sd-0.02) > 0.002) {
			t.Errorf("%s: mean %g, sd %g; want about 0 and 0.02", ts.name, mean, sd)
		}
	}

	// The metadata: the llama keys with the shape's values, the tokenizer as llama.cpp's gpt2
	// tokenizer reads it, and each value in the type llama.cpp's loader asks for.
	wantKV := map[string]any{
		"general.architecture":                   "llama",
		"general.alignment":                      uint32(32),
		"general.file_type":                      uint32(1),
		"llama.vocab_size":                       uint32(nv),
		"llama.context_length":                   uint32(256),
		"llama.embedding_length":                 uint32(8),
		"llama.block_count":                      uint32(2),
		"llama.feed_forward_length":              uint32(24),
		"llama.attention.head_count":             uint32(2),
		"llama.attention.head_count_kv":          uint32(1),
		"llama.rope.dimension_count":             uint32(4),
		"llama.rope.freq_base":                   float32(1e6),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-6),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "qwen2",
		"tokenizer.ggml.bos_token_id":            uint32(151643),
		"tokenizer.ggml.eos_token_id":            uint32(151645),
		"tokenizer.ggml.padding_token_id":        uint32(151643),
		"tokenizer.ggml.add_bos_token":           false,
	}
	for k, w := range wantKV {
		if got, ok := f.kvs[k]; !ok || fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", w, w) {
			t.Errorf("%s = %T %v, want %T %v", k, got, got, w, w)
		}
	}
	if f.keys[0] != "general.architecture" {
		t.Errorf("the first key is %s", f.keys[0])
	}
	if tmpl, _ := f.kvs["tokenizer.chat_template"].(string); !strings.Contains(tmpl, "<|im_start|>assistant\\n") {
		t.Errorf("chat template %q", tmpl)
	}
	toks, _ := f.kvs["tokenizer.ggml.tokens"].([]string)
	types, _ := f.kvs["tokenizer.ggml.token_type"].([]int32)
	merges, _ := f.kvs["tokenizer.ggml.merges"].([]string)
	if len(toks) != 151669 || len(types) != len(toks) || len(merges) != 151387 {
		t.Fatalf("%d tokens, %d types, %d merges; want 151669, 151669, 151387", len(toks), len(types), len(merges))
	}
	for id, w := range map[int]struct {
		tok string
		typ int32
	}{
		0: {"!", tokenNormal}, 220: {"Ġ", tokenNormal}, 151642: {toks[151642], tokenNormal},
		151643: {"<|endoftext|>", tokenControl}, 151644: {"<|im_start|>", tokenControl}, 151645: {"<|im_end|>", tokenControl},
		151657: {"<tool_call>", tokenUserDefined}, 151659: {"<|fim_prefix|>", tokenControl},
		151667: {"<think>", tokenUserDefined}, 151668: {"</think>", tokenUserDefined},
	} {
		if toks[id] != w.tok || types[id] != w.typ {
			t.Errorf("token %d = %q type %d, want %q type %d", id, toks[id], types[id], w.tok, w.typ)
		}
	}
	counts := map[int32]int{}
	for _, ty := range types {
		counts[ty]++
	}
	if counts[tokenNormal] != 151643 || counts[tokenControl] != 20 || counts[tokenUserDefined] != 6 {
		t.Errorf("token types %v: want 151643 normal, 20 control, 6 user-defined", counts)
	}
	if merges[0] != "Ġ Ġ" || merges[2] != "i n" {
		t.Errorf("merges start %q", merges[:3])
	}

	// Suppressed: the 1,448 tokens of Qwen3's that are not UTF-8 by themselves (the 128 lone
	// bytes 0x80-0xff among them) and the added tokens but <|im_end|> and <|endoftext|>.
	sup, _ := f.kvs["tokenizer.ggml.suppress_tokens"].([]int32)
	in := map[int32]bool{}
	for i, id := range sup {
		if i > 0 && id <= sup[i-1] {
			t.Fatalf("suppress_tokens not ascending at %d", i)
		}
		in[id] = true
	}
	if len(sup) != 1448+24 {
		t.Errorf("%d suppressed tokens, want 1472", len(sup))
	}
	for tok, want := range map[string]bool{"ä": true, "į": true, "Ģ": true, "!": false, "Ġthe": false, "é": true, "Ã©": false,
		"<|im_end|>": false, "<|endoftext|>": false, "<|im_start|>": true, "<think>": true, "<tool_call>": true} {
		if id := int32(v.ids[tok]); in[id] != want {
			t.Errorf("token %q (%d) suppressed %v, want %v", tok, id, in[id], want)
		}
	}
	lone := 0
	for b := 0x80; b <= 0xff; b++ {
		for r, bb := range byteLevel {
			if int(bb) == b && in[int32(v.ids[string(r)])] {
				lone++
			}
		}
	}
	if lone != 128 {
		t.Errorf("%d of the 128 lone bytes 0x80-0xff suppressed", lone)
	}
	none := tiny
	none.noSuppress = true
	if g, err := parseGGUF(model(t, none)); err != nil || g.kvs["tokenizer.ggml.suppress_tokens"] != nil {
		t.Errorf("-no-suppress wrote suppress_tokens (%v)", err)
	}
}

func TestF16(t *testing.T) {
	// Every half that is not a NaN comes back from its float32 exactly.
	for h := 0; h < 1<<16; h++ {
		f := f16ToF32(uint16(h))
		if f != f { // NaN
			if g := f32ToF16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x became %#04x", h, g)
			}
			continue
		}
		if g := f32ToF16(f); g != uint16(h) {
			t.Fatalf("%#04x (%g) came back as %#04x", h, f, g)
		}
	}
	// Between two adjacent halves, a float32 goes to the nearer, a tie to the even one.
	r := newRand(1, "f16")
	for i := 0; i < 200000; i++ {
		lo := uint16(r.next()) & 0x7bff // a finite half, not the largest
		if lo == 0x7bff {
			continue
		}
		a, b := f16ToF32(lo), f16ToF32(lo+1)
		frac := float32(r.next()>>40) / (1 << 24)
		x := a + (b-a)*frac
		if x < a || x > b {
			continue
		}
		want := lo
		switch da, db := x-a, b-x; {
		case db < da, db == da && lo&1 == 1:
			want = lo + 1
		}
		for _, s := range []uint16{0, 0x8000} {
			y := x
			if s != 0 {
				y = -x
			}
			if g := f32ToF16(y); g != want|s {
				t.Fatalf("%g (between %#04x and %#04x) became %#04x, want %#04x", y, lo, lo+1, g, want|s)
			}
		}
	}
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff},
		{65520, 0x7c00}, {65519.996, 0x7bff}, {1e6, 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{0x1p-24, 0x0001}, {0x1p-25, 0}, {0x1.000002p-25, 0x0001}, {0x1.8p-24, 0x0002}, {0x1p-14, 0x0400},
		{0x1.ff8p-15, 0x03ff}, {0x1.ffap-15, 0x03ff}, {0x1.ffcp-15, 0x0400}, {0x1.ffep-15, 0x0400}, {1e-10, 0}, {float32(math.NaN()), 0x7e00},
	} {
		if g := f32ToF16(c.f); g != c.h {
			t.Errorf("f32ToF16(%g) = %#04x, want %#04x", c.f, g, c.h)
		}
	}
}

func TestParseMergesStrings(t *testing.T) {
	m, err := parseMerges([]byte(`["a b", "Ġ t"]`))
	if err != nil || fmt.Sprint(m) != "[a b Ġ t]" {
		t.Fatalf("%q %v", m, err)
	}
	if _, err := parseMerges([]byte(`[["a b", "c"]]`)); err == nil {
		t.Fatal("a merge side holding a space was taken")
	}
}

func TestVocabWithoutChatTokens(t *testing.T) {
	v, err := parseVocab([]byte(`{"added_tokens": [], "pre_tokenizer": {"type": "ByteLevel"},
		"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(v.tokens, v.types, v.merges) != "[a b ab] [1 1 1] [a b]" {
		t.Errorf("%q %v %q", v.tokens, v.types, v.merges)
	}
	if _, err := metadata(tiny, v); err == nil || !strings.Contains(err.Error(), "<|im_end|>") {
		t.Errorf("metadata without an <|im_end|> token: %v", err)
	}
	if _, err := parseVocab([]byte(`{"model": {"type": "Unigram", "vocab": {}}}`)); err == nil {
		t.Error("a Unigram tokenizer was taken")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []config{
		{layers: 0, dim: 16, heads: 4, kvHeads: 2, ffn: 8, ctx: 8},
		{layers: 1, dim: 18, heads: 4, kvHeads: 2, ffn: 8, ctx: 8},
		{layers: 1, dim: 12, heads: 4, kvHeads: 2, ffn: 8, ctx: 8},
		{layers: 1, dim: 16, heads: 4, kvHeads: 3, ffn: 8, ctx: 8},
		{layers: 1, dim: 16, heads: 4, kvHeads: 2, ffn: 0, ctx: 8},
	} {
		if c.validate() == nil {
			t.Errorf("%+v taken", c)
		}
	}
	if err := tiny.validate(); err != nil {
		t.Error(err)
	}
}

func TestF32IsF16Unrounded(t *testing.T) {
	// -type f32 writes the same draws unrounded: each F16 weight is the F32 one rounded.
	c32 := tiny
	c32.typ = tensorF32
	b16, b32 := model(t, tiny), model(t, c32)
	f16, err := parseGGUF(b16)
	if err != nil {
		t.Fatal(err)
	}
	f32, err := parseGGUF(b32)
	if err != nil {
		t.Fatal(err)
	}
	if f32.kvs["general.file_type"] != uint32(0) || len(f32.tensors) != len(f16.tensors) {
		t.Fatalf("file_type %v, %d tensors", f32.kvs["general.file_type"], len(f32.tensors))
	}
	for i, a := range f16.tensors {
		b := f32.tensors[i]
		if a.name != b.name || len(a.dims) == 1 {
			continue
		}
		if b.typ != tensorF32 || b.bytes() != 2*a.bytes() {
			t.Fatalf("%s: type %d, %d bytes (F16: %d)", b.name, b.typ, b.bytes(), a.bytes())
		}
		d16, d32 := b16[f16.dataStart+int64(a.offset):], b32[f32.dataStart+int64(b.offset):]
		for j := int64(0); j < a.bytes()/2; j++ {
			w := math.Float32frombits(binary.LittleEndian.Uint32(d32[4*j:]))
			if h := binary.LittleEndian.Uint16(d16[2*j:]); h != f32ToF16(w) {
				t.Fatalf("%s[%d]: F16 %#04x, F32 %g rounds to %#04x", a.name, j, h, w, f32ToF16(w))
			}
		}
	}
}
