// Times the references on the job loadcurve's BenchmarkCount times (tokens/bench_test.go):
// counting prompts of 1,024 vocabulary words, one prompt at a time, for each model family.
// Hugging Face tokenizers (Rust, through its Node binding) and tokenizers.js (the JS port).
// Usage: node bench.mjs [seconds per family, default 3]
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as JSTokenizer } from "@huggingface/tokenizers";
import { words } from "./corpus.mjs";
import { families } from "./families.mjs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");
const seconds = Number(process.argv[2] ?? 3);

let seed = 7;
const r = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
const prompts = [];
for (let i = 0; i < 64; i++) {
  const ws = [];
  for (let j = 0; j < 1024; j++) ws.push(words[Math.floor(r() * words.length)]);
  prompts.push(ws.join(" "));
}

async function time(count) {
  let tokens = 0, n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(seconds * 1e9);
  while (process.hrtime.bigint() < end) {
    tokens += await count(prompts[n++ % prompts.length]);
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return { tokensPerSecond: tokens / s, msPerPrompt: (1000 * s) / n };
}

console.log("family\trust tokens/s\trust ms/prompt\tjs tokens/s\tjs ms/prompt");
for (const [fam, pkg] of Object.entries(families)) {
  const dir = join(import.meta.dirname, "node_modules", pkg, "models");
  const rust = Tokenizer.fromFile(join(dir, "tokenizer.json"));
  const js = new JSTokenizer(JSON.parse(readFileSync(join(dir, "tokenizer.json"))), JSON.parse(readFileSync(join(dir, "tokenizer_config.json"))));
  const a = await time(async (p) => (await rust.encode(p, null, { addSpecialTokens: false })).getIds().length);
  const b = await time(async (p) => js.encode(p, { add_special_tokens: false }).ids.length);
  console.log(`${fam}\t${a.tokensPerSecond.toFixed(0)}\t${a.msPerPrompt.toFixed(3)}\t${b.tokensPerSecond.toFixed(0)}\t${b.msPerPrompt.toFixed(3)}`);
}
