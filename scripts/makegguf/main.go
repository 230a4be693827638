// Command makegguf writes a small llama-architecture model as a GGUF (v3) file, with seeded
// random weights and Qwen3's real vocabulary, for llama.cpp's llama-server to serve: a real
// inference engine doing real work (tokenization, continuous batching, sampling over 151,669
// tokens, detokenization of byte-level pieces, streaming) on a model nothing had to download.
// What it generates is noise, a random token after another, which is all a load tester needs.
//
//	go run ./scripts/makegguf -out out/engine/model.gguf
//
// The vocabulary is the repository's own tokenizer fixture, measure/tokens/testdata/models/qwen3.json.xz
// (Qwen3's tokenizer.json, Apache 2.0), laid out as llama.cpp's converter lays out Qwen3's:
// tokenizer.ggml.model "gpt2", tokenizer.ggml.pre "qwen2" (Qwen2's and Qwen3's split pattern in
// src/llama-vocab.cpp), the tokens in their byte-level form, special added tokens and ones that
// look special (<|...|>) as CONTROL, the other added tokens (<think>, <tool_call>, ...) as
// USER_DEFINED, the merges, bos 151643 and pad 151643 (<|endoftext|>), eos 151645
// (<|im_end|>), no BOS added (Qwen3's config.json and tokenizer_config.json), and a ChatML chat
// template, so /v1/chat/completions works. llama-server then counts a prompt's tokens as
// loadcurve's --tokenizer does with that tokenizer.json, except where Unicode NFC changes the
// text (llama.cpp does not normalize) or the text holds "</s>" (llama.cpp makes Qwen3's plain
// "</s>" token a control token): README.md beside this file has the figures.
//
// tokenizer.ggml.suppress_tokens lists the tokens random weights must not generate (-no-suppress
// writes none): the 1,448 whose bytes are not UTF-8 by themselves, since llama-server answers a
// completion holding a stray byte with HTTP 500, and the added tokens but <|im_end|> and
// <|endoftext|>.
//
// The weights: every matrix F16 (or F32 with -type f32), uniform in ±0.02·√3 (standard
// deviation 0.02), the norms 1, drawn from a splitmix64 stream seeded by -seed and the tensor's
// name, so one seed gives the same bytes every time and on every machine. The output matrix is
// tied to the token embedding (no output.weight), as in small Qwen3 models, which keeps the file
// at about 2·151,669·dim bytes plus the layers.
//
// The defaults, 8 layers of dim 128 (4 heads of 32, 2 KV heads, FFN 512, context 8192) and
// seed 1, make a 48.7 MB file of 21.4M parameters, 19.4M of them the 151,669×128 embedding, which
// as the tied output matrix, with the sampler over the whole vocabulary, is most of the cost of a
// generated token. They were chosen by measuring llama-server (llama.cpp as node-llama-cpp 3.21.1
// bundles it, CPU) on this repository's 2-core machine, shared with other work (load average
// 2.4), with enginespeed beside this file: prompts of 100 to 300 tokens, 32 to 128 generated,
// `llama-server --parallel 4 -c 8192 --threads 1`, the engine's own timings:
//
//	one request at a time:  1.26 requests/s, prompt 4,700 tokens/s, 7.1 ms a generated token
//	four at a time:         2.64 requests/s (554 prompt, 207 generated tokens/s), 18 ms a token
//
// At load average 6.5, four at a time made 1.39 requests/s. Dim 512 (4 layers, FFN 1536) made
// 0.80 requests/s four at a time, dim 256 1.62, dim 128 with 4 layers 3.05. With --threads 2 and the cores busy with other work, ggml's spinning threads
// collapse (four at a time: 0.24 requests/s, 96 ms a token): use --threads 1 on a shared machine.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"

	"github.com/loadcurve/loadcurve/scripts/makegguf/tokfile"
)

// The Qwen3 chat format, ChatML: each message as <|im_start|>role\ncontent<|im_end|>\n, then
// <|im_start|>assistant\n to generate. A content given as parts (OpenAI's typed content) has its
// text parts joined.
const chatTemplate = `{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' -}}
{%- if message['content'] is string -%}
{{- message['content'] -}}
{%- else -%}
{%- for part in message['content'] -%}
{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>' + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- endif -%}`

// config is the model's shape.
type config struct {
	layers, dim, heads, kvHeads, ffn, ctx int
	seed                                  uint64
	typ                                   tensorType
	ropeBase, rmsEps                      float32
	noSuppress                            bool // write no tokenizer.ggml.suppress_tokens
}

