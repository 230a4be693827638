// Small tokenizer.json files written by hand, one per part of the format that the model
// families' files leave untested (Unigram, WordPiece, WordLevel, every normalizer, every
// pre-tokenizer and split behaviour, added-token options). Most use a character model: a BPE
// without merges whose vocabulary is every character alone and after "##" (its
// continuing_subword_prefix), so the ids spell out exactly the pieces the normalizer and
// pre-tokenizer made, the first character of each piece told apart from the others.

const base = (over) => ({
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [],
  normalizer: null,
  pre_tokenizer: null,
  post_processor: null,
  decoder: null,
  ...over,
});

function byteLevelChars() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return cs.map((c) => String.fromCodePoint(c));
}

function alphabet(corpus) {
  const set = new Set(["▁", " ", "Ġ", "Ċ", "#", ...byteLevelChars()]);
  for (const s of corpus) {
    for (const f of ["NFC", "NFD", "NFKC", "NFKD"]) {
      for (const c of s.normalize(f)) set.add(c);
      for (const c of s.normalize(f).toLowerCase()) set.add(c);
    }
  }
  return [...set].sort();
}

function charModel(chars, extra = {}) {
  const vocab = { "[UNK]": 0 };
  let id = 1;
  for (const c of chars) {
    vocab[c] = id++;
    vocab["##" + c] = id++;
  }
  return { type: "BPE", dropout: null, unk_token: "[UNK]", continuing_subword_prefix: "##",
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [], ...extra };
}

const added = (id, content, o = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
  normalized: false, special: false, ...o });

const split = (pattern, behavior, invert = false) => ({ type: "Split", pattern, behavior, invert });

export function components(corpus, words) {
  const chars = alphabet(corpus);
  const model = charModel(chars);
  const next = Object.keys(model.vocab).length;
  const out = {};
  const c = (name, over) => { out[name] = base({ model, ...over }); };

  // Normalizers, each alone and in sequence.
  for (const t of ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt", "ByteLevel"]) {
    c(`norm-${t.toLowerCase()}`, { normalizer: { type: t } });
  }
  c("norm-strip", { normalizer: { type: "Strip", strip_left: true, strip_right: true } });
  c("norm-lstrip", { normalizer: { type: "Strip", strip_left: true, strip_right: false } });
  c("norm-replace-regex", { normalizer: { type: "Replace", pattern: { Regex: "\\s+" }, content: "_" } });
  c("norm-replace-string", { normalizer: { type: "Replace", pattern: { String: "ab" }, content: "X" } });
  c("norm-sentencepiece", { normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" },
    { type: "Replace", pattern: { String: " " }, content: "▁" }] } });
  c("norm-bert", { normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true,
    strip_accents: null, lowercase: true } });
  c("norm-bert-cased", { normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: false,
    strip_accents: false, lowercase: false } });
  c("norm-sequence", { normalizer: { type: "Sequence", normalizers: [{ type: "NFKD" }, { type: "StripAccents" },
    { type: "Lowercase" }, { type: "Strip", strip_left: false, strip_right: true }] } });

  // Pre-tokenizers.
  const p = (name, pre_tokenizer) => c(`pre-${name}`, { pre_tokenizer });
  p("whitespace", { type: "Whitespace" });
  p("whitespacesplit", { type: "WhitespaceSplit" });
  p("bert", { type: "BertPreTokenizer" });
  p("punctuation", { type: "Punctuation", behavior: "Isolated" });
  p("punctuation-contiguous", { type: "Punctuation", behavior: "Contiguous" });
  p("digits", { type: "Digits", individual_digits: false });
  p("digits-individual", { type: "Digits", individual_digits: true });
  p("delimiter", { type: "CharDelimiterSplit", delimiter: "-" });
  p("metaspace-always", { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true });
  p("metaspace-first", { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: true });
  p("metaspace-never-nosplit", { type: "Metaspace", replacement: "▁", prepend_scheme: "never", split: false });
  p("metaspace-first-nosplit", { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: false });
  p("bytelevel-regex", { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true });
  p("bytelevel-plain", { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false });
  for (const b of ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]) {
    p(`split-string-${b.toLowerCase()}`, split({ String: " " }, b));
    p(`split-regex-${b.toLowerCase()}`, split({ Regex: "[,.!?]+|\\s" }, b));
    p(`split-invert-${b.toLowerCase()}`, split({ Regex: "\\p{L}+|\\p{N}" }, b, true));
  }
  p("split-lookaround", split({ Regex: "(?<=\\d)(?=(\\d{3})+(?!\\d))|\\s+(?!\\S)" }, "Isolated"));
  p("sequence", { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "Punctuation", behavior: "Isolated" },
    { type: "Digits", individual_digits: true }] });

  // Added tokens: overlapping contents (leftmost-longest), strip and single-word options,
  // normalized contents matched after a lowercasing normalizer, special or not.
  const toks = [
    added(next, "<a>", { special: true }), added(next + 1, "<ab>", { special: true }), added(next + 2, "ab"),
    added(next + 3, "[L]", { lstrip: true }), added(next + 4, "[R]", { rstrip: true }),
    added(next + 5, "[LR]", { lstrip: true, rstrip: true }), added(next + 6, "word", { single_word: true }),
    added(next + 7, "hello", { normalized: true }), added(next + 8, "<s>", { special: true }),
    added(next + 9, "the", { normalized: true, single_word: true }), added(next + 10, "日本"),
  ];
  c("added", { added_tokens: toks, normalizer: { type: "Lowercase" }, pre_tokenizer: { type: "WhitespaceSplit" } });
  c("added-metaspace", { added_tokens: toks, pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: true } });
  c("added-bytelevel", { added_tokens: toks, pre_tokenizer: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true } });

  // Models other than BPE over characters.
  out["model-end-of-word"] = base({ model: { ...charModel(chars), continuing_subword_prefix: null, end_of_word_suffix: "</w>",
    vocab: Object.fromEntries([["[UNK]", 0], ...chars.flatMap((ch, i) => [[ch, 2 * i + 1], [ch + "</w>", 2 * i + 2]])]) },
    pre_tokenizer: { type: "WhitespaceSplit" } });
  out["model-fuse-unk"] = base({ model: { ...charModel(chars.filter((ch) => ch.codePointAt(0) < 0x80)), fuse_unk: true },
    pre_tokenizer: { type: "WhitespaceSplit" } });
  out["model-byte-fallback"] = base({ model: byteFallbackBPE(words), normalizer: { type: "Sequence", normalizers: [
    { type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] } });
  out["model-unigram"] = base({ model: unigram(words, true), pre_tokenizer: { type: "Metaspace", replacement: "▁",
    prepend_scheme: "always", split: true } });
  out["model-unigram-nofallback"] = base({ model: unigram(words, false), normalizer: { type: "NFKC" },
    pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: false } });
  out["model-wordpiece"] = base({ model: wordpiece(words), normalizer: { type: "BertNormalizer", clean_text: true,
    handle_chinese_chars: true, strip_accents: null, lowercase: true }, pre_tokenizer: { type: "BertPreTokenizer" },
    added_tokens: [added(0, "[UNK]", { special: true }), added(1, "[CLS]", { special: true }), added(2, "[SEP]", { special: true }),
      added(3, "[MASK]", { special: true, lstrip: true })] });
  out["model-wordlevel"] = base({ model: { type: "WordLevel", unk_token: "[UNK]",
    vocab: Object.fromEntries([["[UNK]", 0], ...[...new Set(words)].map((w, i) => [w, i + 1])]) },
    pre_tokenizer: { type: "Whitespace" } });
  return out;
}

