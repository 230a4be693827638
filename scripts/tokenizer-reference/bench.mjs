// Times the references on the prompts loadcurve sizes: for each model family, the prompts in
// DIR/FAMILY.jsonl (as `loadcurve workload --tokenizer FAMILY.json --out` writes them) counted
// one at a time with Hugging Face tokenizers (Rust, through its Node binding) and tokenizers.js
// (the JS port), for SECONDS each. Prints tokens/s; bench.sh runs it beside loadcurve's
// BenchmarkCountPrompts on the same prompts.
// Usage: node bench.mjs DIR [SECONDS]
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as JSTokenizer } from "@huggingface/tokenizers";
import { families } from "./families.mjs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");
const dir = process.argv[2];
const seconds = Number(process.argv[3] ?? 3);

async function time(prompts, count) {
  let tokens = 0, n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() < end) tokens += await count(prompts[n++ % prompts.length]);
  return tokens / (Number(process.hrtime.bigint() - t0) / 1e9);
}

console.log("family\trust tokens/s\tjs tokens/s");
for (const [fam, pkg] of Object.entries(families)) {
  const models = join(import.meta.dirname, "node_modules", pkg, "models");
  const prompts = readFileSync(join(dir, `${fam}.jsonl`), "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l).prompt);
  const rust = Tokenizer.fromFile(join(models, "tokenizer.json"));
  const js = new JSTokenizer(JSON.parse(readFileSync(join(models, "tokenizer.json"))), JSON.parse(readFileSync(join(models, "tokenizer_config.json"))));
  const a = await time(prompts, async (p) => (await rust.encode(p, null, { addSpecialTokens: false })).getIds().length);
  const b = await time(prompts, async (p) => js.encode(p, { add_special_tokens: false }).ids.length);
  console.log(`${fam}\t${a.toFixed(0)}\t${b.toFixed(0)}`);
}
