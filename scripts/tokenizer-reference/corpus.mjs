// The corpus the tokens package is held to: strings chosen for what breaks tokenizers
// (whitespace runs, newlines, digits, punctuation, contractions, CJK, emoji, accents and
// combining marks, code, markup, control and format characters, special-token look-alikes),
// random strings drawn from the same classes, and prompts of the kind loadcurve writes
// (vocabulary words, cold-cache nonces). Deterministic: the same file on every run.

// A seeded generator (mulberry32), so the random part is the same everywhere.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const handWritten = [
  // whitespace
  "", " ", "  ", "   ", "\t", "\t\t", " \t ", "a  b", "a   b", "a    b", " leading", "  leading two",
  "trailing ", "trailing  ", "a \t b", "tab\tseparated\tvalues", "mixed \t\t  runs  \t",
  // newlines
  "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r", "line one\nline two", "para one\n\npara two",
  "a \n b", "a  \n  b", "a\n \n b", " \n", "\n ", "x\n\n\n\n\n\n\ny", "end.\n", "\n\tindented",
  "windows\r\nline\r\nendings", "a\u000bb\u000cc", "a\u0085b", "a\u2028b\u2029c",
  // digits
  "0", "1", "12", "123", "1234", "12345", "123456", "1234567", "1234567890123", "3.14159",
  "1,000,000", "-42", "+7", "1e10", "0x1F", "2026-12-06", "12:30:45", "v1.2.3", "$100", "50%",
  "a1b2c3", "abc123def", "١٢٣٤", "٣٤٥", "५६७", "Ⅻ", "ⅻ", "½", "²³", "①②③", "１２３", "number 42 and 4242",
  // punctuation and contractions
  "Hello, world!", "Hello world.", "...", "?!", "!!!", "(x)", "[y]", "{z}", "--", "---", "a--b",
  "don't", "Don't", "DON'T", "it's", "IT'S", "they'll", "THEY'LL", "we've", "I'm", "you're", "he'd",
  "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'d", "'x", "''", "'", "rock'n'roll",
  "o'clock", "ma'am", "Y'all'd've", "'ſ", "it'ſ", "‘quoted’", "“double”", "«guillemets»", "—dash—",
  "a/b/c", "path/to/file", "a/\n", "x.\n\n", "?\n", "!\r\n", "end...\n", " /usr/bin", " ...", " ?!",
  "email@example.com", "https://example.com/a?b=c&d=e#f", "C:\\Windows\\System32",
  // letters of every case class
  "ABC", "abc", "Abc", "aBC", "ABCdef", "HTTPServer", "iPhone", "McDonald", "ǅemal", "ǈ", "ʰʲ",
  "ΑΒΓ αβγ", "Привет мир", "ПРИВЕТ", "Ελληνικά", "ß", "ẞ", "İstanbul", "ıi", "ﬁnance", "Kelvin K",
  // CJK and other scripts
  "日本語", "日本語のテキストです。", "中文字符", "简体中文和繁體中文", "한국어 텍스트", "カタカナ", "ひらがな",
  "漢字かなカナ", "ー", "一丁", "龥", "龦", "㐀", "\u3040\u309f\u30a0\u30ff", "中文 English 混合",
  "עברית", "العربية", "हिन्दी", "ภาษาไทย", "ქართული", "Tiếng Việt", "Ελληνικά και English",
  // accents, combining marks, normalization
  "café", "cafe\u0301", "naïve", "nai\u0308ve", "Ångström", "\u212bngstr\u00f6m", "\u2126", "résumé",
  "e\u0301\u0301", "\u0301", " \u0301", "a\u0301b", "\u1100\u1161", "가", "ﬁ", "x\u20dd", "क्षि",
  "ñ", "n\u0303", "Å", "A\u030a",
  // emoji
  "😀", "😀😀", " 😀", "👍🏽", "👨‍👩‍👧", "🇺🇸", "❤️", "I ❤️ NY", "🤖 robot", "🎉🎉🎉", "✅ done",
  // code
  "def f(x):\n    return x * 2\n", "for (int i = 0; i < n; i++) {\n\tsum += a[i];\n}",
  "if __name__ == \"__main__\":\n    main()", "SELECT * FROM t WHERE id = 1;", "x = {'a': 1, \"b\": [2, 3]}",
  "func main() {\n\tfmt.Println(\"hi\")\n}", "#include <stdio.h>", "a && b || !c", "x->y", "i++", "a!=b",
  "    indented four", "\t\ttwo tabs", "// comment", "/* block */", "<!-- html -->", "`code`", "```go\n```",
  "{\"key\": \"value\", \"n\": 12345}", "[1, 2, 3]", "$ ls -la | grep foo",
  // markup and special-token look-alikes
  "<b>bold</b>", "<table><tr><td>x</td></tr></table>", "<h1>Title</h1>", "<br>", "<s>", "</s>", "<unk>",
  "<pad>", "<bos>", "<eos>", "<mask>", "[multimodal]", "<start_of_turn>user\nhi<end_of_turn>",
  "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>user\nhello<|im_end|>",
  "<|start_header_id|>system<|end_header_id|>", "<｜begin▁of▁sentence｜>", "<｜fim▁hole｜>",
  "<tool_call>", "</tool_call>", "<think>", "text<s>text", " <s> ", "a</s>b", "<|endoftext|><|endoftext|>",
  "<0x0A>", "<0xFF>", "▁", "▁▁", "▁hello", "hello▁world", "Ġ", "Ċ", "##ing", "[UNK]", "[CLS]", "[SEP]",
  // control, format and unusual characters
  "\u0000", "a\u0000b", "\u0001", "\u001b[31mred\u001b[0m", "\u007f", "\u0080", "\u009f", "\u00a0",
  "a\u00a0b", "a\u00a0\u00a0b", "\u200b", "zero\u200bwidth", "\u200c\u200d", "\ufeffBOM", "\u2060",
  "\u3000", "a\u3000b", "a\u3000\u3000b", "\u2000\u2001\u2002", "a\u2009b", "a\u202fb", "a\u205fb",
  "\u1680", "\u180e", "\ue000", "\ufffd", "\ufffc", "\u{10ffff}", "\u{1d400}\u{1d401}", "\u{20000}",
  // long runs
  "a".repeat(200), "ab".repeat(100), " ".repeat(40), "\n".repeat(40), "\t".repeat(33), "1".repeat(40),
  "!".repeat(30), "日".repeat(60), "😀".repeat(20), "▁".repeat(40), "x" + " ".repeat(33) + "y",
  "word ".repeat(50), "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
  // prose
  "The quick brown fox jumps over the lazy dog.",
  "It was the best of times, it was the worst of times, it was the age of wisdom...",
  "Mr. Smith's car (a 1967 Mustang) cost $12,500 in 1999; today it's worth ~3x that!",
  "Q: What's 2+2?\nA: 4.\n\nQ: And 10/3?\nA: 3.333...",
];