// A SentencePiece-style BPE: the vocabulary's words after ▁, every ASCII character, the 256
// byte tokens, and merges that build each word from its characters left to right.
function byteFallbackBPE(words) {
  const vocab = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  let id = 3;
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = id++;
  const add = (t) => { if (!(t in vocab)) vocab[t] = id++; };
  add("▁");
  for (let b = 0x20; b < 0x7f; b++) add(String.fromCharCode(b));
  const merges = [];
  const seen = new Set();
  for (const w of [...new Set(words)]) {
    let cur = "▁";
    for (const ch of w) {
      const m = `${cur} ${ch}`;
      cur += ch;
      add(cur);
      if (!seen.has(m)) { seen.add(m); merges.push(m); }
    }
  }
  return { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
    fuse_unk: true, byte_fallback: true, vocab, merges };
}

// A Unigram model: the words after ▁ and their pieces, scored so that the best segmentation
// is not always the longest piece; ASCII characters alone; with byteFallback, the 256 bytes.
function unigram(words, byteFallback) {
  const vocab = [["<unk>", 0], ["<s>", 0], ["</s>", 0]];
  if (byteFallback) {
    for (let b = 0; b < 256; b++) vocab.push([`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, 0]);
  }
  const seen = new Set(vocab.map((v) => v[0]));
  let k = 0;
  const add = (piece, score) => { if (!seen.has(piece)) { seen.add(piece); vocab.push([piece, score]); } };
  for (const w of [...new Set(words)]) {
    const s = "▁" + w;
    add(s, -3 - (k++ % 7) * 0.5);
    for (let i = 0; i < s.length; i++) {
      for (let j = i + 2; j <= Math.min(s.length, i + 4); j++) add(s.slice(i, j), -4 - ((i * 7 + j * 3 + k) % 9) * 0.7);
    }
  }
  add("▁", -2);
  for (let b = 0x21; b < 0x7f; b++) add(String.fromCharCode(b), -8 - (b % 5));
  return { type: "Unigram", unk_id: 0, vocab, byte_fallback: byteFallback };
}

// A WordPiece vocabulary: the words, their tails after "##", and every ASCII character.
function wordpiece(words) {
  const vocab = { "[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[MASK]": 3 };
  let id = 4;
  const add = (t) => { if (!(t in vocab)) vocab[t] = id++; };
  for (let b = 0x21; b < 0x7f; b++) { add(String.fromCharCode(b).toLowerCase()); add("##" + String.fromCharCode(b).toLowerCase()); }
  for (const w of [...new Set(words)]) {
    add(w);
    for (let i = 1; i < w.length - 1; i++) add("##" + w.slice(i));
    if (w.length > 3) add(w.slice(0, 3));
  }
  for (const ch of "日本語中文éèñ") add(ch);
  return { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 20, vocab };
}