func (c config) validate() error {
	switch {
	case c.layers < 1 || c.layers > 512:
		return fmt.Errorf("-layers %d: 1 to 512", c.layers)
	case c.dim < 2 || c.heads < 1 || c.kvHeads < 1 || c.ffn < 1 || c.ctx < 1:
		return errors.New("-dim, -heads, -kv-heads, -ffn and -ctx must be positive (dim at least 2)")
	case c.dim%c.heads != 0:
		return fmt.Errorf("-dim %d is not a multiple of -heads %d", c.dim, c.heads)
	case (c.dim/c.heads)%2 != 0:
		return fmt.Errorf("the head size %d (dim/heads) is odd: RoPE rotates pairs", c.dim/c.heads)
	case c.heads%c.kvHeads != 0:
		return fmt.Errorf("-heads %d is not a multiple of -kv-heads %d", c.heads, c.kvHeads)
	}
	return nil
}

func main() {
	out := flag.String("out", "out/engine/model.gguf", "the GGUF file to write")
	tok := flag.String("tokenizer", "measure/tokens/testdata/models/qwen3.json.xz", "the byte-level BPE tokenizer.json (or .json.xz) whose vocabulary the model gets; a relative path not found here is taken from the module's root")
	seed := flag.Uint64("seed", 1, "the seed of the weights")
	layers := flag.Int("layers", 8, "transformer blocks")
	dim := flag.Int("dim", 128, "embedding size")
	heads := flag.Int("heads", 4, "attention heads")
	kvHeads := flag.Int("kv-heads", 2, "key-value heads (grouped-query attention)")
	ffn := flag.Int("ffn", 512, "feed-forward size")
	ctx := flag.Int("ctx", 8192, "the context length the model declares (llama-server's -c is shared among its slots)")
	typ := flag.String("type", "f16", "the matrices' type: f16 or f32 (norms are always f32)")
	noSuppress := flag.Bool("no-suppress", false, "let the model generate every token, stray bytes and chat markup included (llama-server then answers many completions with HTTP 500)")
	writeTok := flag.Bool("write-tokenizer", true, "also write the tokenizer.json, decompressed, beside -out (a model directory as Hugging Face lays it out, for loadcurve --tokenizer)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	c := config{layers: *layers, dim: *dim, heads: *heads, kvHeads: *kvHeads, ffn: *ffn, ctx: *ctx,
		seed: *seed, typ: tensorF16, ropeBase: 1e6, rmsEps: 1e-6, noSuppress: *noSuppress}
	switch *typ {
	case "f16":
	case "f32":
		c.typ = tensorF32
	default:
		fail(2, fmt.Errorf("-type %q: f16 or f32", *typ))
	}
	if err := c.validate(); err != nil {
		fail(2, err)
	}
	data, err := tokfile.Read(findTokenizer(*tok))
	if err != nil {
		fail(1, err)
	}
	v, err := parseVocab(data)
	if err != nil {
		fail(1, fmt.Errorf("%s: %w", *tok, err))
	}
	n, sum, err := writeFile(*out, c, v)
	if err != nil {
		fail(1, err)
	}
	fmt.Fprintf(os.Stderr, "makegguf: wrote %s: %d bytes (%.1f MB), %d parameters, %d tokens, sha256 %s\n",
		*out, n, float64(n)/1e6, c.parameters(len(v.tokens)), len(v.tokens), sum)
	if *writeTok {
		p := filepath.Join(filepath.Dir(*out), "tokenizer.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			fail(1, err)
		}
		fmt.Fprintf(os.Stderr, "makegguf: wrote %s (the vocabulary's tokenizer.json, for loadcurve --tokenizer)\n", p)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "makegguf:", err)
	os.Exit(code)
}