// Characters and short strings by class; the random strings are drawn from them.
const pools = [
  [30, "abcdefghijklmnopqrstuvwxyz".split("")],
  [10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("")],
  [30, [" "]],
  [6, ["  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\u000b", "\u000c", "\r"]],
  [8, "0123456789".split("")],
  [8, ".,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`".split("")],
  [4, ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'LL", "'ſ", "n't"]],
  [4, ["é", "ñ", "ß", "Ø", "¿", "µ", "ſ", "K", "İ", "ǅ", "ʰ", "ー", "Ω", "Å"]],
  [3, ["\u0301", "\u0308", "\u0323", "\u0903", "\u20dd", "\u064b"]],
  [5, ["日", "本", "語", "中", "文", "あ", "カ", "ア", "한", "국", "ا", "ש", "ก", "ქ", "龥", "龦", "㐀", "\u3040", "\u30ff"]],
  [2, ["٣", "५", "Ⅻ", "½", "²", "①", "１"]],
  [3, ["—", "–", "“", "”", "«", "»", "、", "。", "！", "？", "・", "‘", "’", "…"]],
  [3, ["€", "©", "™", "∑", "√", "°", "←", "§", "¶", "♥", "★"]],
  [3, ["\u00a0", "\u0085", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e"]],
  [2, ["\u200b", "\u200c", "\u200d", "\ufeff", "\u2060", "\u00ad"]],
  [3, ["😀", "👍", "🏽", "🇺", "🇸", "❤", "\ufe0f", "🤖", "🎉"]],
  [1, ["\u0000", "\u0001", "\u001b", "\u007f", "\u0080", "\u009f", "\ue000", "\ufffd"]],
  [3, ["<s>", "</s>", "<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<bos>", "<start_of_turn>",
    "<b>", "</b>", "<table>", "[multimodal]", "<mask>", "<｜begin▁of▁sentence｜>", "<0x0A>", "▁", "Ġ", "##",
    "<tool_call>", "<think>", "<|eot_id|>", "<|begin_of_text|>"]],
];

// loadcurve's prompt vocabulary (workloads/workloads.go) and a cold-cache nonce's shape.
export const words = `the of and to in is was for on that with as by at from his
it an were are which this be has had or not first one their its new after but who they have
her she two been other when there all during into school time may years more most only over
city some world would where later up such used many can state about national out known
university united then made also between part through american year both under three include
group during well early area second film new while high could game him than won what life
back around family served people series day work last did these each since said much make
four great same small how very old long most way end just good own still city place come
music show side home man water next line best air land food light name open plan power point
play house run set case fact week month order book word form lead team line`.split(/\s+/);

function pick(r, weighted) {
  let total = 0;
  for (const [w] of weighted) total += w;
  let x = r() * total;
  for (const [w, items] of weighted) {
    if ((x -= w) < 0) return items[Math.floor(r() * items.length)];
  }
  const last = weighted[weighted.length - 1][1];
  return last[last.length - 1];
}

function hex(r, n) {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(r() * 16)];
  return s;
}

export function corpus() {
  const out = [...handWritten];
  const r = rng(20261206);
  for (let i = 0; i < 1200; i++) {
    const n = 1 + Math.floor(r() * 40);
    let s = "";
    for (let j = 0; j < n; j++) s += pick(r, pools);
    out.push(s);
  }
  // Prompts as loadcurve writes them: vocabulary words after single spaces, some behind a
  // cold-cache nonce (a run's, or a session's) or a shared prefix, some ending in filler words.
  for (let i = 0; i < 120; i++) {
    const n = 1 + Math.floor(r() * (i < 100 ? 60 : 1200));
    const ws = [];
    for (let j = 0; j < n; j++) ws.push(words[Math.floor(r() * words.length)]);
    let s = ws.join(" ");
    if (i % 3 === 1) s = `[run:${hex(r, 16)}] ` + s;
    if (i % 5 === 2) s = `[run:${hex(r, 16)}:s${1 + Math.floor(r() * 500)}] ` + s;
    if (i % 7 === 3) s += " the".repeat(1 + Math.floor(r() * 20));
    out.push(s);
  }
  return out;
}