// writeFile writes the model to path through a temporary file in its directory, renamed into
// place when complete, and returns its size and sha256.
func writeFile(path string, c config, v *vocab) (int64, string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".makegguf-*")
	if err != nil {
		return 0, "", err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	h := sha256.New()
	n, err := writeModel(io.MultiWriter(f, h), c, v)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return 0, "", fmt.Errorf("write %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// id returns the id of a token the vocabulary must have.
func (v *vocab) id(tok string) (uint32, error) {
	id, ok := v.ids[tok]
	if !ok {
		return 0, fmt.Errorf("the vocabulary has no %s", tok)
	}
	return uint32(id), nil
}

// metadata is the model's key-value pairs: the keys llama.cpp's loader reads for the llama
// architecture (src/llama-arch.cpp names them, src/llama-model.cpp and src/models/llama.cpp read
// them) and for a gpt2 tokenizer (src/llama-vocab.cpp).
func metadata(c config, v *vocab) ([]kv, error) {
	eos, err := v.id("<|im_end|>")
	if err != nil {
		return nil, err
	}
	eot, err := v.id("<|endoftext|>")
	if err != nil {
		return nil, err
	}
	u := func(n int) uint32 { return uint32(n) }
	kvs := []kv{
		{"general.architecture", "llama"},
		{"general.name", fmt.Sprintf("loadcurve random llama %dx%d seed %d", c.layers, c.dim, c.seed)},
		{"general.description", "seeded random weights with Qwen3's vocabulary, written by loadcurve's scripts/makegguf; generates noise"},
		{"general.file_type", map[tensorType]uint32{tensorF32: 0, tensorF16: 1}[c.typ]}, // LLAMA_FTYPE_ALL_F32, LLAMA_FTYPE_MOSTLY_F16
		{"general.alignment", uint32(ggufAlignment)},
		{"llama.vocab_size", u(len(v.tokens))},
		{"llama.context_length", u(c.ctx)},
		{"llama.embedding_length", u(c.dim)},
		{"llama.block_count", u(c.layers)},
		{"llama.feed_forward_length", u(c.ffn)},
		{"llama.attention.head_count", u(c.heads)},
		{"llama.attention.head_count_kv", u(c.kvHeads)},
		{"llama.rope.dimension_count", u(c.dim / c.heads)},
		{"llama.rope.freq_base", c.ropeBase},
		{"llama.attention.layer_norm_rms_epsilon", c.rmsEps},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "qwen2"},
		{"tokenizer.ggml.tokens", v.tokens},
		{"tokenizer.ggml.token_type", v.types},
		{"tokenizer.ggml.merges", v.merges},
		{"tokenizer.ggml.bos_token_id", eot},
		{"tokenizer.ggml.eos_token_id", eos},
		{"tokenizer.ggml.padding_token_id", eot},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.chat_template", chatTemplate},
	}
	if !c.noSuppress {
		kvs = append(kvs, kv{"tokenizer.ggml.suppress_tokens", v.suppressed("<|im_end|>", "<|endoftext|>")})
	}
	return kvs, nil
}

// tensors is the model's tensors in llama.cpp's names, dims in ggml's order (a row's length
// first): token_embd {dim, vocab}, then each block's attn_norm, attn_q {dim, dim}, attn_k and
// attn_v {dim, kv_dim}, attn_output {dim, dim}, ffn_norm, ffn_gate and ffn_up {dim, ffn},
// ffn_down {ffn, dim}, then output_norm. No output.weight: llama.cpp then uses token_embd.
func tensors(c config, nVocab int) []tensor {
	d, kvd, ff := int64(c.dim), int64(c.dim/c.heads*c.kvHeads), int64(c.ffn)
	mat := func(name string, dims ...int64) tensor {
		r := newRand(c.seed, name)
		return tensor{name: name, dims: dims, typ: c.typ, fill: func(int64) float32 { return r.weight() }}
	}
	norm := func(name string) tensor {
		return tensor{name: name, dims: []int64{d}, typ: tensorF32, fill: func(int64) float32 { return 1 }}
	}
	ts := []tensor{mat("token_embd.weight", d, int64(nVocab))}
	for i := range c.layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			norm(b+"attn_norm.weight"),
			mat(b+"attn_q.weight", d, d),
			mat(b+"attn_k.weight", d, kvd),
			mat(b+"attn_v.weight", d, kvd),
			mat(b+"attn_output.weight", d, d),
			norm(b+"ffn_norm.weight"),
			mat(b+"ffn_gate.weight", d, ff),
			mat(b+"ffn_up.weight", d, ff),
			mat(b+"ffn_down.weight", ff, d),
		)
	}
	return append(ts, norm("output_norm.weight"))
}

// parameters counts the model's weights.
func (c config) parameters(nVocab int) int64 {
	var n int64
	for _, t := range tensors(c, nVocab) {
		n += t.elements()
	}
	return n
}

func writeModel(w io.Writer, c config, v *vocab) (int64, error) {
	kvs, err := metadata(c, v)
	if err != nil {
		return 0, err
	}
	return writeGGUF(w, kvs, tensors(c, len(v.tokens)))
}

// rng is splitmix64 (Steele, Lea and Flood, 2014): a fixed algorithm, so a seed's weights do
// not depend on Go's version.
type rng struct{ s uint64 }

// newRand seeds a stream for one tensor from the seed and the tensor's name, so each tensor's
// values depend on nothing else.
func newRand(seed uint64, name string) *rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := &rng{s: seed ^ h.Sum64()}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// weightScale is the half-width of the weights' uniform distribution: standard deviation 0.02.
const weightScale = 0.02 * 1.7320508075688772

// weight draws a weight uniform in [-weightScale, weightScale).
func (r *rng) weight() float32 {
	u := float32(r.next()>>40) / (1 << 24) // [0, 1), 24 bits: exact in a float32
	return (2*u - 1) * weightScale
}
